// The Overview's "Top gains" section: the kernels, ops and collective types on the
// critical path, each re-timed twice as fast (the `top_gains` route, or `run_top_gains`
// for a run of several workers: the ranks joined at their collectives), ranked by the
// time it saves over the span. It loads after the rest of the page (its own request);
// `data-state` says where it is (loading, ready, error).

import { describeError, isAbort } from '../../api/client';
import type { CriticalPathLoading, Gain, TopGainsView } from '../../api/types';
import { stepChangeText } from '../../components/critical_path';
import {
  colAttrs,
  FORMAT,
  numberFormat,
  toColumns,
  type CellFormat,
  type ColumnSpec,
} from '../../components/columns';
import { h, replaceChildren } from '../../components/dom';
import { formatPercent } from '../../components/format';
import { VirtualTable } from '../../components/table';
import { rankProgress } from '../distributed/model';
import { section } from '../page_kit';
import type { ViewContext } from '../types';

/** The most workers whose gains the Overview asks as one job on its own (the server's
 * FULL_GRAPH_RANKS: whole graphs, fast). A larger run shows this trace's gains and offers
 * the run's: each rank read again for every candidate, a job of seconds to minutes. */
const RUN_GAINS_AT_ONCE = 16;

/** The gains shown, and the workers of a run whose own gains are offered (0: none). */
interface Fetched {
  view: TopGainsView;
  offerRun: number;
}

const KIND_LABEL: Readonly<Record<string, string>> = {
  kernel: 'Kernel',
  op: 'Op',
  collective: 'Collective',
};

/** A right-aligned column of a number field of the gains, in `format`. */
function numberColumn(
  key: 'saving_us' | 'saving_pct' | 'path_us' | 'predicted_step_us',
  label: string,
  format: CellFormat,
  tooltip?: string,
): ColumnSpec<Gain> {
  return { key, label, align: 'right', minWidth: 96, value: (g) => g[key], format, tooltip };
}

const percent = numberFormat((v) => formatPercent(v, 1));

const COLUMNS: ColumnSpec<Gain>[] = [
  { key: 'kind', label: 'Change', minWidth: 90, value: (g) => KIND_LABEL[g.kind] ?? g.kind },
  { key: 'name', label: 'Name', minWidth: 260, grow: 1, value: (g) => g.name },
  numberColumn('saving_pct', '% saved', percent, 'Of the step time (every step together)'),
  numberColumn('saving_us', 'Saved', FORMAT.duration, 'Time saved over every step of the span'),
  numberColumn('path_us', 'On the path', FORMAT.duration, 'Its time on the recorded critical path'),
  numberColumn('predicted_step_us', 'Predicted step', FORMAT.duration),
];

export class GainsSection {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'ks-gains-body' });
  private table: VirtualTable<Gain> | undefined;

  constructor(private readonly ctx: ViewContext) {
    this.element = section(
      {
        anchor: 'top_gains',
        testid: 'overview-gains',
        title: 'Top gains: what would make the step shorter',
        intro:
          'Each kernel, op and collective on the critical path, predicted twice as fast: the time it would save over the span (what runs beside the path saves nothing and is not listed). The Trace page draws the path; Operators, Kernels and Distributed predict any factor.',
      },
      this.body,
    );
    this.element.dataset.state = 'loading';
    replaceChildren(this.body, h('p', { class: 'ks-muted' }, 'Re-timing the steps…'));
  }

  async start(): Promise<void> {
    await this.load(() => this.fetch());
  }

  /** Shows what `fetched` gives, `data-state` saying where it is. */
  private async load(fetched: () => Promise<Fetched>): Promise<void> {
    this.element.dataset.state = 'loading';
    try {
      const { view, offerRun } = await fetched();
      if (this.ctx.signal.aborted) return;
      this.show(view, offerRun);
      this.element.dataset.state = 'ready';
    } catch (error) {
      if (isAbort(error) || this.ctx.signal.aborted) return;
      replaceChildren(this.body, h('p', { class: 'ks-error' }, describeError(error)));
      this.element.dataset.state = 'error';
    }
  }

  dispose(): void {
    this.table?.destroy();
  }

  /** The run's gains when it has several workers, up to RUN_GAINS_AT_ONCE (one job),
   * else this trace's (with the run's offered when it has more). */
  private async fetch(): Promise<Fetched> {
    const { api, key, signal } = this.ctx;
    const listing = await api.get('workers', { run: key.run }, signal);
    const several = listing.workers.filter((w) => w.spans.some((s) => s.name === key.span));
    if (several.length >= 2 && several.length <= RUN_GAINS_AT_ONCE)
      return { view: await this.runGains(), offerRun: 0 };
    const view = await api.getReady('top_gains', key, signal);
    return { view, offerRun: several.length > RUN_GAINS_AT_ONCE ? several.length : 0 };
  }

  private runGains(onWaiting?: (progress: CriticalPathLoading) => void): Promise<TopGainsView> {
    const { api, key, signal } = this.ctx;
    return api.getReady('run_top_gains', { run: key.run, span: key.span }, signal, onWaiting);
  }

  /** The run's own gains, asked: the section says how many ranks are read so far. */
  private showRun(workers: number): void {
    const note = h('p', { class: 'ks-muted' }, `Re-timing the run’s ${workers} ranks as one job…`);
    replaceChildren(this.body, note);
    void this.load(async () => {
      const view = await this.runGains((p) => {
        const read = rankProgress(p.ranks_done, p.ranks_total).text;
        note.textContent = `Re-timing the run’s ${workers} ranks as one job. ${read}`;
      });
      return { view, offerRun: 0 };
    });
  }

  private show(view: TopGainsView, offerRun = 0): void {
    this.table?.destroy(); // the trace's, when the run's replace them
    this.element.dataset.scope = view.scope;
    const scope = view.scope === 'run' ? 'the run’s ranks as one job' : 'this trace';
    const best = view.gains[0];
    const lead = best
      ? h(
          'p',
          { class: 'ks-gains-lead', testid: 'gains-best' },
          h('strong', null, best.name),
          ` twice as fast: mean step ${stepChangeText(view.baseline_step_us, best.predicted_step_us)} (${scope}).`,
        )
      : h('p', { class: 'ks-muted' }, 'No change on the critical path saves time.');
    this.table = new VirtualTable<Gain>({
      columns: toColumns(COLUMNS, colAttrs),
      rows: view.gains,
      testid: 'gains-table',
      caption: 'Top gains',
      emptyText: 'No kernel, op or collective on the critical path.',
      maxHeight: 320,
      optional: ['path_us', 'predicted_step_us'],
    });
    replaceChildren(this.body, lead, this.table.element);
    if (offerRun) this.body.append(this.runOffer(offerRun));
  }

  /** The button that asks the run's own gains, under this trace's. */
  private runOffer(workers: number): HTMLElement {
    return h(
      'p',
      { class: 'ks-controls' },
      `These are this trace’s gains; the run has ${workers} workers. `,
      h(
        'button',
        {
          class: 'ks-btn ks-btn-small',
          testid: 'gains-run',
          attrs: { type: 'button' },
          on: { click: () => this.showRun(workers) },
        },
        `Re-time the run’s ${workers} ranks as one job`,
      ),
    );
  }
}
