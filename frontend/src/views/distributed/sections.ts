// The Distributed page's section pieces that hold no page state: the section frame, the
// controls row, the advice cards, the chart cards, the selectors, the late-rank list and
// the link from a straggler to its step in the trace view.

import type { DistributedResponse, Recommendation } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { h, replaceChildren, type Children } from '../../components/dom';
import { recommendationCard } from '../../components/recommendation';
import { evidenceParts } from '../overview/model';
import type { RunViewContext } from '../types';
import { lateRanks, stepOptions, traceLinkState, type StragglerRow } from './model';

export function section(anchor: string, title: string, ...children: Children[]): HTMLElement {
  return h(
    'section',
    { class: 'ks-section', dataset: { anchor }, testid: `distributed-${anchor}` },
    h('h3', { class: 'ks-section-title' }, title),
    ...children,
  );
}

function field(label: string, control: HTMLElement): HTMLElement {
  return h('label', { class: 'ks-field' }, h('span', { class: 'ks-field-label' }, label), control);
}

/** A section's control with a muted note beside it. */
export function controls(label: string, control: HTMLElement, note: string): HTMLElement {
  return h(
    'div',
    { class: 'ks-dist-controls' },
    field(label, control),
    h('p', { class: 'ks-muted ks-small ks-note' }, note),
  );
}

export function chartElement(testid: string, manyRanks: boolean): HTMLElement {
  const el = h('div', {
    class: 'ks-dist-chart',
    testid,
    dataset: { mode: manyRanks ? 'heat' : 'bars' },
  });
  if (manyRanks) el.style.height = 'auto';
  return el;
}

function adviceCard(root: HTMLElement, rec: Recommendation): HTMLElement {
  const anchor = rec.link?.view === 'distributed' ? rec.link.anchor : null;
  const show = anchor
    ? h(
        'button',
        {
          class: 'ks-link-button',
          attrs: { type: 'button' },
          on: { click: () => scrollToAnchor(root, anchor) },
        },
        `Show ${anchor}`,
      )
    : null;
  return recommendationCard(rec, evidenceParts(rec.evidence), show);
}

/** The job's recommendations (none: no section); a card's link scrolls within `root`. */
export function adviceSection(view: DistributedResponse, root: HTMLElement): HTMLElement[] {
  const recs = view.recommendations;
  if (!recs.length) return [];
  return [
    section(
      'advice',
      'Advice',
      h(
        'div',
        { class: 'ks-recs' },
        recs.map((r) => adviceCard(root, r)),
      ),
    ),
  ];
}

/** The two chart cards of "Time per rank" around their chart elements. */
export function rankChartCards(
  view: DistributedResponse,
  manyRanks: boolean,
  breakdown: readonly [title: HTMLElement, chart: HTMLElement],
  sync: readonly [title: HTMLElement, chart: HTMLElement],
): HTMLElement {
  const heatNote = manyRanks
    ? h(
        'p',
        { class: 'ks-dist-chart-note' },
        `${view.ranks.length} ranks: one column per rank, colour strength relative to the largest rank in each row. Hover for numbers, click to pick a rank.`,
      )
    : null;
  return h(
    'div',
    { class: manyRanks ? 'ks-dist-charts ks-dist-charts-heat' : 'ks-dist-charts' },
    h('div', { class: 'ks-card ks-chart-card' }, ...breakdown, heatNote),
    h(
      'div',
      { class: 'ks-card ks-chart-card', dataset: { anchor: 'sync' } },
      ...sync,
      h(
        'p',
        { class: 'ks-dist-chart-note' },
        'Time in collectives: waiting for the last rank to arrive vs. the rest (transfer).',
      ),
    ),
  );
}

/** The step picker ("" = all steps). */
export function stepSelector(
  view: DistributedResponse,
  step: string,
  onChange: (step: string) => void,
): HTMLSelectElement {
  const select = h('select', {
    class: 'ks-select',
    testid: 'step-select',
    attrs: { 'aria-label': 'Step' },
    on: { change: () => onChange(select.value) },
  });
  replaceChildren(
    select,
    stepOptions(view).map((o) => h('option', { attrs: { value: o.value } }, o.label)),
  );
  select.value = step;
  return select;
}

/** The collectives' scope: the whole job or one rank. */
export function scopeSelector(
  view: DistributedResponse,
  rank: number | undefined,
  onChange: (rank: number | undefined) => void,
): HTMLSelectElement {
  const scope = h('select', {
    class: 'ks-select',
    testid: 'collective-scope',
    attrs: { 'aria-label': 'Collectives of' },
    on: { change: () => onChange(scope.value === '' ? undefined : Number(scope.value)) },
  });
  replaceChildren(scope, [
    h('option', { attrs: { value: '' } }, 'The whole job (all ranks)'),
    ...view.ranks.map((r) =>
      h('option', { attrs: { value: String(r.rank) } }, `Rank ${r.rank} · ${r.worker}`),
    ),
  ]);
  scope.value = rank === undefined ? '' : String(rank);
  return scope;
}

/** The ranks that were late most often, with why; null when none was. */
export function lateRankList(view: DistributedResponse): HTMLElement | null {
  const late = lateRanks(view);
  if (!late.length) return null;
  return h(
    'ul',
    { class: 'ks-dist-late', testid: 'late-ranks' },
    late.map((l) =>
      h(
        'li',
        { dataset: { rank: String(l.rank) } },
        h('strong', null, `Rank ${l.rank}`),
        h('span', { class: 'ks-muted' }, ` · ${l.worker}: `),
        l.text,
      ),
    ),
    view.stragglers.length > late.length
      ? h('li', { class: 'ks-muted' }, `and ${view.stragglers.length - late.length} more ranks`)
      : null,
  );
}

/** The link from a straggler row to its step of its late rank in the trace view. */
export function traceLink(ctx: Pick<RunViewContext, 'run' | 'link'>, row: StragglerRow): Children {
  const s = row.straggler;
  if (!s) return h('span', { class: 'ks-muted' }, '—');
  const state = traceLinkState(ctx.run, s.window);
  return h(
    'a',
    {
      class: 'ks-dist-trace-link',
      testid: `straggler-${row.step}-link`,
      title: `Open ${s.window.worker}, ${row.step} in the trace view`,
      dataset: {
        worker: s.window.worker,
        span: s.window.span,
        t0: String(s.window.start_us),
        t1: String(s.window.end_us),
      },
      // A plain link to TensorBoard's page: only its hash changes (no reload, a history
      // entry), and the shell follows the hashchange to the trace view.
      attrs: { href: ctx.link(state), target: '_top' },
    },
    'Open in trace ↗',
  );
}

/** Why the GPU table is empty. */
export function noGpus(view: DistributedResponse): HTMLElement {
  return h(
    'p',
    { class: 'ks-muted ks-note', testid: 'no-gpus' },
    view.mode === 'cpu'
      ? 'No GPU in these traces: the ranks ran on CPUs.'
      : 'The traces record no GPU.',
  );
}

/** Row attributes: the row's id as data-<name>, and data-selected on the selected row. */
export function markRow<R>(
  name: string,
  id: (row: R) => string,
  selected: (row: R) => boolean,
): (row: R) => Record<string, string> {
  return (row) => {
    const attrs: Record<string, string> = { [`data-${name}`]: id(row) };
    if (selected(row)) attrs['data-selected'] = '';
    return attrs;
  };
}
