// The Compile page (run-level): what the run's TORCH_TRACE compile logs say, beside its
// traces: compiles and recompiles over time, the steps that spent time compiling, each
// compile's time by stage and cache, the guards that failed, graph breaks and failures
// with links to the user's line in the editor, and advice. Offered only for runs that
// have compile logs (the run listing's `views`).

import type { Compile, CompileResponse } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatDuration, formatCount, plural } from '../../components/format';
import { ensureStyle } from '../../components/view_style';
import { loadRunPage, section, tile } from '../page_kit';
import type { RunViewContext, RunViewDef, ViewHandle } from '../types';
import css from './compile.css';
import { timelineModel, totals } from './model';
import {
  adviceList,
  compileTable,
  failureList,
  graphBreakList,
  logList,
  recompileList,
  stepList,
} from './sections';
import { compileTimeline } from './timeline';

/** The trace view's window around a compile: the compile and a tenth of it either side. */
export function traceState(run: string, c: Compile, span: string): Record<string, string> | null {
  if (c.worker === null || c.trace_start_us === null) return null;
  const dur = c.dur_us ?? 0;
  const pad = Math.max(dur / 10, 1000);
  return {
    run,
    worker: c.worker,
    span,
    view: 'trace',
    t0: String(Math.round(c.trace_start_us - pad)),
    t1: String(Math.round(c.trace_start_us + dur + pad)),
  };
}

function tiles(view: CompileResponse): HTMLElement {
  const t = totals(view);
  return h(
    'div',
    { class: 'ks-tiles' },
    tile(
      'Compiles',
      formatCount(t.compiles),
      plural(view.logs.length, 'log'),
      'compile-tile-compiles',
    ),
    tile(
      'Compile time',
      formatDuration(view.total_compile_us),
      'frames and backward graphs',
      'compile-tile-time',
    ),
    tile('Recompiles', formatCount(t.recompiles), undefined, 'compile-tile-recompiles'),
    tile('Graph breaks', formatCount(t.breaks), undefined, 'compile-tile-breaks'),
    tile('Failures', formatCount(t.failures), undefined, 'compile-tile-failures'),
  );
}

function traceHref(view: CompileResponse, ctx: RunViewContext): (c: Compile) => string | null {
  const spans = new Map(view.alignments.map((a) => [a.worker ?? '', a.span ?? ctx.span]));
  return (c) => {
    const state = traceState(view.run, c, spans.get(c.worker ?? '') ?? ctx.span);
    return state ? ctx.link(state) : null;
  };
}

const TIMELINE_INTRO =
  'Per rank, each frame compile (top row) and its backward compile (below), from the first compile on; the profiler steps that compiled are shaded.';

function page(view: CompileResponse, ctx: RunViewContext): HTMLElement {
  const model = timelineModel(view);
  const failures = failureList(view);
  const parts: [string, string, HTMLElement | null, string?][] = [
    ['advice', 'Advice', adviceList(view)],
    [
      'timeline',
      'Compiles and recompiles over time',
      model ? compileTimeline(model) : h('p', { class: 'ks-muted' }, 'No compile has a time.'),
      TIMELINE_INTRO,
    ],
    ['steps', 'Steps that compiled', stepList(view)],
    ['compiles', 'Compiles', compileTable(view, traceHref(view, ctx))],
    ['recompiles', 'Recompiles: the guard that failed', recompileList(view)],
    ['graph-breaks', 'Graph breaks', graphBreakList(view)],
    ['failures', 'Failures', failures],
    ['logs', 'Logs, and how they meet the traces', logList(view)],
  ];
  return h(
    'div',
    { class: 'ks-cmp-page' },
    h('h2', { class: 'ks-view-title' }, `Compiles of ${view.run}`),
    tiles(view),
    ...parts.map(([anchor, title, body, intro]) =>
      body ? section({ anchor, testid: `compile-${anchor}-section`, title, intro }, body) : null,
    ),
  );
}

function renderCompile(container: HTMLElement, ctx: RunViewContext): Promise<ViewHandle> {
  ensureStyle('compile', css);
  const root = h('div', {
    class: 'ks-view ks-cmp',
    testid: 'compile',
    dataset: { run: ctx.run, span: ctx.span },
  });
  container.appendChild(root);
  // Mounted at once: the page shows its own progress while the server reads the logs.
  void loadRunPage(root, ctx.signal, {
    loading: h(
      'div',
      { class: 'ks-panel ks-loading', testid: 'compile-loading' },
      'Reading the compile logs…',
    ),
    fetch: () => ctx.api.getReady('compile', { run: ctx.run, span: ctx.span }, ctx.signal),
    show: (view) => {
      replaceChildren(root, page(view, ctx));
      root.dataset.ready = 'true';
      return Promise.resolve();
    },
    errorTestid: 'compile-error',
    errorTitle: 'Could not read the compile logs',
  });
  return Promise.resolve({ dispose: () => root.remove() });
}

export const compileView: RunViewDef = {
  id: 'compile',
  label: 'Compile',
  order: 20,
  absent:
    'this run has no TORCH_TRACE compile logs (run with TORCH_TRACE=<run folder>/torch_trace)',
  render: renderCompile,
};
