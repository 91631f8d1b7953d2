// The Distributed page (run-level): every rank of a run as one job. Job header, time per
// rank (computation / overlap / communication / other), synchronizing vs transfer,
// collectives, stragglers with causes and links to the trace view, GPUs per rank.
// The route does its own loading: it answers 202 with ranks_done/ranks_total until the
// per-rank summaries are in, and this page polls it. Its tables are column specs
// (columns.ts) rendered by one function (`table`); the panels around them are in head.ts,
// the per-rank charts in rank_charts.ts.

import { describeError, isAbort } from '../../api/client';
import type { DistributedLoading, DistributedResponse, DistributedStep } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { toColumns, type ColumnSpec } from '../../components/columns';
import { h, replaceChildren } from '../../components/dom';
import { HashParamStore, type HashParams } from '../../components/hash_params';
import { VirtualTable } from '../../components/table';
import { onSortChange } from '../../components/table_tools';
import { formatSort, parseSort } from '../../components/url_values';
import { ensureStyle } from '../../components/view_style';
import type { RunViewContext, RunViewDef, ViewHandle } from '../types';

import {
  COLLECTIVE_COLUMNS,
  GPU_COLUMNS,
  PROCESS_GROUP_COLUMNS,
  rankColumns,
  stragglerColumns,
} from './columns';
import css from './distributed.css';
import {
  GROUP_TABLE_LOOK,
  groupColumns,
  groupRowAttrs,
  groupSection,
  groupTraceLink,
} from './groups';
import { errorPanel, jobHeader, jobNotices, jobTiles, loadingPanel } from './head';
import {
  collectiveRows,
  findJobStep,
  gpuRows,
  HEAT_STRIP_MIN_RANKS,
  parseRank,
  rankRows,
  stragglerRows,
  URL_KEYS,
  type CollectiveRow,
  type RankRow,
  type StragglerRow,
} from './model';
import { startCritical } from './critical';
import { TABLE_LOOK, type TableLook } from './table_looks';
import { RankCharts } from './rank_charts';
import {
  adviceSection,
  chartElement,
  controls,
  lateRankList,
  markRow,
  noGpus,
  rankChartCards,
  scopeSelector,
  section,
  stepSelector,
  traceLink,
} from './sections';

export const POLL_MS = 500;

// ----- the page ------------------------------------------------------------------------------

class DistributedPage {
  private readonly root: HTMLElement;
  private readonly ctx: RunViewContext;
  readonly tables: { destroy(): void }[] = [];
  private charts: RankCharts | undefined;
  private view: DistributedResponse | undefined;
  private step: DistributedStep | undefined;
  private scopeRank: number | undefined;
  private rankTable: VirtualTable<RankRow> | undefined;
  private collectiveTable: VirtualTable<CollectiveRow> | undefined;
  private stragglerTable: VirtualTable<StragglerRow> | undefined;
  private scopeSelect: HTMLSelectElement | undefined;
  private stepSelect: HTMLSelectElement | undefined;
  private chartTitles: HTMLElement[] = [];
  /** The view's keys in TensorBoard's URL: step, rank scope, table sorts. */
  private readonly store = new HashParamStore(Object.values(URL_KEYS));
  private urlState: HashParams = {};

  constructor(root: HTMLElement, ctx: RunViewContext) {
    this.root = root;
    this.ctx = ctx;
  }

  async start(): Promise<void> {
    const { ctx } = this;
    const started = Date.now();
    this.showLoading(null, 0);
    try {
      const view = await ctx.api.getReady(
        'distributed',
        { run: ctx.run, span: ctx.span },
        ctx.signal,
        (progress) => this.showLoading(progress, (Date.now() - started) / 1000),
      );
      if (ctx.signal.aborted) return;
      await this.show(view);
    } catch (error) {
      if (isAbort(error) || ctx.signal.aborted) return;
      replaceChildren(
        this.root,
        errorPanel(describeError(error), () => void this.start()),
      );
    }
  }

  dispose(): void {
    this.charts?.dispose();
    for (const table of this.tables.splice(0)) table.destroy();
    this.root.remove();
  }

  scrollTo(anchor: string): boolean {
    return scrollToAnchor(this.root, anchor);
  }

  private showLoading(progress: DistributedLoading | null, seconds: number): void {
    replaceChildren(this.root, loadingPanel(this.ctx.run, progress, seconds));
  }

  /** The one way this page makes a table: its columns from specs, its sort kept in the URL. */
  private table<R>(
    specs: readonly ColumnSpec<R>[],
    look: TableLook,
    rows: R[],
    rowAttrs?: (row: R) => Record<string, string>,
  ): VirtualTable<R> {
    const { sortKey, ...options } = look;
    const columns = toColumns(specs);
    const sort =
      sortKey === undefined
        ? undefined
        : parseSort(
            this.urlState[sortKey],
            columns.map((c) => c.key),
          );
    const table = new VirtualTable<R>({
      ...options,
      rows,
      ...(rowAttrs ? { rowAttrs } : {}),
      columns,
      ...(sort ? { sort } : {}),
    });
    if (sortKey !== undefined) {
      onSortChange(table, columns, (next) => this.store.write({ [sortKey]: formatSort(next) }));
    }
    this.tables.push(table);
    return table;
  }

  private async show(view: DistributedResponse): Promise<void> {
    this.view = view;
    const state = this.store.read();
    this.urlState = state;
    const stepName = state[URL_KEYS.step];
    this.step = stepName === undefined ? undefined : findJobStep(view, stepName);
    this.scopeRank = parseRank(view, state[URL_KEYS.rank]);

    const page = h(
      'div',
      { class: 'ks-dist-page' },
      jobHeader(view),
      jobNotices(view),
      jobTiles(view),
      this.processGroups(view),
    );
    replaceChildren(this.root, page);
    if (view.ranks.length === 0) {
      page.appendChild(
        h(
          'p',
          { class: 'ks-muted ks-note', testid: 'distributed-empty' },
          'No rank of this run could be read.',
        ),
      );
      this.root.dataset.ready = 'true';
      return;
    }
    const manyRanks = view.ranks.length >= HEAT_STRIP_MIN_RANKS;
    const breakdownEl = chartElement('rank-breakdown-chart', manyRanks);
    const syncEl = chartElement('rank-sync-chart', manyRanks);
    page.append(
      ...adviceSection(view, this.root),
      this.rankSection(view, breakdownEl, syncEl, manyRanks),
      this.collectiveSection(view),
      this.groupSection(view),
      this.stragglerSection(view),
      startCritical(this, this.ctx, view),
      this.gpuSection(view),
    );
    const charts = new RankCharts(
      {
        themes: this.ctx.themes,
        signal: this.ctx.signal,
        toggleRank: (rank) => this.toggleRank(rank),
      },
      [breakdownEl, syncEl],
      manyRanks,
    );
    this.charts = charts;
    await charts.render(rankRows(view, this.step), this.scopeRank);
    if (this.ctx.signal.aborted) return;
    this.root.dataset.ready = 'true';
  }

  private processGroups(view: DistributedResponse): HTMLElement | null {
    const rows = view.process_groups;
    if (!rows.length) return null;
    const table = this.table(PROCESS_GROUP_COLUMNS, TABLE_LOOK.processGroups, rows);
    return h(
      'details',
      { class: 'ks-section', testid: 'process-groups', attrs: { open: rows.length <= 8 } },
      h('summary', { class: 'ks-subtitle' }, `Process groups (${rows.length})`),
      table.element,
    );
  }

  // ----- time per rank -----

  private rankTableOf(view: DistributedResponse): VirtualTable<RankRow> {
    const table = this.table(
      rankColumns(view),
      TABLE_LOOK.ranks,
      rankRows(view, this.step),
      markRow(
        'rank',
        (row) => String(row.rank),
        (row) => row.rank === this.scopeRank,
      ),
    );
    table.element.classList.add('ks-dist-table-rows');
    table.element.addEventListener('click', (event: MouseEvent) => {
      const target = event.target instanceof Element ? event.target : null;
      const row = target?.closest<HTMLElement>('.ks-twindow [data-rank]');
      if (row?.dataset.rank !== undefined) this.toggleRank(Number(row.dataset.rank));
    });
    this.rankTable = table;
    return table;
  }

  private rankSection(
    view: DistributedResponse,
    breakdownEl: HTMLElement,
    syncEl: HTMLElement,
    manyRanks: boolean,
  ): HTMLElement {
    const breakdownTitle = h('h4', { class: 'ks-card-title' });
    const syncTitle = h('h4', { class: 'ks-card-title' });
    this.chartTitles = [breakdownTitle, syncTitle];
    this.updateChartTitles();
    this.stepSelect = stepSelector(view, this.step?.name ?? '', (name) => this.chooseStep(name));
    return section(
      'ranks',
      'Time per rank',
      controls(
        'Step',
        this.stepSelect,
        'The four parts add up to the step time: computation not overlapped, computation during communication, communication not overlapped, the rest.',
      ),
      rankChartCards(view, manyRanks, [breakdownTitle, breakdownEl], [syncTitle, syncEl]),
      h(
        'p',
        { class: 'ks-muted ks-small' },
        'Click a column header to sort; click a rank to see its collectives.',
      ),
      this.rankTableOf(view).element,
    );
  }

  private updateChartTitles(): void {
    const suffix = this.step ? ` — ${this.step.name}` : ' — all steps';
    const [breakdown, sync] = this.chartTitles;
    if (breakdown) breakdown.textContent = `Computation vs communication per rank${suffix}`;
    if (sync) sync.textContent = `Synchronizing vs transfer per rank${suffix}`;
  }

  private chooseStep(name: string): void {
    const view = this.view;
    if (!view) return;
    this.step = name ? findJobStep(view, name) : undefined;
    if (this.stepSelect) this.stepSelect.value = this.step?.name ?? '';
    this.store.write({ [URL_KEYS.step]: this.step?.name });
    this.updateChartTitles();
    const rows = rankRows(view, this.step);
    this.charts?.update(rows);
    this.rankTable?.setRows(rows);
    this.stragglerTable?.setRows(stragglerRows(view));
  }

  /** Picks a rank (its collectives), or the whole job again when it is already picked. */
  private toggleRank(rank: number): void {
    this.chooseRank(rank === this.scopeRank ? undefined : rank);
  }

  private chooseRank(rank: number | undefined): void {
    const view = this.view;
    if (!view) return;
    this.scopeRank = rank;
    if (this.scopeSelect) this.scopeSelect.value = rank === undefined ? '' : String(rank);
    this.store.write({ [URL_KEYS.rank]: rank === undefined ? undefined : String(rank) });
    this.collectiveTable?.setRows(collectiveRows(view, rank));
    const rows = rankRows(view, this.step);
    this.rankTable?.setRows(rows);
    this.charts?.select(rows, rank);
  }

  // ----- collectives -----

  private collectiveSection(view: DistributedResponse): HTMLElement {
    const scope = scopeSelector(view, this.scopeRank, (rank) => this.chooseRank(rank));
    this.scopeSelect = scope;
    const table = this.table(
      COLLECTIVE_COLUMNS,
      TABLE_LOOK.collectives,
      collectiveRows(view, this.scopeRank),
      (c) => ({ 'data-collective': c.name }),
    );
    this.collectiveTable = table;
    return section(
      'collectives',
      'Collectives',
      controls(
        'Collectives of',
        scope,
        'Per collective type. Bandwidth counts only calls whose size is known, over their transfer time (waiting excluded).',
      ),
      table.element,
    );
  }

  // ----- communication groups -----

  private groupSection(view: DistributedResponse): HTMLElement {
    const columns = groupColumns((g) => groupTraceLink(this.ctx, view, g));
    const table = this.table(columns, GROUP_TABLE_LOOK, view.groups, groupRowAttrs);
    return groupSection(view, table.element);
  }

  // ----- stragglers -----

  private stragglerSection(view: DistributedResponse): HTMLElement {
    const table = this.table(
      stragglerColumns((row) => traceLink(this.ctx, row)),
      TABLE_LOOK.stragglers,
      stragglerRows(view),
      markRow(
        'step',
        (r) => r.step,
        (r) => this.step?.name === r.step,
      ),
    );
    this.stragglerTable = table;
    return section(
      'stragglers',
      'Stragglers',
      lateRankList(view),
      h(
        'p',
        { class: 'ks-muted ks-small' },
        'Per step: the rank that reached the step’s first common collective last, by how much (against the median of the others) and why. The link opens that step of that rank in the trace view.',
      ),
      table.element,
    );
  }

  // ----- GPUs -----

  private gpuSection(view: DistributedResponse): HTMLElement {
    const rows = gpuRows(view);
    const shown = rows.length ? this.table(GPU_COLUMNS, TABLE_LOOK.gpus, rows).element : null;
    return section('gpus', 'GPUs per rank', shown ?? noGpus(view));
  }
}

function renderDistributed(container: HTMLElement, ctx: RunViewContext): Promise<ViewHandle> {
  ensureStyle('distributed', css);
  const root = h('div', {
    class: 'ks-view ks-distributed',
    testid: 'distributed',
    dataset: { run: ctx.run, span: ctx.span },
  });
  container.appendChild(root);
  const page = new DistributedPage(root, ctx);
  // Mounted at once: the page shows its own progress while the server summarizes ranks.
  void page.start();
  return Promise.resolve({
    dispose: () => page.dispose(),
    scrollTo: (anchor: string) => page.scrollTo(anchor),
  });
}

export const distributedView: RunViewDef = {
  id: 'distributed',
  label: 'Distributed',
  order: 10,
  absent: 'this run has a single worker (the view compares the ranks of a job)',
  render: renderDistributed,
};
