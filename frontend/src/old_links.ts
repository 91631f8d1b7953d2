// Old links. The PyTorch tutorial and users' bookmarks open TensorBoard at
// "#pytorch_profiler", the tab of the deleted torch-tb-profiler. Where that plugin is not
// installed, kinetoscope also registers its name (tb_plugin/serve/old_links.py), and TensorBoard
// loads this module for it: it rewrites TensorBoard's hash to our tab, carrying over the
// run, worker, span and view (as p.pytorch_profiler.<key> or bare <key>=).

import {
  PLUGIN_NAME,
  STATE_KEYS,
  writeState,
  type StateKey,
  type UrlState,
} from './shell/url_state';

export const OLD_PLUGIN_NAME = 'pytorch_profiler';
const OLD_PREFIX = `p.${OLD_PLUGIN_NAME}.`;

/** The old plugin's view names; its Module and Lightning views have no counterpart. */
export const OLD_VIEWS: Readonly<Record<string, string>> = {
  Overview: 'overview',
  Operator: 'operators',
  Kernel: 'kernels',
  'GPU Kernel': 'kernels',
  Trace: 'trace',
  Memory: 'memory',
  Distributed: 'distributed',
};
const OUR_VIEWS = new Set(Object.values(OLD_VIEWS));

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function isStateKey(key: string): key is StateKey {
  return (STATE_KEYS as readonly string[]).includes(key);
}

function mapView(value: string): string | undefined {
  return OLD_VIEWS[value] ?? (OUR_VIEWS.has(value) ? value : undefined);
}

/**
 * The hash that opens our tab for an old link's hash: the tab item becomes ours, the old
 * plugin's run/worker/span/view become p.kinetoscope.*, TensorBoard's own keys stay.
 */
export function kinetoscopeHash(oldHash: string): string {
  const kept: string[] = [PLUGIN_NAME];
  const state: UrlState = {};
  for (const raw of oldHash.replace(/^#/, '').split('&')) {
    const eq = raw.indexOf('=');
    if (eq < 0) continue; // the tab item (or nothing): ours replaces it
    const key = safeDecode(raw.slice(0, eq));
    const name = key.startsWith(OLD_PREFIX) ? key.slice(OLD_PREFIX.length) : key;
    if (isStateKey(name)) {
      const value = safeDecode(raw.slice(eq + 1));
      const mapped = name === 'view' ? mapView(value) : value;
      if (mapped) state[name] = mapped;
    } else if (!key.startsWith(OLD_PREFIX)) {
      kept.push(raw);
    }
  }
  return writeState(`#${kept.join('&')}`, state);
}

/** TensorBoard's page (our parent, same origin), else this window. */
function hostWindow(): Window {
  try {
    if (window.parent !== window && window.parent.location.href) return window.parent;
  } catch {
    // cross-origin: stay here
  }
  return window;
}

export function render(): void {
  const host = hostWindow();
  const loc = host.location;
  // replace(): the old link does not stay in the history as a page to go back to.
  loc.replace(`${loc.pathname}${loc.search}${kinetoscopeHash(loc.hash)}`);
}
