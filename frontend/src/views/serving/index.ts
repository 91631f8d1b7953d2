// The Serving page: a vLLM or SGLang trace's iterations as a strip on the time axis,
// coloured by phase (a click opens the trace view at the iteration), per phase the
// iteration times, tokens per second, per-token estimates and kernel time by the
// taxonomy's classes, and every iteration in a table with a link to the trace view.
// A trace without iterations shows the route's reason (a training loop, a graph capture,
// a diffusion request) instead.

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { Iteration, ServingView } from '../../api/types';
import { colAttrs } from '../../components/columns';
import { append, h, type Children } from '../../components/dom';
import { formatCount, plural } from '../../components/format';
import { ensureTableToolsStyle } from '../../components/table_tools';
import { ensureStyle } from '../../components/view_style';
import * as kit from '../page_kit';
import { TablePanel } from '../table_panel';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { iterationColumns, NARROW_HIDES, PHASE_HEADERS, phaseTableRow } from './columns';
import {
  CLASS_COLOR,
  CLASS_ORDER,
  headline,
  iterationWindow,
  PHASE_COLOR,
  phaseLabel,
  phaseRows,
  phasesOf,
} from './model';
import { IterationStrip } from './strip';

const CSS = `
.ks-serving-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; margin: 4px 0 8px; }
.ks-serving-legend span { display: inline-flex; align-items: center; gap: 5px; }
.ks-serving-phase { display: inline-flex; align-items: center; gap: 6px; }
.ks-serving-table { border-collapse: collapse; font-size: 13px; width: 100%; }
.ks-serving-table th, .ks-serving-table td { text-align: left; padding: 5px 8px;
  border-bottom: 1px solid var(--ks-border); white-space: nowrap; }
.ks-serving-table td.ks-num, .ks-serving-table th.ks-num { text-align: right; }
.ks-serving-table-wrap { overflow-x: auto; }
.ks-serving-classes { display: flex; width: 180px; height: 12px; border-radius: 2px; overflow: hidden;
  background: var(--ks-border); }
.ks-serving-classes span { display: block; height: 100%; }
.ks-serving-kernel { overflow: hidden; text-overflow: ellipsis; }
.ks-serving-notes { margin: 4px 0 0 18px; padding: 0; font-size: 12px; }
`;

function legend(entries: [string, string][]): HTMLElement {
  return h(
    'div',
    { class: 'ks-serving-legend' },
    entries.map(([label, color]) =>
      h('span', null, h('span', { class: 'ks-swatch', style: `background:${color}` }), label),
    ),
  );
}

class ServingPage {
  readonly element: HTMLElement;
  private strip: IterationStrip | undefined;
  private readonly table: TablePanel<Iteration>;
  private readonly chrome = kit.tableChrome('serving');

  constructor(
    private readonly ctx: ViewContext,
    private readonly data: ServingView,
  ) {
    this.element = kit.tablePageRoot('serving', ctx.key, 'iteration', {
      iterations: String(data.iteration_count),
    });
    this.table = new TablePanel<Iteration>({
      testid: 'serving-iteration-table',
      caption: 'Iterations',
      optional: NARROW_HIDES,
      rowAttrs: (it) => ({ 'data-iteration': String(it.index), 'data-phase': it.phase }),
      searchTexts: (it) => [it.phase, it.marker, ...it.top_kernels.map((k) => k.name)],
      cellAttrs: colAttrs,
      count: this.chrome.count,
    });
  }

  start(): Promise<void> {
    const { data } = this;
    const shown =
      data.iterations.length < data.iteration_count
        ? `, the first ${formatCount(data.iterations.length)} drawn`
        : '';
    const summary = data.iteration_count
      ? `${plural(data.iteration_count, 'iteration')} (${phasesOf(data).map(phaseLabel).join(', ').toLowerCase()})${shown}`
      : 'no serving iterations';
    append(this.element, [
      kit.viewHead('Serving', this.ctx.key, summary),
      kit.partialNotice(this.ctx.status),
      data.iteration_count ? this.parts() : this.reason(),
    ]);
    this.element.dataset.ready = 'true';
    return Promise.resolve();
  }

  dispose(): void {
    this.strip?.destroy();
    this.table.destroy();
    this.element.remove();
  }

  private reason(): HTMLElement {
    const captures = this.data.captures.map((c) => `batch ${c.batch} ${c.mode}`).join(', ');
    return h(
      'div',
      { class: 'ks-notice', testid: 'serving-reason', role: 'note' },
      h('p', null, `No serving iterations: ${this.data.reason ?? 'none found'}.`),
      captures ? h('p', { class: 'ks-small' }, `Graphs captured: ${captures}.`) : null,
    );
  }

  private traceHref(it: Iteration): string {
    return this.ctx.link({ ...this.ctx.key, view: 'trace', ...iterationWindow(it) });
  }

  private parts(): Children {
    const { data } = this;
    this.strip = new IterationStrip(data, this.ctx.themes, (it) => this.traceHref(it));
    const tiles = h(
      'div',
      { class: 'ks-tiles', testid: 'serving-summary' },
      headline(data).map(([label, value, detail, testid]) =>
        kit.tile(label, value, detail, testid),
      ),
    );
    return [
      tiles,
      kit.section(
        {
          anchor: 'timeline',
          testid: 'serving-timeline',
          title: 'Iterations over time',
          intro:
            'Each iteration in its phase’s colour: above, the engine’s marker on the host; below, the span of the GPU work it launched (paler the more of that span the GPU idled). Hover for its numbers; click to open the trace view at it.',
        },
        legend(phasesOf(data).map((p) => [phaseLabel(p), PHASE_COLOR[p] ?? '#9c9c9c'])),
        this.strip.element,
      ),
      this.phaseSection(),
      this.tableSection(),
      this.notes(),
    ];
  }

  private phaseSection(): HTMLElement {
    const head = h(
      'tr',
      null,
      PHASE_HEADERS.map(([label, title], i) =>
        h('th', { class: i === 0 || i === PHASE_HEADERS.length - 1 ? '' : 'ks-num', title }, label),
      ),
    );
    return kit.section(
      {
        anchor: 'phases',
        testid: 'serving-phases',
        title: 'Phases',
        intro:
          'Per phase: how many iterations, their median and p90 duration, tokens per second where tokens are known (the engine’s, or inferred from op shapes), the per-token estimate and where the kernel time went.',
      },
      legend(CLASS_ORDER.map((c) => [c, CLASS_COLOR[c] ?? '#9c9c9c'])),
      h(
        'div',
        { class: 'ks-serving-table-wrap' },
        h(
          'table',
          { class: 'ks-serving-table', testid: 'serving-phase-table' },
          h('thead', null, head),
          h('tbody', null, phaseRows(this.data).map(phaseTableRow)),
        ),
      ),
    );
  }

  private tableSection(): HTMLElement {
    const origin = this.data.window_us[0] ?? 0;
    const link = (it: Iteration): Children =>
      h(
        'a',
        {
          testid: 'serving-trace-link',
          title: `Iteration ${it.index} in the trace view`,
          attrs: { href: this.traceHref(it), target: '_top' },
        },
        'Trace ↗',
      );
    this.table.build(iterationColumns(origin, link), this.data.iterations, {
      sort: undefined,
      search: '',
      emptyText: 'No iterations.',
    });
    return kit.section(
      {
        anchor: 'iterations',
        testid: 'serving-iterations',
        title: 'Every iteration',
        intro:
          'Times are from the first iteration’s start; a cell left empty is unknown (the engine did not say, or no GPU work).',
      },
      h('div', { class: 'ks-toolbar' }, this.chrome.count),
      this.table.element,
    );
  }

  private notes(): HTMLElement {
    return h(
      'section',
      { class: 'ks-section', testid: 'serving-notes' },
      h('h3', { class: 'ks-section-title' }, 'How these numbers are made'),
      h(
        'ul',
        { class: 'ks-serving-notes ks-muted' },
        this.data.notes.map((n) => h('li', null, n)),
      ),
    );
  }
}

async function renderServing(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  ensureStyle('serving', CSS);
  const data = await ctx.api.get('serving', { ...ctx.key }, ctx.signal);
  if (isStillLoading(data)) throw new ViewNotReady();
  return kit.mountPage(container, new ServingPage(ctx, data));
}

export const servingView: ViewDef = {
  id: 'serving',
  label: 'Serving',
  order: 70,
  absent:
    'it records no serving engine marker (vLLM or SGLang iteration annotations, or their execute_model / forward_batch_generation frames with with_stack=True)',
  render: renderServing,
};
