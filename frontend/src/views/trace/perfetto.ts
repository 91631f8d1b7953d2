// "Open in Perfetto": opens https://ui.perfetto.dev in a new tab and hands it the trace
// file through Perfetto's postMessage protocol ("Deep linking to the Perfetto UI"): the
// opened page registers its listener late, so we post 'PING' until it answers 'PONG',
// then post {perfetto: {buffer, title, fileName}}. Only on the user's click: it needs
// internet and sends the trace to that page (which opens it locally in the browser).
// Offline the opened tab shows the browser's error page and never answers: we give up
// PONG_TIMEOUT_MS after the download ended, with an error that says so.

export const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';
export const PING_EVERY_MS = 50;
export const PONG_TIMEOUT_MS = 20_000;

/** Perfetto's page never answered: offline, blocked, or too slow to load. */
export class PerfettoTimeout extends Error {
  constructor() {
    super('Perfetto did not answer (no internet, or the page was blocked)');
    this.name = 'PerfettoTimeout';
  }
}

export interface MessageTarget {
  postMessage: (message: unknown, targetOrigin: string) => void;
  readonly closed: boolean;
}

export interface MessageSource {
  addEventListener: (type: 'message', fn: (event: MessageEvent) => void) => void;
  removeEventListener: (type: 'message', fn: (event: MessageEvent) => void) => void;
}

export interface PerfettoMessage {
  perfetto: { buffer: ArrayBuffer; title: string; fileName?: string };
}

export function perfettoMessage(
  buffer: ArrayBuffer,
  title: string,
  fileName?: string,
): PerfettoMessage {
  return { perfetto: fileName ? { buffer, title, fileName } : { buffer, title } };
}

/** Resolves once `target` answers 'PONG' to our 'PING's; rejects on timeout or close. */
export function waitForPong(
  target: MessageTarget,
  source: MessageSource,
  origin = PERFETTO_ORIGIN,
  timeoutMs = PONG_TIMEOUT_MS,
  everyMs = PING_EVERY_MS,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const state: { timer?: ReturnType<typeof setInterval> } = {};
    const done = (error?: Error): void => {
      clearInterval(state.timer);
      source.removeEventListener('message', onMessage);
      if (error) reject(error);
      else resolve();
    };
    function onMessage(event: MessageEvent): void {
      if (event.source !== (target as unknown) || event.data !== 'PONG') return;
      done();
    }
    source.addEventListener('message', onMessage);
    const ping = (): void => {
      if (target.closed) {
        done(new Error('the Perfetto tab was closed'));
        return;
      }
      if (Date.now() - started > timeoutMs) {
        done(new PerfettoTimeout());
        return;
      }
      target.postMessage('PING', origin);
    };
    state.timer = setInterval(ping, everyMs);
    ping();
  });
}

export interface PerfettoWindow extends MessageTarget {
  close: () => void;
}

/** Where openInPerfetto opens and listens; the page's window unless a test says. */
export interface PerfettoHost {
  open: () => PerfettoWindow | null;
  source: MessageSource;
  timeoutMs: number;
  everyMs: number;
}

const browserHost = (): PerfettoHost => ({
  open: () => window.open(PERFETTO_ORIGIN, '_blank'),
  source: window,
  timeoutMs: PONG_TIMEOUT_MS,
  everyMs: PING_EVERY_MS,
});

/**
 * Opens Perfetto and posts the trace. Call from a click handler: the tab is opened at
 * once (before the download), so popup blockers allow it. The wait for Perfetto starts
 * when the download ends, so a long download does not eat its time.
 */
export async function openInPerfetto(
  download: () => Promise<ArrayBuffer>,
  title: string,
  fileName: string,
  onStatus: (text: string) => void,
  host: PerfettoHost = browserHost(),
): Promise<void> {
  const tab = host.open();
  if (!tab) throw new Error('the browser blocked the new tab: allow pop-ups for TensorBoard');
  onStatus('Downloading the trace…');
  let data: ArrayBuffer;
  try {
    data = await download();
  } catch (error) {
    tab.close();
    throw error;
  }
  onStatus('Waiting for Perfetto…');
  await waitForPong(tab, host.source, PERFETTO_ORIGIN, host.timeoutMs, host.everyMs);
  tab.postMessage(perfettoMessage(data, title, fileName), PERFETTO_ORIGIN);
  onStatus('Sent to Perfetto');
}
