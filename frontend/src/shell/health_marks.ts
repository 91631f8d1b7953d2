// The side bar's health marks: before each worker whose trace has been opened (ok,
// warnings or errors, from the `health` route, asked once per worker-span after it loads;
// the route is cached with the trace) and before each run, its worst opened trace's. A
// worker not opened yet has no mark: its trace is not read just to mark it.

import { isAbort, type ApiClient } from '../api/client';
import type { HealthView } from '../api/types';
import type { Selection } from './selection';

type HealthStatus = HealthView['status'];

/** The mark goes before the name: a select shows the start of its text, and the long
 *  worker names are the ones cut at 1280 px. */
const SYMBOL: Record<HealthStatus, string> = { ok: '✓', warnings: '!', errors: '✕' };
const WORDS: Record<HealthStatus, string> = {
  ok: 'ok',
  warnings: 'warnings',
  errors: 'errors',
};
const RANK: Record<HealthStatus, number> = { ok: 0, warnings: 1, errors: 2 };

function keyOf(sel: Selection): string {
  return JSON.stringify([sel.run, sel.worker, sel.span]);
}

/** "✕ worker0 · errors": the option's text with the mark before and after it. */
export function markedText(text: string, status: HealthStatus): string {
  return `${SYMBOL[status]} ${text} · ${WORDS[status]}`;
}

export class HealthMarks {
  private readonly known = new Map<string, HealthStatus>();

  /** `changed` runs when a worker's health becomes known (to draw the marks again). */
  constructor(private readonly changed: () => void) {}

  /** Asks the route for this worker-span's health, once. */
  async fetch(api: ApiClient, sel: Selection, signal: AbortSignal): Promise<void> {
    if (this.known.has(keyOf(sel))) return;
    try {
      const view = await api.getReady('health', { ...sel }, signal);
      this.known.set(keyOf(sel), view.status);
      this.changed();
    } catch (error) {
      if (!isAbort(error)) console.warn('kinetoscope: trace health unavailable', error);
    }
  }

  /** Marks the Workers selector's options of the selection's run and span (a failed
   *  worker keeps its own note), and the Runs selector's; `data-health` holds the status. */
  label(select: HTMLSelectElement, runs: HTMLSelectElement, sel: Selection | null): void {
    this.labelRuns(runs);
    if (!sel) return;
    for (const option of Array.from(select.options)) {
      const status = this.known.get(keyOf({ ...sel, worker: option.value }));
      if (!status || option.text.includes(' — ')) continue;
      mark(option, status);
    }
    titleWithChoice(select);
  }

  /** Marks the Runs selector's options: a run's worst status of its opened traces. */
  private labelRuns(select: HTMLSelectElement): void {
    const worst = new Map<string, HealthStatus>();
    for (const [key, status] of this.known) {
      const [run] = JSON.parse(key) as [string];
      const seen = worst.get(run);
      if (seen === undefined || RANK[status] > RANK[seen]) worst.set(run, status);
    }
    for (const option of Array.from(select.options)) {
      const status = worst.get(option.value);
      if (status) mark(option, status);
    }
    titleWithChoice(select);
  }
}

function mark(option: HTMLOptionElement, status: HealthStatus): void {
  option.text = markedText(option.text, status);
  option.dataset.health = status;
  option.title = `Trace health: ${WORDS[status]} (see the Overview's "Trace health")`;
}

/** The chosen option's whole text as the select's tooltip (a long name is cut). */
function titleWithChoice(select: HTMLSelectElement): void {
  select.title = select.selectedOptions[0]?.text ?? '';
}
