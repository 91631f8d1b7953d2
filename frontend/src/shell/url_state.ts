// Shell state in TensorBoard's own URL. TensorBoard keeps its state in the hash of the
// top page: "#<tab>&key=value&..." (tf_storage: the one item without "=" is the active
// tab, the others are URI-encoded pairs) and reserves keys "p.<plugin>.<key>" for plugins
// (that is what its plugin API `GetURLPluginData` hands back). We read and write
// p.kinetoscope.{run,worker,span,view} there with history.replaceState, keeping the tab
// and every other key as they are, so a copied link reopens the same view.

import {
  HashWatcher,
  hostWindow,
  PREFIX,
  replaceHostHash,
  safeDecode,
  writeHashParams,
} from '../components/hash_params';

export { PLUGIN_NAME, PREFIX } from '../components/hash_params';
export const STATE_KEYS = ['run', 'worker', 'span', 'view'] as const;

export type StateKey = (typeof STATE_KEYS)[number];
export type UrlState = Partial<Record<StateKey, string>>;

interface HashItem {
  /** null: the tab item; undefined: a malformed item, kept as it is. */
  key: string | null | undefined;
  raw: string;
  value: string;
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
  return writeHashParams(hash, Object.fromEntries(STATE_KEYS.map((key) => [key, state[key]])));
}

/**
 * The hash with p.kinetoscope.<key> set for each key of `values` (removed when undefined);
 * every other item kept in place, new keys appended in the order given.
 */
export function writeKeys(hash: string, values: Record<string, string | undefined>): string {
  return writeHashParams(hash, values);
}

export function sameState(a: UrlState, b: UrlState): boolean {
  return STATE_KEYS.every((key) => a[key] === b[key]);
}

/** Reads and writes UrlState on the host page; notifies on back/forward or edits. */
export class UrlStateStore {
  private readonly host: Window;
  private readonly watcher: HashWatcher;

  constructor(host: Window = hostWindow()) {
    this.host = host;
    this.watcher = new HashWatcher(host);
  }

  read(): UrlState {
    return readState(this.host.location.hash);
  }

  write(state: UrlState): void {
    replaceHostHash(this.host, writeState(this.host.location.hash, state));
  }

  /** A view's own keys (p.kinetoscope.<key>), as readKeys. */
  readKeys(keys: readonly string[]): Record<string, string> {
    return readKeys(this.host.location.hash, keys);
  }

  /** Sets (or, when undefined, removes) the given keys, like write() for any key. */
  writeKeys(values: Record<string, string | undefined>): void {
    replaceHostHash(this.host, writeKeys(this.host.location.hash, values));
  }

  /** The host page's URL with the given keys set: a link that opens that state. */
  href(values: Record<string, string | undefined>): string {
    const loc = this.host.location;
    return `${loc.origin}${loc.pathname}${loc.search}${writeKeys(loc.hash, values)}`;
  }

  /** Calls `onChange` when the user edits the hash or goes back/forward. */
  watch(onChange: (state: UrlState) => void): void {
    this.watcher.watch(() => onChange(this.read()));
  }

  unwatch(): void {
    this.watcher.unwatch();
  }
}
