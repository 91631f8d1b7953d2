// View id -> view. The shell offers a view only when `status.views` lists its id. A page is
// its folder under views/: its index.ts exports one ViewDef (a worker-span's page) or
// RunViewDef (a run's), with its place in the list (`order`) and why a trace lacks it
// (`absent`); `python tests/gen_view_folders.py` lists the folders in views/folders.ts, so
// a new page touches its folder only. The Diff page (two worker-spans) is offered by the
// shell while a target is chosen in the side bar's "Compare with…" (shell/compare.ts).

import { RUN_VIEW_FOLDERS, SPAN_VIEW_FOLDERS } from './folders';
import type { RunViewDef, ViewDef } from './types';

function byOrder<T extends { order: number; id: string }>(views: readonly T[]): readonly T[] {
  return views.slice().sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
}

// The Views list's order: the old plugin's and the README's (Overview, Operators, Kernels,
// Trace, Memory, Modules, then Serving, the flame graph and Diff), whatever order
// `status.views` lists them in; the run-level views (Distributed first) follow them.
export const VIEWS: readonly ViewDef[] = byOrder(SPAN_VIEW_FOLDERS);

/** Why a trace offers no `id` view, for the page's notice. */
export function viewAbsentReason(id: string): string {
  const view = getView(id) ?? getRunView(id);
  return view?.absent ?? 'this trace does not hold the data it needs';
}

/** `views` in the Views list's order (unknown ids last, in their order). */
export function inListOrder(views: readonly string[]): string[] {
  const rank = (v: string): number => {
    const i = VIEW_IDS.indexOf(v);
    return i < 0 ? VIEW_IDS.length : i;
  };
  return views.slice().sort((a, b) => rank(a) - rank(b));
}

export const VIEW_IDS: readonly string[] = VIEWS.map((v) => v.id);

export function getView(id: string): ViewDef | undefined {
  return VIEWS.find((v) => v.id === id);
}

export function viewLabel(id: string): string {
  return getView(id)?.label ?? getRunView(id)?.label ?? id;
}

// ----- run-level views -----
// A run-level view shows every worker of a run for one span name. The shell offers it when
// the run's listing has its id in `views` (not `status.views`), ignores the Workers list
// while it is shown, and never loads a worker-span for it: the view polls its own route.
// Its own URL state goes through components/hash_params.ts, as for the other views; a link
// to another view is a plain link to TensorBoard's page with other p.kinetoscope.* keys
// (the shell follows the hashchange).

// Trends is logdir-level: offered with every run of a logdir of several runs, it ignores
// the run chosen.
export const RUN_VIEWS: readonly RunViewDef[] = byOrder(RUN_VIEW_FOLDERS);

export const RUN_VIEW_IDS: readonly string[] = RUN_VIEWS.map((v) => v.id);

export function getRunView(id: string): RunViewDef | undefined {
  return RUN_VIEWS.find((v) => v.id === id);
}
