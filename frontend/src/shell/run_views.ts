// Run-level views (the Distributed view, memory snapshots): which ones a run offers, when one
// is shown instead of loading a worker, and the Workers list while one is shown.

import type { RunInfo } from '../api/types';
import type { SelectField } from '../components/table_tools';
import { RUN_VIEW_IDS } from '../views/registry';
import { findRun, type Selection } from './selection';

/** The run-level views the run's listing offers (a run of several ranks, snapshots). */
export function runViewsOf(runs: readonly RunInfo[], sel: Selection): string[] {
  const offered = findRun(runs, sel.run)?.views ?? [];
  return offered.filter((v) => RUN_VIEW_IDS.includes(v));
}

/** The run-level view to show rather than loading a worker: the one asked for, or the
 *  run's first when it has no worker (a folder of memory snapshots). */
export function runViewInstead(
  runs: readonly RunInfo[],
  sel: Selection,
  wanted: string | undefined,
): string | undefined {
  const offered = runViewsOf(runs, sel);
  if (wanted !== undefined && offered.includes(wanted)) return wanted;
  return sel.worker === '' ? offered[0] : undefined;
}

export function isRunView(view: string | undefined): boolean {
  return view !== undefined && RUN_VIEW_IDS.includes(view);
}

/** A run-level view covers every worker: the Workers list is off while it is shown. */
export function lockWorkerList(workers: SelectField, currentView: string | undefined): void {
  const locked = isRunView(currentView);
  workers.select.disabled = locked || workers.select.options.length === 0;
  workers.el.title = locked ? 'This view shows every worker of the run' : '';
}
