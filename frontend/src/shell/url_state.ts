// Shell state in TensorBoard's own URL. TensorBoard keeps its state in the hash of the
// top page: "#<tab>&key=value&..." (tf_storage: the one item without "=" is the active
// tab, the others are URI-encoded pairs) and reserves keys "p.<plugin>.<key>" for plugins
// (that is what its plugin API `GetURLPluginData` hands back). We read and write
// p.kinetoscope.{run,worker,span,view} there with history.replaceState, keeping the tab
// and every other key as they are, so a copied link reopens the same view.

export const PLUGIN_NAME = 'kinetoscope';
export const PREFIX = `p.${PLUGIN_NAME}.`;
export const STATE_KEYS = ['run', 'worker', 'span', 'view'] as const;

export type StateKey = (typeof STATE_KEYS)[number];
export type UrlState = Partial<Record<StateKey, string>>;

interface HashItem {
  /** null: the tab item; undefined: a malformed item, kept as it is. */
  key: string | null | undefined;
  raw: string;
  value: string;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function parseItems(hash: string): HashItem[] {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!body) return [];
  return body
    .split('&')
    .filter((raw) => raw !== '')
    .map((raw) => {
      const parts = raw.split('=');
      if (parts.length === 1) return { key: null, raw, value: raw };
      if (parts.length === 2) {
        return { key: safeDecode(parts[0] ?? ''), raw, value: safeDecode(parts[1] ?? '') };
      }
      return { key: undefined, raw, value: '' };
    });
}

/** Our keys from a hash such as "#kinetoscope&p.kinetoscope.run=r". */
export function readState(hash: string): UrlState {
  return readKeys(hash, STATE_KEYS);
}

/** The non-empty values of p.kinetoscope.<key> for the given keys (a view's own state). */
export function readKeys(hash: string, keys: readonly string[]): Record<string, string> {
  const state: Record<string, string> = {};
  for (const item of parseItems(hash)) {
    if (typeof item.key !== 'string' || !item.key.startsWith(PREFIX)) continue;
    const key = item.key.slice(PREFIX.length);
    if (keys.includes(key) && item.value !== '') state[key] = item.value;
  }
  return state;
}

/** The tab named by the hash, if any. */
export function readTab(hash: string): string | undefined {
  return parseItems(hash).find((item) => item.key === null)?.value;
}

/**
 * The hash with our keys set to `state` (a key left undefined is removed), every other
 * item kept in place, and new keys appended in STATE_KEYS order. Returns it with "#".
 */
export function writeState(hash: string, state: UrlState): string {
  return writeIn(hash, STATE_KEYS, state);
}

/**
 * The hash with p.kinetoscope.<key> set for each key of `values` (removed when undefined);
 * every other item kept in place, new keys appended in the order given.
 */
export function writeKeys(hash: string, values: Record<string, string | undefined>): string {
  return writeIn(hash, Object.keys(values), values);
}

function writeIn(
  hash: string,
  keys: readonly string[],
  state: Partial<Record<string, string>>,
): string {
  const items = parseItems(hash);
  const out: string[] = [];
  const written = new Set<string>();
  for (const item of items) {
    if (typeof item.key === 'string' && item.key.startsWith(PREFIX)) {
      const key = item.key.slice(PREFIX.length);
      if (keys.includes(key)) {
        const value = state[key];
        if (value !== undefined && !written.has(key)) {
          out.push(`${encodeURIComponent(item.key)}=${encodeURIComponent(value)}`);
          written.add(key);
        }
        continue;
      }
    }
    out.push(item.raw);
  }
  for (const key of keys) {
    const value = state[key];
    if (value !== undefined && !written.has(key)) {
      out.push(`${encodeURIComponent(PREFIX + key)}=${encodeURIComponent(value)}`);
    }
  }
  return out.length ? `#${out.join('&')}` : '';
}

export function sameState(a: UrlState, b: UrlState): boolean {
  return STATE_KEYS.every((key) => a[key] === b[key]);
}

/** The window whose URL the user sees: TensorBoard's page (our parent), else our own. */
function hostWindow(): Window {
  try {
    const parent = window.parent;
    if (parent !== window) {
      if (parent.location.href) return parent; // reading it throws when cross-origin
    }
  } catch {
    // fall through
  }
  return window;
}

/** Reads and writes UrlState on the host page; notifies on back/forward or edits. */
export class UrlStateStore {
  private readonly host: Window;
  private listener: (() => void) | undefined;

  constructor(host: Window = hostWindow()) {
    this.host = host;
  }

  read(): UrlState {
    return readState(this.host.location.hash);
  }

  write(state: UrlState): void {
    this.replaceHash(writeState(this.host.location.hash, state));
  }

  private replaceHash(hash: string): void {
    const loc = this.host.location;
    if (hash === loc.hash || (hash === '' && loc.hash === '#')) return;
    const url = `${loc.pathname}${loc.search}${hash}`;
    try {
      this.host.history.replaceState(this.host.history.state, '', url);
    } catch {
      // A sandboxed host may refuse; the state then lives only in memory.
    }
  }

  /** A view's own keys (p.kinetoscope.<key>), as readKeys. */
  readKeys(keys: readonly string[]): Record<string, string> {
    return readKeys(this.host.location.hash, keys);
  }

  /** Sets (or, when undefined, removes) the given keys, like write() for any key. */
  writeKeys(values: Record<string, string | undefined>): void {
    this.replaceHash(writeKeys(this.host.location.hash, values));
  }

  /** The host page's URL with the given keys set: a link that opens that state. */
  href(values: Record<string, string | undefined>): string {
    const loc = this.host.location;
    return `${loc.origin}${loc.pathname}${loc.search}${writeKeys(loc.hash, values)}`;
  }

  /** Calls `onChange` when the user edits the hash or goes back/forward. */
  watch(onChange: (state: UrlState) => void): void {
    this.unwatch();
    this.listener = () => onChange(this.read());
    this.host.addEventListener('hashchange', this.listener);
    this.host.addEventListener('popstate', this.listener);
  }

  unwatch(): void {
    if (!this.listener) return;
    this.host.removeEventListener('hashchange', this.listener);
    this.host.removeEventListener('popstate', this.listener);
    this.listener = undefined;
  }
}
