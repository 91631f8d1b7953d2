// The Distributed page's "Critical path across ranks" section: the run's job as one graph
// (the `run_critical_path` route: every rank's work joined at the collectives), the
// path's time by kind and by rank, one step's path drawn rank by rank (all ranks of the
// run on one time axis: the path crosses from rank to rank at the collectives), and the
// what-if panel (`run_whatif`) for a collective type or everything on one rank.

import { describeError, isAbort } from '../../api/client';
import type { ApiClient } from '../../api/client';
import type { CriticalPathView, DistributedResponse, PathSegment } from '../../api/types';
import {
  kindBar,
  kindLegend,
  pathKindColor,
  PATH_KIND_LABEL,
  stepTicks,
} from '../../components/critical_path';
import { h, replaceChildren } from '../../components/dom';
import { formatDuration, formatPercent } from '../../components/format';
import { ensureStyle } from '../../components/view_style';
import { WhatIfPanel } from '../whatif_panel';
import css from '../whatif.css';
import { section } from './sections';

/** Ranks drawn as rows at most; beyond, the ranks the path runs through. */
const MAX_ROWS = 64;

export class CriticalSection {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'ks-critical-body' });
  private readonly chart = h('div', { class: 'ks-path-gantt', testid: 'critical-gantt' });
  private readonly whatIf: WhatIfPanel;
  private controller: AbortController | null = null;

  constructor(
    private readonly api: ApiClient,
    private readonly run: string,
    private readonly span: string,
    private readonly signal: AbortSignal,
  ) {
    ensureStyle('whatif', css);
    this.whatIf = new WhatIfPanel(api, { run, span }, signal, 'dist-whatif-panel');
    this.element = section(
      'critical_path',
      'Critical path across ranks',
      h(
        'p',
        { class: 'ks-muted ks-small' },
        'The chain of work that sets each step’s length, with every rank’s work joined at the collectives: a collective ends when its last rank arrives plus its transfer, so the path goes through the rank that arrives last. What runs beside it does not make the step shorter.',
      ),
      this.body,
      this.whatIf.element,
    );
    this.element.dataset.state = 'loading';
    replaceChildren(this.body, h('p', { class: 'ks-muted' }, 'Joining the ranks…'));
  }

  async start(view: DistributedResponse): Promise<void> {
    try {
      const path = await this.api.getReady(
        'run_critical_path',
        { run: this.run, span: this.span },
        this.signal,
      );
      if (this.signal.aborted) return;
      this.show(path, view);
      this.element.dataset.state = 'ready';
    } catch (error) {
      if (isAbort(error) || this.signal.aborted) return;
      replaceChildren(this.body, h('p', { class: 'ks-error' }, describeError(error)));
      this.element.dataset.state = 'error';
    }
  }

  dispose(): void {
    this.controller?.abort();
    this.whatIf.dispose();
  }

  private show(path: CriticalPathView, view: DistributedResponse): void {
    const steps = Math.max(path.steps.length, 1);
    const perStep = Object.fromEntries(
      Object.entries(path.by_kind).map(([k, v]) => [k, v / steps]),
    );
    const ranks = path.by_rank
      .slice()
      .sort((a, b) => b.dur_us - a.dur_us)
      .map((r) =>
        h(
          'li',
          { dataset: { rank: String(r.rank ?? '') } },
          `rank ${r.rank ?? '?'} (${r.worker}): ${formatDuration(r.dur_us)} · ${formatPercent((100 * r.dur_us) / Math.max(path.span_us, 1), 1)}`,
        ),
      );
    const stepSelect = h(
      'select',
      { testid: 'critical-step', attrs: { 'aria-label': 'Step' } },
      ...path.steps.map((s) =>
        h('option', { attrs: { value: s.step } }, `${s.step} (${formatDuration(s.step_us)})`),
      ),
    );
    stepSelect.value = medianStep(path);
    stepSelect.addEventListener('change', () => void this.drawStep(stepSelect.value, view));
    replaceChildren(
      this.body,
      h(
        'p',
        { testid: 'critical-summary' },
        h('strong', null, 'Mean step: '),
        `${formatDuration(path.step_us)} · on the path per step:`,
      ),
      kindBar(perStep, 'critical-bar'),
      kindLegend(),
      h('p', { class: 'ks-small' }, 'Time on the path by rank:'),
      h('ul', { class: 'ks-small', testid: 'critical-ranks' }, ...ranks),
      h('div', { class: 'ks-controls' }, h('label', null, 'Step ', stepSelect)),
      this.chart,
      this.changeButtons(view),
    );
    void this.drawStep(stepSelect.value, view);
  }

  /** One step's path, rank by rank on the job's clock. */
  private async drawStep(step: string, view: DistributedResponse): Promise<void> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const signal = AbortSignal.any([controller.signal, this.signal]);
    try {
      const one = await this.api.getReady(
        'run_critical_path',
        { run: this.run, span: this.span, step },
        signal,
      );
      if (signal.aborted) return;
      replaceChildren(this.chart, ...gantt(one, view));
      this.chart.dataset.step = step;
      this.chart.dataset.segments = String(one.segments.length);
    } catch (error) {
      if (isAbort(error) || signal.aborted) return;
      replaceChildren(this.chart, h('p', { class: 'ks-error' }, describeError(error)));
    }
  }

  /** What-if buttons: each collective type, and everything on a chosen rank. */
  private changeButtons(view: DistributedResponse): HTMLElement {
    const collectives = view.collectives.map((c) =>
      h(
        'button',
        {
          class: 'ks-btn ks-btn-small',
          testid: `critical-whatif-${c.name}`,
          attrs: { type: 'button' },
          on: { click: () => this.whatIf.open({ kind: 'collective', name: c.name }) },
        },
        `${c.name} faster?`,
      ),
    );
    const rankSelect = h(
      'select',
      { testid: 'critical-whatif-rank', attrs: { 'aria-label': 'Rank' } },
      ...view.ranks.map((r) =>
        h('option', { attrs: { value: String(r.rank) } }, `rank ${r.rank} (${r.worker})`),
      ),
    );
    const rankButton = h(
      'button',
      {
        class: 'ks-btn ks-btn-small',
        testid: 'critical-whatif-rank-all',
        attrs: { type: 'button' },
        on: {
          click: () =>
            this.whatIf.open({ kind: 'rank_all', name: '', rank: Number(rankSelect.value) }),
        },
      },
      'Everything on this rank faster?',
    );
    return h(
      'div',
      { class: 'ks-controls ks-whatif-start' },
      h('span', { class: 'ks-small' }, 'What if: '),
      ...collectives,
      rankSelect,
      rankButton,
    );
  }
}

/** The section, started (its own request), kept with the page's tables to be disposed of. */
export function startCritical(
  host: { tables: { destroy(): void }[] },
  ctx: { api: ApiClient; run: string; span: string; signal: AbortSignal },
  view: DistributedResponse,
): HTMLElement {
  const critical = new CriticalSection(ctx.api, ctx.run, ctx.span, ctx.signal);
  host.tables.push({ destroy: () => critical.dispose() });
  void critical.start(view);
  return critical.element;
}

function medianStep(path: CriticalPathView): string {
  const sorted = path.steps.slice().sort((a, b) => a.step_us - b.step_us);
  return sorted[Math.floor((sorted.length - 1) / 2)]?.step ?? '';
}

/** Rows per rank (every rank of the run up to MAX_ROWS), segments placed on the job's clock. */
function gantt(one: CriticalPathView, view: DistributedResponse): HTMLElement[] {
  const step = one.steps.find((s) => s.step === one.step);
  if (!step || one.step_us <= 0) return [h('p', { class: 'ks-muted' }, 'No path for this step.')];
  const offset = new Map(one.clocks.map((c) => [c.rank, c.offset_us]));
  const onPath = new Set(one.segments.map((s) => s.rank));
  const ranks = view.ranks.map((r) => r.rank);
  const rows = ranks.length <= MAX_ROWS ? ranks : ranks.filter((r) => onPath.has(r));
  const place = (s: PathSegment): [number, number] => {
    const start = s.start_us + (offset.get(s.rank) ?? 0) - step.start_us;
    return [(100 * start) / one.step_us, (100 * s.dur_us) / one.step_us];
  };
  const axis = h(
    'div',
    { class: 'ks-path-gantt-row ks-path-gantt-axis', testid: 'path-gantt-axis' },
    h('span', { class: 'ks-muted' }, 'in step'),
    h(
      'div',
      { class: 'ks-path-gantt-ticks' },
      stepTicks(one.step_us).map((t) =>
        h(
          'span',
          { class: 'ks-path-gantt-tick', style: `left:${((100 * t) / one.step_us).toFixed(3)}%` },
          formatDuration(t),
        ),
      ),
    ),
  );
  const lanes = rows.map((rank) => {
    const lane = h('div', { class: 'ks-path-gantt-lane' });
    for (const s of one.segments) {
      if (s.rank !== rank || s.dur_us <= 0) continue;
      const [left, width] = place(s);
      lane.appendChild(
        h('div', {
          class: 'ks-path-gantt-seg',
          title: `${PATH_KIND_LABEL[s.kind] ?? s.kind}: ${s.name} · ${formatDuration(s.dur_us)}`,
          dataset: { kind: s.kind },
          style: `left:${left.toFixed(3)}%;width:${Math.max(width, 0.05).toFixed(3)}%;background:${pathKindColor(s.kind)}`,
        }),
      );
    }
    return h(
      'div',
      { class: 'ks-path-gantt-row', dataset: { rank: String(rank) } },
      h('span', null, `rank ${rank}`),
      lane,
    );
  });
  return [...lanes, axis];
}
