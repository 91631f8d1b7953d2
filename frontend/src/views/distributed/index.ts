// The Distributed page (run-level): every rank of a run as one job. Job header, time per
// rank (computation / overlap / communication / other), synchronizing vs transfer,
// collectives, stragglers with causes and links to the trace view, GPUs per rank.
// The route does its own loading: it answers 202 with ranks_done/ranks_total until the
// per-rank summaries are in, and this page polls it.

import { describeError, isAbort } from '../../api/client';
import type {
  DistributedLoading,
  DistributedResponse,
  DistributedStep,
  Recommendation,
} from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { createChart, type ChartHandle, type OptionBuilder } from '../../components/chart';
import { h, replaceChildren, type Children } from '../../components/dom';
import { formatBytes, formatCount, formatDuration, formatPercent } from '../../components/format';
import { recommendationCard } from '../../components/recommendation';
import { HashParamStore, type HashParams } from '../../components/hash_params';
import { HeatStrip } from '../../components/heat_strip';
import { VirtualTable, type Column } from '../../components/table';
import { onSortChange } from '../../components/table_tools';
import { formatSort, parseSort } from '../../components/url_values';
import { ensureStyle } from '../../components/view_style';
import { UrlStateStore } from '../../shell/url_state';
import { tile } from '../page_kit';
import type { RunViewContext, RunViewDef, ViewHandle } from '../types';

import { evidenceParts } from '../overview/model';
import { heatRows, rankTooltipLines, stackedByRank, type SeriesStyle } from './charts';
import css from './distributed.css';
import {
  allWarnings,
  brokenRanks,
  CAUSE_HELP,
  causeLabel,
  collectiveRows,
  deviceMemory,
  excessParts,
  lateness,
  findJobStep,
  formatRanks,
  gpuRows,
  HEAT_STRIP_MIN_RANKS,
  jobSummary,
  lateRanks,
  PART_COLOR,
  PART_HELP,
  PART_LABEL,
  PARTS,
  parseRank,
  pct,
  rankProgress,
  rankRows,
  rowShare,
  seriesByRank,
  stepOptions,
  stragglerRows,
  SYNC_COLOR,
  SYNC_HELP,
  SYNC_LABEL,
  SYNC_PARTS,
  traceLinkState,
  URL_KEYS,
  waitShare,
  type CollectiveRow,
  type GpuRow,
  type Part,
  type RankRow,
  type SeriesData,
  type StragglerRow,
  type SyncPart,
  type ValueKey,
} from './model';
import { formatBandwidth, plural } from './text';

export const POLL_MS = 500;

const PART_STYLE: SeriesStyle<Part> = { label: PART_LABEL, color: PART_COLOR, help: PART_HELP };
const SYNC_STYLE: SeriesStyle<SyncPart> = { label: SYNC_LABEL, color: SYNC_COLOR, help: SYNC_HELP };

const CAUSE_COLOR: Record<string, string> = {
  computation: PART_COLOR.computation,
  dataloader: '#edc948',
  host_gap: PART_COLOR.other,
  communication: PART_COLOR.communication,
  arrived_late: '#b07aa1',
  unknown: 'transparent',
};

function section(anchor: string, title: string, ...children: Children[]): HTMLElement {
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

function num(text: string): HTMLElement {
  return h('span', { class: 'ks-num' }, text);
}

function valueAttrs(testid: string, value: number | null | undefined): Record<string, string> {
  return {
    'data-testid': testid,
    'data-value': value === null || value === undefined ? '' : String(value),
  };
}

/** A duration with its share underneath (as the Overview's table). */
function durationCell(value: number | null | undefined, pctValue: number | null): Children {
  if (value === null || value === undefined) return h('span', { class: 'ks-muted' }, '—');
  return h(
    'span',
    { class: value === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
    num(formatDuration(value)),
    pctValue !== null ? h('span', { class: 'ks-pct' }, formatPercent(pctValue)) : null,
  );
}

// ----- the page ------------------------------------------------------------------------------

class DistributedPage {
  private readonly root: HTMLElement;
  private readonly ctx: RunViewContext;
  private readonly disposers: (() => void)[] = [];
  private charts: ChartHandle[] = [];
  private heat: HeatStrip[] = [];
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
      this.showError(describeError(error));
    }
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
    this.clearCharts();
    this.rankTable?.destroy();
    this.collectiveTable?.destroy();
    this.stragglerTable?.destroy();
    this.root.remove();
  }

  scrollTo(anchor: string): boolean {
    return scrollToAnchor(this.root, anchor);
  }

  // ----- loading and errors -----

  private showLoading(progress: DistributedLoading | null, seconds: number): void {
    const p = rankProgress(progress?.ranks_done ?? 0, progress?.ranks_total ?? 0);
    const fill = h('div', { class: 'ks-progress-bar' });
    const bar = h('div', { class: 'ks-progress', role: 'progressbar' }, fill);
    if (p.percent !== null) {
      fill.style.width = `${p.percent}%`;
      bar.setAttribute('aria-valuenow', String(Math.round(p.percent)));
    } else {
      bar.classList.add('ks-progress-indeterminate');
    }
    const detail = progress ? p.text : 'Asking the server…';
    replaceChildren(
      this.root,
      h(
        'div',
        {
          class: 'ks-panel ks-loading',
          testid: 'distributed-loading',
          dataset: { ranksDone: String(p.done), ranksTotal: String(p.total) },
        },
        h('h3', null, `Analysing every rank of ${this.ctx.run}…`),
        bar,
        h(
          'p',
          { class: 'ks-muted' },
          seconds >= 1 ? `${detail} · ${Math.floor(seconds)} s` : detail,
        ),
        h(
          'p',
          { class: 'ks-muted ks-small' },
          'Each rank’s trace is summarized once in the background and cached; large jobs take a while the first time.',
        ),
      ),
    );
  }

  private showError(message: string): void {
    replaceChildren(
      this.root,
      h(
        'div',
        { class: 'ks-panel ks-error', testid: 'distributed-error', role: 'alert' },
        h('h3', null, 'Could not analyse this run as a distributed job'),
        h('p', { class: 'ks-error-message' }, message),
        h(
          'button',
          {
            class: 'ks-link-button ks-dist-retry',
            attrs: { type: 'button' },
            on: { click: () => void this.start() },
          },
          'Retry',
        ),
      ),
    );
  }

  // ----- the view -----

  private async show(view: DistributedResponse): Promise<void> {
    const { ctx } = this;
    this.view = view;
    const state = this.store.read();
    this.urlState = state;
    const stepName = state[URL_KEYS.step];
    this.step = stepName === undefined ? undefined : findJobStep(view, stepName);
    this.scopeRank = parseRank(view, state[URL_KEYS.rank]);

    const manyRanks = view.ranks.length >= HEAT_STRIP_MIN_RANKS;
    const page = h(
      'div',
      { class: 'ks-dist-page' },
      this.header(view),
      this.notices(view),
      this.summary(view),
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
    const breakdownEl = h('div', {
      class: 'ks-dist-chart',
      testid: 'rank-breakdown-chart',
      dataset: { mode: manyRanks ? 'heat' : 'bars' },
    });
    const syncEl = h('div', {
      class: 'ks-dist-chart',
      testid: 'rank-sync-chart',
      dataset: { mode: manyRanks ? 'heat' : 'bars' },
    });
    if (manyRanks) {
      breakdownEl.style.height = 'auto';
      syncEl.style.height = 'auto';
    }
    page.append(
      ...this.adviceSection(view),
      this.rankSection(view, breakdownEl, syncEl, manyRanks),
      this.collectiveSection(view),
      this.stragglerSection(view),
      this.gpuSection(view),
    );
    await this.renderCharts(breakdownEl, syncEl, manyRanks);
    if (ctx.signal.aborted) return;
    this.root.dataset.ready = 'true';
  }

  // ----- advice -----

  private adviceSection(view: DistributedResponse): HTMLElement[] {
    const recs = view.recommendations;
    if (!recs.length) return [];
    return [
      section(
        'advice',
        'Advice',
        h(
          'div',
          { class: 'ks-recs' },
          recs.map((r) => this.adviceCard(r)),
        ),
      ),
    ];
  }

  private adviceCard(rec: Recommendation): HTMLElement {
    const anchor = rec.link?.view === 'distributed' ? rec.link.anchor : null;
    const show = anchor
      ? h(
          'button',
          {
            class: 'ks-link-button',
            attrs: { type: 'button' },
            on: { click: () => scrollToAnchor(this.root, anchor) },
          },
          `Show ${anchor}`,
        )
      : null;
    return recommendationCard(rec, evidenceParts(rec.evidence), show);
  }

  private header(view: DistributedResponse): HTMLElement {
    return h(
      'header',
      { class: 'ks-view-head' },
      h('h2', null, 'Distributed'),
      h(
        'p',
        { class: 'ks-muted' },
        `${view.run} · span ${view.span} · ${plural(view.ranks.length, 'rank')}${view.errors.length ? ` (+${view.errors.length} unreadable)` : ''}`,
      ),
    );
  }

  private notices(view: DistributedResponse): Children {
    const out: HTMLElement[] = [];
    const broken = brokenRanks(view.errors);
    if (broken.length) {
      out.push(
        h(
          'div',
          { class: 'ks-notice ks-dist-errors', testid: 'rank-errors', role: 'alert' },
          h(
            'strong',
            null,
            `${plural(broken.length, 'rank')} could not be read; ${view.ranks.length ? `the other ${plural(view.ranks.length, 'rank')} are shown` : 'no rank is left to show'}.`,
          ),
          h(
            'ul',
            null,
            broken.map((b) =>
              h(
                'li',
                {
                  class: 'ks-dist-error-item',
                  testid: `rank-error-${b.worker}`,
                  dataset: { worker: b.worker },
                },
                h('strong', null, `${b.worker} (span ${b.span})`),
                ': ',
                h(
                  'span',
                  { class: 'ks-dist-error-message', testid: 'rank-error-message' },
                  b.message,
                ),
                b.fields.length
                  ? h(
                      'div',
                      { class: 'ks-dist-error-fields' },
                      b.fields.map(([k, v]) => h('span', null, `${k}: ${v}`)),
                    )
                  : null,
              ),
            ),
          ),
        ),
      );
    }
    const warnings = allWarnings(view);
    if (warnings.length) {
      out.push(
        h(
          'div',
          { class: 'ks-notice ks-notice-warn', testid: 'distributed-warnings', role: 'note' },
          h('strong', null, plural(warnings.length, 'warning')),
          h(
            'ul',
            null,
            warnings.map((w) => h('li', null, w)),
          ),
        ),
      );
    }
    return out;
  }

  private summary(view: DistributedResponse): HTMLElement {
    const s = jobSummary(view);
    return h(
      'div',
      { class: 'ks-tiles', testid: 'distributed-summary' },
      tile(
        'Ranks found',
        s.ranksText,
        s.worldSize === null
          ? 'world size not recorded'
          : s.missingRanks
            ? `world size ${s.worldSize}: ${s.missingRanks} missing`
            : s.worldSize < s.ranksFound
              ? `more than the recorded world size (${s.worldSize})`
              : `world size ${s.worldSize}`,
        'tile-ranks',
      ),
      tile(
        'Backend',
        s.backend,
        s.processGroups ? plural(s.processGroups, 'process group') : 'no process groups recorded',
        'tile-backend',
      ),
      tile('Devices', s.mode, s.broken ? `${plural(s.broken, 'rank')} unreadable` : undefined),
      tile('Median rank time', formatDuration(s.medianStepTime), `over ${plural(s.steps, 'step')}`),
      tile(
        'Communication',
        formatPercent(s.communicationShare),
        'not overlapped, of the step time',
      ),
      tile('Synchronizing', formatPercent(s.waitShare), 'of the collectives’ time, waiting'),
    );
  }

  private processGroups(view: DistributedResponse): HTMLElement | null {
    if (!view.process_groups.length) return null;
    const rows = view.process_groups;
    const table = new VirtualTable({
      columns: [
        {
          key: 'name',
          label: 'Group',
          minWidth: 70,
          grow: 0.5,
          cell: (g) => g.name,
          sortValue: (g) => g.name,
        },
        {
          key: 'description',
          label: 'Description',
          minWidth: 140,
          cell: (g) => g.description ?? '—',
        },
        { key: 'backend', label: 'Backend', minWidth: 150, cell: (g) => g.backend_config ?? '—' },
        {
          key: 'size',
          label: 'Size',
          align: 'right',
          minWidth: 60,
          grow: 0.4,
          cell: (g) => num(g.size === null ? '—' : formatCount(g.size)),
          sortValue: (g) => g.size,
        },
        { key: 'ranks', label: 'Ranks', minWidth: 160, grow: 2, cell: (g) => formatRanks(g.ranks) },
      ],
      rows,
      testid: 'process-groups-table',
      caption: 'Process groups',
      maxHeight: 220,
      rowHeight: 32,
    });
    this.disposers.push(() => table.destroy());
    return h(
      'details',
      { class: 'ks-section', testid: 'process-groups', attrs: { open: rows.length <= 8 } },
      h('summary', { class: 'ks-subtitle' }, `Process groups (${rows.length})`),
      table.element,
    );
  }

  // ----- time per rank -----

  private rankSection(
    view: DistributedResponse,
    breakdownEl: HTMLElement,
    syncEl: HTMLElement,
    manyRanks: boolean,
  ): HTMLElement {
    const options = stepOptions(view);
    const stepSelect = h('select', {
      class: 'ks-select',
      testid: 'step-select',
      attrs: { 'aria-label': 'Step' },
      on: { change: () => this.chooseStep(stepSelect.value) },
    });
    replaceChildren(
      stepSelect,
      options.map((o) => h('option', { attrs: { value: o.value } }, o.label)),
    );
    stepSelect.value = this.step?.name ?? '';
    this.stepSelect = stepSelect;

    const breakdownTitle = h('h4', { class: 'ks-card-title' });
    const syncTitle = h('h4', { class: 'ks-card-title' });
    this.chartTitles = [breakdownTitle, syncTitle];
    this.updateChartTitles();
    const heatNote = manyRanks
      ? h(
          'p',
          { class: 'ks-dist-chart-note' },
          `${view.ranks.length} ranks: one column per rank, colour strength relative to the largest rank in each row. Hover for numbers, click to pick a rank.`,
        )
      : null;

    const table = new VirtualTable<RankRow>({
      columns: this.rankColumns(view),
      rows: rankRows(view, this.step),
      rowAttrs: (row) => {
        const attrs: Record<string, string> = { 'data-rank': String(row.rank) };
        if (row.rank === this.scopeRank) attrs['data-selected'] = '';
        return attrs;
      },
      testid: 'rank-table',
      caption: 'Time per rank',
      maxHeight: 440,
      sort: parseSort(this.urlState[URL_KEYS.rankSort], this.rankKeys(view)),
      emptyText: 'No ranks.',
      // Dropped first, in order, when too narrow (1280 px); the Columns menu shows them.
      optional: ['host', 'transfer', 'late'],
    });
    this.rankTable = table;
    table.element.classList.add('ks-dist-table-rows');
    this.bindSort(table, this.rankColumns(view), URL_KEYS.rankSort);
    const onRowClick = (event: MouseEvent): void => {
      const target = event.target instanceof Element ? event.target : null;
      const row = target?.closest<HTMLElement>('.ks-twindow [data-rank]');
      if (row?.dataset.rank !== undefined) this.toggleRank(Number(row.dataset.rank));
    };
    table.element.addEventListener('click', onRowClick);

    return section(
      'ranks',
      'Time per rank',
      h(
        'div',
        { class: 'ks-dist-controls' },
        field('Step', stepSelect),
        h(
          'p',
          { class: 'ks-muted ks-small ks-note' },
          'The four parts add up to the step time: computation not overlapped, computation during communication, communication not overlapped, the rest.',
        ),
      ),
      h(
        'div',
        { class: manyRanks ? 'ks-dist-charts ks-dist-charts-heat' : 'ks-dist-charts' },
        h('div', { class: 'ks-card ks-chart-card' }, breakdownTitle, breakdownEl, heatNote),
        h(
          'div',
          { class: 'ks-card ks-chart-card', dataset: { anchor: 'sync' } },
          syncTitle,
          syncEl,
          h(
            'p',
            { class: 'ks-dist-chart-note' },
            'Time in collectives: waiting for the last rank to arrive vs. the rest (transfer).',
          ),
        ),
      ),
      h(
        'p',
        { class: 'ks-muted ks-small' },
        'Click a column header to sort; click a rank to see its collectives.',
      ),
      table.element,
    );
  }

  private rankKeys(view: DistributedResponse): string[] {
    return this.rankColumns(view).map((c) => c.key);
  }

  private rankColumns(view: DistributedResponse): Column<RankRow>[] {
    const hasHost = view.ranks.some((r) => r.host);
    const id = (row: RankRow, what: string): string => `rank-${row.rank}-${what}`;
    const columns: Column<RankRow>[] = [
      {
        key: 'rank',
        label: 'Rank',
        minWidth: 66,
        grow: 0.5,
        cell: (row) =>
          h(
            'span',
            { class: 'ks-dist-rank-cell' },
            num(String(row.rank)),
            row.partial
              ? h(
                  'span',
                  { class: 'ks-dist-tag', title: 'The trace file was cut short' },
                  'partial',
                )
              : null,
          ),
        sortValue: (row) => row.rank,
        cellAttrs: (row) => valueAttrs(id(row, 'rank'), row.rank),
      },
      {
        key: 'worker',
        label: 'Worker',
        minWidth: 110,
        grow: 1.4,
        title:
          'The trace file’s worker name (rank from distributedInfo, the file name, or the order)',
        cell: (row) => h('span', { title: `rank from ${row.rankSource}` }, row.worker),
        sortValue: (row) => row.worker,
        cellAttrs: (row) => ({ 'data-testid': id(row, 'worker') }),
      },
    ];
    if (hasHost) {
      columns.push({
        key: 'host',
        label: 'Host',
        minWidth: 70,
        cell: (row) => row.host ?? '—',
        sortValue: (row) => row.host,
      });
    }
    columns.push({
      key: 'step_time',
      label: 'Step time',
      title: 'The rank’s time in the step (all steps: the sum of its steps)',
      align: 'right',
      minWidth: 86,
      cell: (row) => num(formatDuration(row.values?.step_time)),
      sortValue: (row) => row.values?.step_time,
      cellAttrs: (row) => valueAttrs(id(row, 'step_time'), row.values?.step_time),
    });
    for (const part of PARTS) {
      columns.push({
        key: part,
        label: PART_LABEL[part],
        swatch: PART_COLOR[part],
        title: `${PART_HELP[part]} (click to sort)`,
        align: 'right',
        minWidth: part === 'communication' ? 126 : part === 'computation' ? 120 : 86,
        cell: (row) => durationCell(row.values?.[part], rowShare(row, part)),
        sortValue: (row) => row.values?.[part],
        cellAttrs: (row) => valueAttrs(id(row, part), row.values?.[part]),
      });
    }
    const syncColumn = (part: SyncPart): Column<RankRow> => ({
      key: part,
      label: part === 'sync_wait' ? 'Sync wait' : 'Transfer',
      swatch: SYNC_COLOR[part],
      title: `${SYNC_HELP[part]} (share of the rank’s collective time)`,
      align: 'right',
      minWidth: 90,
      cell: (row) => {
        const w = waitShare(row.values);
        return durationCell(
          row.values?.[part],
          w === null ? null : part === 'sync_wait' ? w : 100 - w,
        );
      },
      sortValue: (row) => row.values?.[part],
      cellAttrs: (row) => valueAttrs(id(row, part), row.values?.[part]),
    });
    columns.push(syncColumn('sync_wait'), syncColumn('transfer'));
    columns.push(
      {
        key: 'late',
        label: 'Late',
        title: 'Steps in which this rank was the straggler, and by how much in total',
        align: 'right',
        minWidth: 80,
        cell: (row) =>
          row.stepsLate
            ? h(
                'span',
                { class: 'ks-stack' },
                num(formatDuration(row.lateBy)),
                h('span', { class: 'ks-pct' }, plural(row.stepsLate, 'step')),
              )
            : h('span', { class: 'ks-muted' }, '—'),
        sortValue: (row) => row.lateBy,
        cellAttrs: (row) => valueAttrs(id(row, 'late'), row.lateBy),
      },
      {
        key: 'unmatched',
        label: 'Unmatched',
        title: 'Collectives no other rank’s trace has (all steps)',
        align: 'right',
        minWidth: 86,
        grow: 0.6,
        cell: (row) => num(formatCount(row.unmatched)),
        sortValue: (row) => row.unmatched,
        cellAttrs: (row) => valueAttrs(id(row, 'unmatched'), row.unmatched),
      },
    );
    return columns;
  }

  private updateChartTitles(): void {
    const suffix = this.step ? ` — ${this.step.name}` : ' — all steps';
    const [breakdown, sync] = this.chartTitles;
    if (breakdown) breakdown.textContent = `Computation vs communication per rank${suffix}`;
    if (sync) sync.textContent = `Synchronizing vs transfer per rank${suffix}`;
  }

  private clearCharts(): void {
    for (const chart of this.charts.splice(0)) chart.dispose();
    for (const strip of this.heat.splice(0)) strip.destroy();
  }

  private async renderCharts(
    breakdownEl: HTMLElement,
    syncEl: HTMLElement,
    manyRanks: boolean,
  ): Promise<void> {
    const view = this.view;
    if (!view) return;
    const rows = rankRows(view, this.step);
    const parts = seriesByRank(rows, PARTS);
    const sync = seriesByRank(rows, SYNC_PARTS);
    const stepTime = (row: RankRow): number => row.values?.step_time ?? 0;
    const collectiveTime = (row: RankRow): number =>
      (row.values?.sync_wait ?? 0) + (row.values?.transfer ?? 0);
    if (manyRanks) {
      const strip = <K extends ValueKey>(
        el: HTMLElement,
        data: SeriesData<K>,
        style: SeriesStyle<K>,
        keys: readonly K[],
        base: (row: RankRow) => number,
        testid: string,
      ): HeatStrip => {
        const heat = new HeatStrip(
          {
            columns: data.labels,
            rows: heatRows(data, style),
            axisName: 'Rank',
            tooltip: (c) => rankTooltipLines(rows[c], keys, style, base),
            onSelect: (c) => {
              const rank = rows[c]?.rank;
              if (rank !== undefined) this.toggleRank(rank);
            },
            selected: this.selectedColumn(rows),
            testid,
          },
          this.ctx.themes,
        );
        replaceChildren(el, heat.element);
        return heat;
      };
      this.heat.push(
        strip(breakdownEl, parts, PART_STYLE, PARTS, stepTime, 'rank-breakdown-heat'),
        strip(syncEl, sync, SYNC_STYLE, SYNC_PARTS, collectiveTime, 'rank-sync-heat'),
      );
      return;
    }
    const charts: [HTMLElement, OptionBuilder][] = [
      [breakdownEl, stackedByRank(parts, rows, PART_STYLE, stepTime, 'time')],
      [syncEl, stackedByRank(sync, rows, SYNC_STYLE, collectiveTime, 'sync')],
    ];
    for (const [el, option] of charts) {
      const chart = await createChart(el, option, this.ctx.themes);
      if (this.ctx.signal.aborted) {
        chart.dispose(); // the user left while ECharts loaded
        return;
      }
      this.charts.push(chart);
    }
  }

  private selectedColumn(rows: readonly RankRow[]): number | undefined {
    if (this.scopeRank === undefined) return undefined;
    const index = rows.findIndex((r) => r.rank === this.scopeRank);
    return index >= 0 ? index : undefined;
  }

  private refreshCharts(): void {
    const view = this.view;
    if (!view) return;
    const rows = rankRows(view, this.step);
    const stepTime = (row: RankRow): number => row.values?.step_time ?? 0;
    const collectiveTime = (row: RankRow): number =>
      (row.values?.sync_wait ?? 0) + (row.values?.transfer ?? 0);
    const [breakdownChart, syncChart] = this.charts;
    breakdownChart?.update(
      stackedByRank(seriesByRank(rows, PARTS), rows, PART_STYLE, stepTime, 'time'),
    );
    syncChart?.update(
      stackedByRank(seriesByRank(rows, SYNC_PARTS), rows, SYNC_STYLE, collectiveTime, 'sync'),
    );
    const [breakdownHeat, syncHeat] = this.heat;
    breakdownHeat?.update({
      rows: heatRows(seriesByRank(rows, PARTS), PART_STYLE),
      tooltip: (c) => rankTooltipLines(rows[c], PARTS, PART_STYLE, stepTime),
      selected: this.selectedColumn(rows),
    });
    syncHeat?.update({
      rows: heatRows(seriesByRank(rows, SYNC_PARTS), SYNC_STYLE),
      tooltip: (c) => rankTooltipLines(rows[c], SYNC_PARTS, SYNC_STYLE, collectiveTime),
      selected: this.selectedColumn(rows),
    });
  }

  private chooseStep(name: string): void {
    const view = this.view;
    if (!view) return;
    this.step = name ? findJobStep(view, name) : undefined;
    if (this.stepSelect) this.stepSelect.value = this.step?.name ?? '';
    this.store.write({ [URL_KEYS.step]: this.step?.name });
    this.updateChartTitles();
    this.refreshCharts();
    this.rankTable?.setRows(rankRows(view, this.step));
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
    this.rankTable?.setRows(rankRows(view, this.step));
    const rows = rankRows(view, this.step);
    for (const strip of this.heat) strip.update({ selected: this.selectedColumn(rows) });
  }

  private bindSort<R>(table: VirtualTable<R>, columns: readonly Column<R>[], urlKey: string): void {
    onSortChange(table, columns, (sort) => this.store.write({ [urlKey]: formatSort(sort) }));
  }

  // ----- collectives -----

  private collectiveSection(view: DistributedResponse): HTMLElement {
    const scope = h('select', {
      class: 'ks-select',
      testid: 'collective-scope',
      attrs: { 'aria-label': 'Collectives of' },
      on: {
        change: () => this.chooseRank(scope.value === '' ? undefined : Number(scope.value)),
      },
    });
    replaceChildren(scope, [
      h('option', { attrs: { value: '' } }, 'The whole job (all ranks)'),
      ...view.ranks.map((r) =>
        h('option', { attrs: { value: String(r.rank) } }, `Rank ${r.rank} · ${r.worker}`),
      ),
    ]);
    scope.value = this.scopeRank === undefined ? '' : String(this.scopeRank);
    this.scopeSelect = scope;

    const id = (row: CollectiveRow, what: string): string => `coll-${row.name}-${what}`;
    const columns: Column<CollectiveRow>[] = [
      {
        key: 'name',
        label: 'Collective',
        minWidth: 140,
        grow: 1.4,
        cell: (c) => c.name,
        sortValue: (c) => c.name,
        cellAttrs: (c) => ({ 'data-testid': id(c, 'name') }),
      },
      {
        key: 'calls',
        label: 'Calls',
        align: 'right',
        minWidth: 70,
        grow: 0.6,
        cell: (c) => num(formatCount(c.calls)),
        sortValue: (c) => c.calls,
        cellAttrs: (c) => valueAttrs(id(c, 'calls'), c.calls),
      },
      {
        key: 'bytes',
        label: 'Bytes',
        title: 'Data size of the calls whose size the trace records',
        align: 'right',
        minWidth: 96,
        cell: (c) => num(formatBytes(c.bytes)),
        sortValue: (c) => c.bytes,
        cellAttrs: (c) => valueAttrs(id(c, 'bytes'), c.bytes),
      },
      {
        key: 'total_us',
        label: 'Total time',
        align: 'right',
        minWidth: 96,
        cell: (c) => num(formatDuration(c.total_us)),
        sortValue: (c) => c.total_us,
        cellAttrs: (c) => valueAttrs(id(c, 'total_us'), c.total_us),
      },
      {
        key: 'avg_us',
        label: 'Avg time',
        align: 'right',
        minWidth: 90,
        cell: (c) => num(formatDuration(c.avg_us)),
        sortValue: (c) => c.avg_us,
        cellAttrs: (c) => valueAttrs(id(c, 'avg_us'), c.avg_us),
      },
      {
        key: 'algbw_gbps',
        label: 'Algorithm BW',
        title: 'Size / transfer time (GB/s), as nccl-tests',
        align: 'right',
        minWidth: 104,
        cell: (c) => num(formatBandwidth(c.algbw_gbps)),
        sortValue: (c) => c.algbw_gbps,
        cellAttrs: (c) => valueAttrs(id(c, 'algbw_gbps'), c.algbw_gbps),
      },
      {
        key: 'busbw_gbps',
        label: 'Bus BW',
        title: 'Algorithm bandwidth × NCCL’s bus factor for the collective and group size (GB/s)',
        align: 'right',
        minWidth: 96,
        cell: (c) => num(formatBandwidth(c.busbw_gbps)),
        sortValue: (c) => c.busbw_gbps,
        cellAttrs: (c) => valueAttrs(id(c, 'busbw_gbps'), c.busbw_gbps),
      },
      {
        key: 'sync_wait_us',
        label: 'Sync wait',
        swatch: SYNC_COLOR.sync_wait,
        title: SYNC_HELP.sync_wait,
        align: 'right',
        minWidth: 100,
        cell: (c) => durationCell(c.sync_wait_us, c.wait_pct),
        sortValue: (c) => c.sync_wait_us,
        cellAttrs: (c) => valueAttrs(id(c, 'sync_wait_us'), c.sync_wait_us),
      },
      {
        key: 'transfer_us',
        label: 'Transfer',
        swatch: SYNC_COLOR.transfer,
        title: SYNC_HELP.transfer,
        align: 'right',
        minWidth: 100,
        cell: (c) => durationCell(c.transfer_us, c.wait_pct === null ? null : 100 - c.wait_pct),
        sortValue: (c) => c.transfer_us,
        cellAttrs: (c) => valueAttrs(id(c, 'transfer_us'), c.transfer_us),
      },
    ];
    const keys = columns.map((c) => c.key);
    const table = new VirtualTable<CollectiveRow>({
      columns,
      rows: collectiveRows(view, this.scopeRank),
      rowAttrs: (c) => ({ 'data-collective': c.name }),
      testid: 'collective-table',
      caption: 'Collectives per type',
      maxHeight: 320,
      sort: parseSort(this.urlState[URL_KEYS.collectiveSort], keys),
      emptyText: 'No collectives in these traces.',
    });
    this.collectiveTable = table;
    this.bindSort(table, columns, URL_KEYS.collectiveSort);
    return section(
      'collectives',
      'Collectives',
      h(
        'div',
        { class: 'ks-dist-controls' },
        field('Collectives of', scope),
        h(
          'p',
          { class: 'ks-muted ks-small ks-note' },
          'Per collective type. Bandwidth counts only calls whose size is known, over their transfer time (waiting excluded).',
        ),
      ),
      table.element,
    );
  }

  // ----- stragglers -----

  private stragglerSection(view: DistributedResponse): HTMLElement {
    const late = lateRanks(view);
    const columns: Column<StragglerRow>[] = [
      {
        key: 'step',
        label: 'Step',
        minWidth: 130,
        grow: 1.2,
        cell: (r) => r.step,
        sortValue: (r) => r.number ?? r.step,
        cellAttrs: (r) => ({ 'data-testid': `straggler-${r.step}-step` }),
      },
      {
        key: 'ranks',
        label: 'Ranks',
        align: 'right',
        minWidth: 64,
        grow: 0.5,
        cell: (r) => num(formatCount(r.ranks)),
        sortValue: (r) => r.ranks,
      },
      {
        key: 'median',
        label: 'Median step',
        align: 'right',
        minWidth: 96,
        cell: (r) => num(formatDuration(r.median)),
        sortValue: (r) => r.median,
      },
      {
        key: 'max',
        label: 'Slowest step',
        align: 'right',
        minWidth: 96,
        cell: (r) => num(formatDuration(r.max)),
        sortValue: (r) => r.max,
      },
      {
        key: 'rank',
        label: 'Late rank',
        minWidth: 130,
        grow: 1.2,
        cell: (r) =>
          r.straggler
            ? h(
                'span',
                null,
                num(String(r.straggler.rank)),
                h('span', { class: 'ks-muted' }, ` · ${r.straggler.worker}`),
              )
            : h('span', { class: 'ks-muted', title: 'Fewer than two ranks have this step' }, '—'),
        sortValue: (r) => r.straggler?.rank,
        cellAttrs: (r) => valueAttrs(`straggler-${r.step}-rank`, r.straggler?.rank),
      },
      {
        key: 'late_by',
        label: 'Late by',
        title:
          'Its arrival at the step’s first common collective (else the step end) minus the median of the other ranks',
        align: 'right',
        minWidth: 92,
        cell: (r) => num(formatDuration(r.straggler?.late_by_us)),
        sortValue: (r) => r.straggler?.late_by_us,
        cellAttrs: (r) => valueAttrs(`straggler-${r.step}-late_by`, r.straggler?.late_by_us),
      },
      {
        key: 'cause',
        label: 'Cause',
        title: 'The factor in which the late rank exceeds the other ranks’ median the most',
        minWidth: 196,
        grow: 1.5,
        cell: (r) => {
          const s = r.straggler;
          if (!s) return h('span', { class: 'ks-muted' }, '—');
          const excess = excessParts(s);
          return h(
            'span',
            {
              class: 'ks-dist-cause',
              title: [
                CAUSE_HELP[s.cause] ?? '',
                ...lateness(s),
                `Excess over the other ranks’ median: ${excess.join(', ')}`,
              ].join('\n'),
            },
            h('span', {
              class: 'ks-dist-cause-dot',
              style: `background:${CAUSE_COLOR[s.cause] ?? 'transparent'}`,
            }),
            causeLabel(s.cause),
            s.cause !== 'unknown'
              ? h('span', { class: 'ks-muted' }, `+${formatDuration(s.cause_excess_us)}`)
              : null,
          );
        },
        sortValue: (r) => r.straggler?.cause,
        cellAttrs: (r) => ({
          'data-testid': `straggler-${r.step}-cause`,
          'data-value': r.straggler?.cause ?? '',
        }),
      },
      {
        key: 'measured',
        label: 'Measured at',
        minWidth: 110,
        grow: 0.8,
        cell: (r) =>
          r.straggler
            ? r.straggler.measured === 'first_collective'
              ? 'first collective'
              : r.straggler.measured.replace(/_/g, ' ')
            : '—',
        sortValue: (r) => r.straggler?.measured,
      },
      {
        key: 'trace',
        label: 'Trace',
        minWidth: 120,
        cell: (r) => this.traceLink(r),
      },
    ];
    const keys = columns.map((c) => c.key);
    const table = new VirtualTable<StragglerRow>({
      columns,
      rows: stragglerRows(view),
      rowAttrs: (r) => {
        const attrs: Record<string, string> = { 'data-step': r.step };
        if (this.step?.name === r.step) attrs['data-selected'] = '';
        return attrs;
      },
      testid: 'straggler-table',
      optional: ['measured'],
      caption: 'Stragglers per step',
      maxHeight: 360,
      sort: parseSort(this.urlState[URL_KEYS.stragglerSort], keys),
      emptyText: 'No steps found in these traces.',
    });
    this.stragglerTable = table;
    this.bindSort(table, columns, URL_KEYS.stragglerSort);
    return section(
      'stragglers',
      'Stragglers',
      late.length
        ? h(
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
              ? h(
                  'li',
                  { class: 'ks-muted' },
                  `and ${view.stragglers.length - late.length} more ranks`,
                )
              : null,
          )
        : null,
      h(
        'p',
        { class: 'ks-muted ks-small' },
        'Per step: the rank that reached the step’s first common collective last, by how much (against the median of the others) and why. The link opens that step of that rank in the trace view.',
      ),
      table.element,
    );
  }

  private traceLink(row: StragglerRow): Children {
    const s = row.straggler;
    if (!s) return h('span', { class: 'ks-muted' }, '—');
    const state = traceLinkState(this.ctx.run, s.window);
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
        attrs: { href: new UrlStateStore().href(state), target: '_top' },
      },
      'Open in trace ↗',
    );
  }

  // ----- GPUs -----

  private gpuSection(view: DistributedResponse): HTMLElement {
    const rows = gpuRows(view);
    if (!rows.length) {
      return section(
        'gpus',
        'GPUs per rank',
        h(
          'p',
          { class: 'ks-muted ks-note', testid: 'no-gpus' },
          view.mode === 'cpu'
            ? 'No GPU in these traces: the ranks ran on CPUs.'
            : 'The traces record no GPU.',
        ),
      );
    }
    const d = (row: GpuRow) => row.device;
    const columns: Column<GpuRow>[] = [
      {
        key: 'rank',
        label: 'Rank',
        minWidth: 64,
        grow: 0.5,
        cell: (r) => num(String(r.rank)),
        sortValue: (r) => r.rank,
        cellAttrs: (r) => valueAttrs(`gpu-${r.id}-rank`, r.rank),
      },
      {
        key: 'worker',
        label: 'Worker',
        minWidth: 120,
        grow: 1.2,
        cell: (r) => r.worker,
        sortValue: (r) => r.worker,
      },
      {
        key: 'gpu',
        label: 'GPU',
        align: 'right',
        minWidth: 56,
        grow: 0.4,
        cell: (r) => num(String(d(r).id)),
        sortValue: (r) => d(r).id,
      },
      {
        key: 'name',
        label: 'Device',
        minWidth: 150,
        grow: 1.6,
        cell: (r) => d(r).name ?? '—',
        sortValue: (r) => d(r).name,
      },
      {
        key: 'memory',
        label: 'Memory',
        align: 'right',
        minWidth: 90,
        cell: (r) => num(deviceMemory(d(r))),
        sortValue: (r) => d(r).memory_bytes,
      },
      {
        key: 'cc',
        label: 'Compute cap.',
        align: 'right',
        minWidth: 96,
        grow: 0.6,
        cell: (r) => d(r).compute_capability ?? '—',
        sortValue: (r) => d(r).compute_capability,
      },
      {
        key: 'util',
        label: 'Utilization',
        title: 'Share of the time a kernel ran on the GPU',
        align: 'right',
        minWidth: 90,
        cell: (r) => num(pct(d(r).utilization_pct)),
        sortValue: (r) => d(r).utilization_pct,
        cellAttrs: (r) => valueAttrs(`gpu-${r.id}-util`, d(r).utilization_pct),
      },
      {
        key: 'sm',
        label: 'SM efficiency',
        align: 'right',
        minWidth: 100,
        cell: (r) => num(pct(d(r).sm_efficiency_pct)),
        sortValue: (r) => d(r).sm_efficiency_pct,
      },
      {
        key: 'occupancy',
        label: 'Occupancy',
        align: 'right',
        minWidth: 90,
        cell: (r) => num(pct(d(r).achieved_occupancy_pct)),
        sortValue: (r) => d(r).achieved_occupancy_pct,
      },
      {
        key: 'tc',
        label: 'Tensor cores',
        align: 'right',
        minWidth: 96,
        cell: (r) => num(pct(d(r).tensor_core_pct)),
        sortValue: (r) => d(r).tensor_core_pct,
      },
      {
        key: 'kernel',
        label: 'Kernel time',
        align: 'right',
        minWidth: 96,
        cell: (r) => num(formatDuration(d(r).kernel_time_us)),
        sortValue: (r) => d(r).kernel_time_us,
      },
    ];
    const table = new VirtualTable<GpuRow>({
      columns,
      rows,
      testid: 'gpu-table',
      optional: ['cc', 'memory'],
      caption: 'GPUs per rank',
      maxHeight: 320,
    });
    this.disposers.push(() => table.destroy());
    return section('gpus', 'GPUs per rank', table.element);
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
  render: renderDistributed,
};
