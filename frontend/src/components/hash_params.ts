// View-level state in TensorBoard's URL, next to the shell's own keys. TensorBoard keeps
// its state in the top page's hash as "#<tab>&key=value&..." and reserves keys
// "p.<plugin>.<key>" for plugins; the shell owns p.kinetoscope.{run,worker,span,view}
// (shell/url_state.ts). A view stores its own keys there, namespaced by the view id
// ("p.kinetoscope.memory.device=GPU0"), with the same rules: URI-encoded pairs, every
// other item kept in place, history.replaceState (no history entry, no hashchange).

export const PLUGIN_NAME = 'kinetoscope';
/** The prefix TensorBoard reserves for our keys in its hash. */
export const PREFIX = `p.${PLUGIN_NAME}.`;

export type HashParams = Record<string, string>;
/** Values to write: a key set to undefined is removed. */
export type HashUpdate = Record<string, string | undefined>;

export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function items(hash: string): string[] {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  return body ? body.split('&').filter((raw) => raw !== '') : [];
}

/** Our key ("memory.device") of a hash item, or undefined for any other item. */
function ownKey(raw: string): string | undefined {
  const parts = raw.split('=');
  if (parts.length !== 2) return undefined;
  const key = safeDecode(parts[0] ?? '');
  return key.startsWith(PREFIX) ? key.slice(PREFIX.length) : undefined;
}

/** The values of `keys` (without the "p.kinetoscope." prefix) found in a hash. */
export function readHashParams(hash: string, keys: readonly string[]): HashParams {
  const out: HashParams = {};
  for (const raw of items(hash)) {
    const key = ownKey(raw);
    if (key === undefined || !keys.includes(key) || key in out) continue;
    const value = safeDecode(raw.split('=')[1] ?? '');
    if (value !== '') out[key] = value;
  }
  return out;
}

/**
 * The hash with the keys of `update` set (in place when present, else appended in the
 * order given) or removed (undefined); every other item is kept as it is. With "#".
 */
export function writeHashParams(hash: string, update: HashUpdate): string {
  const out: string[] = [];
  const written = new Set<string>();
  for (const raw of items(hash)) {
    const key = ownKey(raw);
    if (key !== undefined && key in update) {
      const value = update[key];
      if (value !== undefined && !written.has(key)) {
        out.push(`${encodeURIComponent(PREFIX + key)}=${encodeURIComponent(value)}`);
        written.add(key);
      }
      continue;
    }
    out.push(raw);
  }
  for (const [key, value] of Object.entries(update)) {
    if (value !== undefined && !written.has(key)) {
      out.push(`${encodeURIComponent(PREFIX + key)}=${encodeURIComponent(value)}`);
    }
  }
  return out.length ? `#${out.join('&')}` : '';
}

/** TensorBoard's page (our parent, same origin), else our own window. */
export function hostWindow(): Window {
  try {
    const parent = window.parent;
    if (parent !== window && parent.location.href) return parent; // throws when cross-origin
  } catch {
    // cross-origin parent
  }
  return window;
}

/** Puts `hash` into the host page's URL without a history entry or a hashchange. */
export function replaceHostHash(host: Window, hash: string): void {
  const loc = host.location;
  if (hash === loc.hash || (hash === '' && loc.hash === '#')) return;
  try {
    host.history.replaceState(host.history.state, '', `${loc.pathname}${loc.search}${hash}`);
  } catch {
    // a sandboxed host may refuse; the state then lives only in memory
  }
}

/** Calls `onChange` when the user edits the host's hash or goes back/forward. */
export class HashWatcher {
  private listener: (() => void) | undefined;

  constructor(private readonly host: Window) {}

  watch(onChange: () => void): void {
    this.unwatch();
    this.listener = onChange;
    this.host.addEventListener('hashchange', onChange);
    this.host.addEventListener('popstate', onChange);
  }

  unwatch(): void {
    if (!this.listener) return;
    this.host.removeEventListener('hashchange', this.listener);
    this.host.removeEventListener('popstate', this.listener);
    this.listener = undefined;
  }
}

/** Reads and writes a view's keys in the host page's hash; follows edits and back/forward. */
export class HashParamStore {
  private readonly host: Window;
  private readonly watcher: HashWatcher;

  constructor(
    private readonly keys: readonly string[],
    host: Window = hostWindow(),
  ) {
    this.host = host;
    this.watcher = new HashWatcher(host);
  }

  read(): HashParams {
    return readHashParams(this.host.location.hash, this.keys);
  }

  write(update: HashUpdate): void {
    replaceHostHash(this.host, writeHashParams(this.host.location.hash, update));
  }

  /** Removes every key of this store from the hash. */
  clear(): void {
    this.write(Object.fromEntries(this.keys.map((k) => [k, undefined])));
  }

  watch(onChange: (params: HashParams) => void): void {
    this.watcher.watch(() => onChange(this.read()));
  }

  unwatch(): void {
    this.watcher.unwatch();
  }
}
