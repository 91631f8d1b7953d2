// View id -> view. The shell offers a view only when `status.views` lists its id, so a
// new view (operators, kernels, modules, trace, memory, distributed) plugs in with one line here
// plus its folder under views/. The Diff page (two worker-spans) is offered by the shell
// while a target is chosen in the side bar's "Compare with…" (shell/compare.ts).

import { compileView } from './compile';
import { diffView } from './diff';
import { distributedView } from './distributed';
import { flamegraphView } from './flamegraph';
import { kernelsView } from './kernels';
import { memoryView } from './memory';
import { memorySnapshotView } from './memory_snapshot';
import { modulesView } from './modules';
import { operatorsView } from './operators';
import { overviewView } from './overview';
import { servingView } from './serving';
import { traceView } from './trace';
import { trendsView } from './trends';
import type { RunViewDef, ViewDef } from './types';

// The Views list's order: the old plugin's and the README's (Overview, Operators, Kernels,
// Trace, Memory, Modules, then Serving), whatever order `status.views` lists them in; the run-level
// Distributed view follows them, then the Diff page.
export const VIEWS: readonly ViewDef[] = [
  overviewView,
  operatorsView,
  kernelsView,
  traceView,
  memoryView,
  modulesView,
  servingView,
  flamegraphView,
  diffView,
];

/** What a trace must hold for a view to be offered: the page says it when a link or the
 * URL asks for a view this trace lacks (the server's `supports` rule of each page). */
const VIEW_NEEDS: Readonly<Record<string, string>> = {
  kernels: 'it has no GPU kernels (a CPU-only profile)',
  trace: 'it holds no events',
  modules:
    'it records no nn.Module calls (profile with with_stack=True, or with_modules=True, to get them)',
  flamegraph: 'it holds no operators or annotations (host ranges)',
  serving:
    'it records no serving engine marker (vLLM or SGLang iteration annotations, or their execute_model / forward_batch_generation frames with with_stack=True)',
  diff: 'no run is chosen in “Compare with…”',
  distributed: 'this run has a single worker (the view compares the ranks of a job)',
  trends: 'the logdir has a single run (the page compares the runs of a logdir)',
  compile:
    'this run has no TORCH_TRACE compile logs (run with TORCH_TRACE=<run folder>/torch_trace)',
};

/** Why a trace offers no `id` view, for the page's notice. */
export function viewAbsentReason(id: string): string {
  return VIEW_NEEDS[id] ?? 'this trace does not hold the data it needs';
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
export const RUN_VIEWS: readonly RunViewDef[] = [
  distributedView,
  compileView,
  memorySnapshotView,
  trendsView,
];

export const RUN_VIEW_IDS: readonly string[] = RUN_VIEWS.map((v) => v.id);

export function getRunView(id: string): RunViewDef | undefined {
  return RUN_VIEWS.find((v) => v.id === id);
}
