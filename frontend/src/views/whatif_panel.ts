// "What if this were faster?": a panel the Operators, Kernels and Distributed pages open
// from a row. It asks the `whatif` route (one trace) or `run_whatif` (a run of several
// workers, the ranks joined at their collectives) for the steps re-timed with the row's
// kernel, op, collective type or rank scaled by a factor, and shows the mean step
// recorded and predicted, the recorded critical path beside the predicted one (time by
// kind, to one scale: the path moves), the steps, and what the prediction assumed.

import { ApiError, describeError, isAbort } from '../api/client';
import type { ApiClient } from '../api/client';
import type { CriticalPathView, WhatIfView } from '../api/types';
import type { ColumnSpec } from '../components/columns';
import { factorLabel, kindBar, kindLegend, stepChangeText } from '../components/critical_path';
import { h, replaceChildren } from '../components/dom';
import { formatDuration } from '../components/format';
import { ensureStyle } from '../components/view_style';
import css from './whatif.css';

export type ChangeKind = 'kernel' | 'op' | 'collective' | 'rank_all';

export interface WhatIfChange {
  kind: ChangeKind;
  /** The kernel or op name, the collective type; "" for rank_all. */
  name: string;
  /** Only on this rank (a run). */
  rank?: number;
}

/** Where the panel asks: one worker's span, or the run's ranks as one job. */
export interface WhatIfTarget {
  run: string;
  span: string;
  /** A worker alone (the `whatif` route); absent: the run (`run_whatif`). */
  worker?: string;
  /** With `worker`: ask the run instead when it has several workers (a job's ranks). */
  runWhenSeveral?: boolean;
}

export const FACTORS = [0.25, 0.5, 0.75, 1.5, 2] as const;
const STEPS_SHOWN = 12;

function changeTitle(change: WhatIfChange): string {
  const where = change.rank !== undefined ? ` on rank ${change.rank}` : '';
  if (change.kind === 'rank_all') return `Everything${where || ' on every rank'}`;
  return `${change.kind === 'collective' ? 'Collective' : change.kind === 'op' ? 'Op' : 'Kernel'} ${change.name}${where}`;
}

/** A "What if…" column whose button opens the panel on its row. */
export function whatIfColumn<R>(label: (row: R) => string, open: (row: R) => void): ColumnSpec<R> {
  return {
    key: 'whatif',
    label: 'What if',
    tooltip: 'Predict the step time with this twice as fast (or by another factor)',
    minWidth: 64,
    value: () => null,
    sort: false,
    cell: (row) =>
      h(
        'button',
        {
          class: 'ks-btn ks-btn-small',
          testid: 'whatif-open',
          title: `What if ${label(row)} were faster?`,
          attrs: { type: 'button' },
          on: { click: () => open(row) },
        },
        '2×?',
      ),
  };
}

export class WhatIfPanel {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'ks-whatif-body' });
  private change: WhatIfChange | null = null;
  private factor = 0.5;
  private controller: AbortController | null = null;
  private recorded: Promise<CriticalPathView | null> | null = null;
  private resolved: Promise<WhatIfTarget> | null = null;

  constructor(
    private readonly api: ApiClient,
    private readonly target: WhatIfTarget,
    private readonly signal: AbortSignal,
    testid = 'whatif-panel',
  ) {
    ensureStyle('whatif', css);
    this.element = h('section', {
      class: 'ks-section ks-whatif',
      testid,
      dataset: { anchor: 'whatif' },
    });
    this.element.hidden = true;
  }

  /** Shows the panel for a change, predicted at the factor chosen last (2× faster). */
  open(change: WhatIfChange): void {
    this.change = change;
    this.element.hidden = false;
    this.render();
    this.element.scrollIntoView({ block: 'nearest' });
    void this.predict();
  }

  close(): void {
    this.controller?.abort();
    this.change = null;
    this.element.hidden = true;
  }

  dispose(): void {
    this.controller?.abort();
    this.element.remove();
  }

  private render(): void {
    const change = this.change;
    if (!change) return;
    const close = h(
      'button',
      {
        class: 'ks-btn ks-btn-small',
        testid: 'whatif-close',
        attrs: { type: 'button' },
        on: { click: () => this.close() },
      },
      'Close',
    );
    replaceChildren(
      this.element,
      h(
        'div',
        { class: 'ks-whatif-head' },
        h('h3', { class: 'ks-section-title' }, `What if: ${changeTitle(change)}`),
        close,
      ),
      this.factorRow(),
      this.body,
    );
  }

  private factorRow(): HTMLElement {
    const buttons = FACTORS.map((f) =>
      h(
        'button',
        {
          class: 'ks-btn ks-btn-small ks-whatif-factor',
          testid: `whatif-factor-${f}`,
          attrs: { type: 'button', 'aria-pressed': String(f === this.factor) },
          on: {
            click: () => {
              this.factor = f;
              this.render();
              void this.predict();
            },
          },
        },
        factorLabel(f),
      ),
    );
    return h('div', { class: 'ks-whatif-factors', role: 'group' }, ...buttons);
  }

  private query(): Record<string, string | number> {
    const change = this.change ?? { kind: 'rank_all', name: '' };
    const q: Record<string, string | number> = { factor: this.factor };
    if (change.kind === 'rank_all') q.rank_all = 1;
    else q[change.kind] = change.name;
    if (change.rank !== undefined) q.rank = change.rank;
    return q;
  }

  private async predict(): Promise<void> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const signal = AbortSignal.any([controller.signal, this.signal]);
    this.element.dataset.state = 'loading';
    replaceChildren(this.body, h('p', { class: 'ks-muted' }, 'Re-timing the steps…'));
    try {
      const [view, recorded] = await Promise.all([this.fetch(signal), this.recordedPath(signal)]);
      if (signal.aborted) return;
      replaceChildren(this.body, ...result(view, recorded));
      this.element.dataset.state = 'ready';
      this.element.dataset.predicted = String(view.predicted_step_us);
    } catch (error) {
      if (isAbort(error) || signal.aborted) return;
      const text = error instanceof ApiError ? error.message : describeError(error);
      replaceChildren(this.body, h('p', { class: 'ks-error', testid: 'whatif-error' }, text));
      this.element.dataset.state = 'error';
    }
  }

  private async fetch(signal: AbortSignal): Promise<WhatIfView> {
    const { run, span, worker } = await this.where(signal);
    this.element.dataset.scope = worker === undefined ? 'run' : 'span';
    if (worker === undefined)
      return this.api.getReady('run_whatif', { run, span, ...this.query() }, signal);
    return this.api.getReady('whatif', { run, span, worker, ...this.query() }, signal);
  }

  /** The target, a worker's run instead when it asks so and has several workers. */
  private where(signal: AbortSignal): Promise<WhatIfTarget> {
    const t = this.target;
    if (t.worker === undefined || !t.runWhenSeveral) return Promise.resolve(t);
    this.resolved ??= this.api
      .get('workers', { run: t.run }, signal)
      .then((listing) => {
        const withSpan = listing.workers.filter((w) => w.spans.some((s) => s.name === t.span));
        return withSpan.length >= 2 ? { run: t.run, span: t.span } : t;
      })
      .catch(() => t);
    return this.resolved;
  }

  /** The recorded critical path (every step), fetched once per panel. */
  private async recordedPath(signal: AbortSignal): Promise<CriticalPathView | null> {
    const { run, span, worker } = await this.where(signal);
    this.recorded ??= (
      worker === undefined
        ? this.api.getReady('run_critical_path', { run, span }, signal)
        : this.api.getReady('critical_path', { run, span, worker }, signal)
    ).catch(() => null);
    return this.recorded;
  }
}

/** The prediction: the mean step, both paths by kind to one scale, the steps, notes. */
function result(view: WhatIfView, recorded: CriticalPathView | null): HTMLElement[] {
  const longest = Math.max(view.baseline_step_us, view.predicted_step_us, 1);
  const recordedKinds = recorded ? perStep(recorded.by_kind, recorded.steps.length) : null;
  const bars = h(
    'div',
    { class: 'ks-whatif-bars' },
    h(
      'span',
      { class: 'ks-whatif-bar-label' },
      `Recorded ${formatDuration(view.baseline_step_us)}`,
    ),
    recordedKinds
      ? kindBar(recordedKinds, 'whatif-bar-recorded', view.baseline_step_us / longest)
      : h('span', { class: 'ks-muted' }, '—'),
    h(
      'span',
      { class: 'ks-whatif-bar-label' },
      `Predicted ${formatDuration(view.predicted_step_us)}`,
    ),
    kindBar(view.by_kind, 'whatif-bar-predicted', view.predicted_step_us / longest),
  );
  const rows = view.steps
    .slice(0, STEPS_SHOWN)
    .map((s) =>
      h(
        'tr',
        null,
        h('td', null, s.step),
        h('td', { class: 'ks-num' }, formatDuration(s.baseline_us)),
        h('td', { class: 'ks-num' }, formatDuration(s.predicted_us)),
      ),
    );
  const more = view.steps.length - rows.length;
  return [
    h(
      'p',
      { class: 'ks-whatif-summary', testid: 'whatif-result' },
      h('strong', null, 'Mean step: '),
      stepChangeText(view.baseline_step_us, view.predicted_step_us),
      h('span', { class: 'ks-muted' }, ` · ${view.matched} changed · ${view.method}`),
    ),
    ...view.bound_by.map((text) =>
      h('p', { class: 'ks-whatif-bound', testid: 'whatif-bound' }, `Bound by: ${text}`),
    ),
    bars,
    kindLegend(),
    h(
      'table',
      { class: 'ks-whatif-steps', testid: 'whatif-steps' },
      h(
        'thead',
        null,
        h('tr', null, h('th', null, 'Step'), h('th', null, 'Recorded'), h('th', null, 'Predicted')),
      ),
      h('tbody', null, ...rows),
    ),
    more > 0 ? h('p', { class: 'ks-muted ks-small' }, `… and ${more} more steps`) : null,
    notes(view.assumptions, view.warnings),
  ].filter((x): x is HTMLElement => x !== null);
}

/** A path's time by kind over `steps` steps as per step (a mean step's scale). */
function perStep(byKind: Readonly<Record<string, number>>, steps: number): Record<string, number> {
  const n = Math.max(steps, 1);
  return Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, v / n]));
}

function notes(assumptions: readonly string[], warnings: readonly string[]): HTMLElement | null {
  if (!assumptions.length && !warnings.length) return null;
  return h(
    'details',
    { class: 'ks-whatif-notes', testid: 'whatif-notes' },
    h('summary', null, `What this assumed (${assumptions.length + warnings.length})`),
    h('ul', null, ...[...assumptions, ...warnings].map((t) => h('li', null, t))),
  );
}
