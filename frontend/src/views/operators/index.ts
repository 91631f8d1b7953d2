// The Operator page: pies of the top operators by device and host time, a searchable,
// sortable table (by operator, or operator + input shape), CSV export, and the call
// stacks of a row. Grouping, search, sort, pie metrics and the open call stack live in
// the URL (p.kinetoscope.operators.*), so a link reopens the same state.

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { OperatorGroupBy, OperatorRow, OperatorsResponse } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { colAttrs } from '../../components/columns';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { h } from '../../components/dom';
import { formatCount, formatDuration } from '../../components/format';
import { HashParamStore } from '../../components/hash_params';
import { PieCard } from '../../components/pie_card';
import { RooflineCard } from '../../components/roofline_chart';
import { editorTarget, hostInfo, type EditorTarget } from '../../components/source_link';
import {
  ensureTableToolsStyle,
  selectField,
  toolButton,
  type SearchField,
} from '../../components/table_tools';
import { pick } from '../../components/url_values';
import {
  mountPage,
  reloadSlot,
  section,
  tableChrome,
  tablePageRoot,
  viewHead,
  whenChartsDrawn,
} from '../page_kit';
import { TablePanel } from '../table_panel';
import { WhatIfPanel, whatIfColumn } from '../whatif_panel';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { CallStackPanel } from './callstacks';
import { NARROW_HIDES, operatorColumns } from './columns';
import { notices, pieMetricSelect, tiles } from './head';
import {
  DEVICE_METRICS,
  findRow,
  GROUP_BYS,
  GROUP_LABEL,
  hasDeviceTime,
  HOST_METRICS,
  operatorCsv,
  operatorPie,
  rowId,
  searchTexts,
  shapeParam,
} from './model';
import { EDITOR_KEY, K, readState, stateUpdate, type State } from './state';

/** The operator rows per grouping, each fetched once. */
class OperatorSource {
  private readonly cache = new Map<OperatorGroupBy, OperatorsResponse>();

  constructor(private readonly ctx: ViewContext) {}

  has(groupBy: OperatorGroupBy): boolean {
    return this.cache.has(groupBy);
  }

  async get(groupBy: OperatorGroupBy, signal: AbortSignal): Promise<OperatorsResponse> {
    const hit = this.cache.get(groupBy);
    if (hit) return hit;
    const { ctx } = this;
    const result = await ctx.api.get('operators', { ...ctx.key, group_by: groupBy }, signal);
    if (isStillLoading(result)) throw new ViewNotReady();
    this.cache.set(groupBy, result);
    return result;
  }
}

class OperatorsPage {
  readonly element: HTMLElement;
  private readonly device: boolean;
  private readonly chrome = tableChrome('op');
  private readonly table: TablePanel<OperatorRow>;
  private readonly panel: CallStackPanel;
  private readonly groupSelect: ReturnType<typeof selectField>;
  private readonly search: SearchField;
  private readonly slot: ReturnType<typeof reloadSlot>;
  private devicePie: PieCard | undefined;
  private hostPie: PieCard | undefined;
  private readonly roofline: RooflineCard;
  private readonly whatIf: WhatIfPanel;

  constructor(
    private readonly ctx: ViewContext,
    private readonly store: HashParamStore,
    private readonly state: State,
    private readonly source: OperatorSource,
    private data: OperatorsResponse,
    editor: EditorTarget,
  ) {
    this.device = hasDeviceTime(data);
    this.element = tablePageRoot('operators', ctx.key, state.groupBy, { editor });
    this.table = new TablePanel<OperatorRow>({
      testid: 'op-table',
      caption: 'Operators',
      optional: NARROW_HIDES,
      rowAttrs: (row) => this.rowAttrs(row),
      searchTexts: (r) => searchTexts(r, state.groupBy),
      cellAttrs: colAttrs,
      count: this.chrome.count,
      onSort: (sort) => {
        state.sort = sort;
        this.save();
      },
    });
    this.groupSelect = selectField(
      'Group by',
      'op-group-by',
      GROUP_BYS.map((g) => [g, GROUP_LABEL[g]] as const),
      state.groupBy,
      (v) => void this.changeGroup(pick(v, GROUP_BYS, 'name')),
    );
    this.search = this.table.searchBox(
      'op-search',
      'Filter by name (or shape); space-separated terms all match',
      state,
      () => this.save(),
      () => this.data.rows,
    );
    this.panel = this.callStackPanel(editor);
    this.roofline = new RooflineCard('op-roofline', ctx.themes, (name) =>
      this.selectFromChart(name),
    );
    this.whatIf = new WhatIfPanel(ctx.api, { ...ctx.key, runWhenSeveral: true }, ctx.signal);
    this.slot = reloadSlot(this.element, this.chrome, 'the operators', () => {
      this.groupSelect.select.value = state.groupBy;
    });
  }

  /** Fills the page (in the view host, hidden until the page is returned); its charts are
   *  drawn once it is shown, and the page is marked ready then. */
  start(): Promise<void> {
    const { state, data } = this;
    this.element.append(
      viewHead('Operators', this.ctx.key, `${formatCount(data.op_count)} operator calls`),
      ...notices(this.ctx, data, this.device),
      tiles(data, this.device),
      this.chartsSection(),
      ...(this.device ? [rooflineSection(this.roofline)] : []),
      this.tableSection(),
      this.whatIf.element,
      this.panel.element,
    );
    this.buildTable();
    const drawn = this.updatePies();
    // A call stack named by the URL.
    if (state.stack !== undefined) {
      const row = findRow(data.rows, state.groupBy, state.stack, state.stackShape);
      if (row?.has_call_stack) {
        void this.openStack(row, false);
      } else {
        state.stack = undefined;
        state.stackShape = undefined;
      }
    }
    this.save();
    whenChartsDrawn(this.element, drawn);
    return Promise.resolve();
  }

  dispose(): void {
    this.slot.abort();
    this.search.dispose();
    this.devicePie?.dispose();
    this.hostPie?.dispose();
    this.roofline.dispose();
    this.panel.dispose();
    this.whatIf.dispose();
    this.table.destroy();
    this.element.remove();
  }

  private save(): void {
    this.store.write(stateUpdate(this.state));
  }

  private selectedId(): string | undefined {
    const { state } = this;
    if (state.stack === undefined) return undefined;
    return state.groupBy === 'shape'
      ? `${state.stack}\u0000${state.stackShape ?? 'null'}`
      : state.stack;
  }

  private rowAttrs(row: OperatorRow): Record<string, string> {
    const attrs: Record<string, string> = { 'data-op': row.name };
    if (this.state.groupBy === 'shape') attrs['data-shape'] = shapeParam(row.input_shape);
    if (rowId(row, this.state.groupBy) === this.selectedId()) attrs['data-selected'] = 'true';
    return attrs;
  }

  private buildTable(): void {
    const { state, data, device } = this;
    const open = (row: OperatorRow): void => void this.openStack(row);
    const whatIf = whatIfColumn<OperatorRow>(
      (row) => row.name,
      (row) => this.whatIf.open({ kind: 'op', name: row.name }),
    );
    state.sort = this.table.build(
      [...operatorColumns(state.groupBy, device, data.rows, open), whatIf],
      data.rows,
      {
        sort: state.sort,
        search: state.search,
        emptyText: data.rows.length
          ? 'No operator matches the search.'
          : 'No operators in this span.',
        // Without GPU activity, tensor cores mean nothing: shown only on request.
        hidden: device ? [] : ['tensor_core_eligible'],
      },
    );
  }

  /** A roofline dot's row: selected (its call stacks open when it has some), scrolled to. */
  private selectFromChart(name: string): void {
    const row = this.data.rows.find((r) => r.name === name);
    if (!row) return;
    if (row.has_call_stack) {
      void this.openStack(row, false);
    } else {
      this.state.stack = row.name;
      this.state.stackShape =
        this.state.groupBy === 'shape' ? shapeParam(row.input_shape) : undefined;
      this.table.refresh();
    }
    this.table.element.querySelector('[data-selected="true"]')?.scrollIntoView({ block: 'center' });
  }

  private async updatePies(): Promise<void> {
    const pieOpts = { format: formatDuration };
    await Promise.all([
      this.device
        ? this.roofline.set(this.data.rows, this.data.roofs, (r) => r.device_total_us)
        : undefined,
      this.devicePie?.set(operatorPie(this.data.rows, this.state.devicePie), pieOpts),
      this.hostPie?.set(operatorPie(this.data.rows, this.state.hostPie), pieOpts),
    ]);
  }

  private chartsSection(): HTMLElement {
    const { state, ctx } = this;
    const pieChanged = (): void => {
      this.save();
      void this.updatePies();
    };
    const deviceSelect = pieMetricSelect(
      'Device time',
      'op-device-pie-metric',
      DEVICE_METRICS,
      state.devicePie,
      (m) => {
        state.devicePie = m;
        pieChanged();
      },
    );
    const hostSelect = pieMetricSelect(
      'Host time',
      'op-host-pie-metric',
      HOST_METRICS,
      state.hostPie,
      (m) => {
        state.hostPie = m;
        pieChanged();
      },
    );
    this.devicePie = this.device
      ? new PieCard('Top operators by device time', 'op-device-pie', ctx.themes, deviceSelect)
      : undefined;
    this.hostPie = new PieCard('Top operators by host time', 'op-host-pie', ctx.themes, hostSelect);
    return section(
      { anchor: 'charts', testid: 'operators-charts', title: 'Top operators' },
      h('div', { class: 'ks-chart-grid' }, this.devicePie?.element, this.hostPie.element),
    );
  }

  private tableSection(): HTMLElement {
    const { chrome } = this;
    const csvButton = toolButton(
      'Export CSV',
      'op-export-csv',
      () => this.exportCsv(),
      'Download the table as shown (grouping, search and sort applied) as CSV',
    );
    return section(
      {
        anchor: 'operators',
        testid: 'operators-table',
        title: 'Operators',
        intro:
          'Self time leaves out the operators called inside; total time includes them. Hover a time for its per-call average; click a header to sort.',
      },
      h(
        'div',
        { class: 'ks-toolbar' },
        this.groupSelect.el,
        this.search.el,
        chrome.count,
        chrome.busyLabel,
        csvButton,
      ),
      chrome.errorBox,
      this.table.element,
    );
  }

  private exportCsv(): void {
    const { ctx, state } = this;
    const csv = operatorCsv(this.table.shownRows(), state.groupBy, this.device);
    downloadCsv(
      csvFileName(['operators', ctx.key.run, ctx.key.worker, ctx.key.span, state.groupBy]),
      toCsv(csv.header, csv.rows),
    );
  }

  private callStackPanel(editor: EditorTarget): CallStackPanel {
    const { ctx, state } = this;
    return new CallStackPanel({
      api: ctx.api,
      key: ctx.key,
      signal: ctx.signal,
      device: this.device,
      editor,
      onClose: () => {
        state.stack = undefined;
        state.stackShape = undefined;
        this.save();
        this.panel.close();
        this.table.refresh();
      },
    });
  }

  private async openStack(row: OperatorRow, scroll = true): Promise<void> {
    const { state } = this;
    state.stack = row.name;
    state.stackShape = state.groupBy === 'shape' ? shapeParam(row.input_shape) : undefined;
    this.save();
    this.table.refresh();
    const shown = this.panel.show(row, state.groupBy);
    if (scroll) scrollToAnchor(this.element, 'callstacks');
    await shown;
  }

  private async changeGroup(groupBy: OperatorGroupBy): Promise<void> {
    const { state } = this;
    if (groupBy === state.groupBy && this.source.has(groupBy)) return;
    await this.slot.run(
      (signal) => this.source.get(groupBy, signal),
      (next) => {
        this.data = next;
        state.groupBy = groupBy;
        if (state.sort?.key === 'input_shape' && groupBy !== 'shape') state.sort = undefined;
        state.stack = undefined;
        state.stackShape = undefined;
        this.panel.close();
        this.save();
        this.element.dataset.groupBy = groupBy;
        this.buildTable();
        void this.updatePies();
      },
    );
  }
}

async function renderOperators(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  const store = new HashParamStore([...Object.values(K), EDITOR_KEY]);
  const params = store.read();
  const state = readState(params);
  const editor = editorTarget(hostInfo(params[EDITOR_KEY]));
  const source = new OperatorSource(ctx);
  const data = await source.get(state.groupBy, ctx.signal);
  const page = new OperatorsPage(ctx, store, state, source, data, editor);
  return mountPage(container, page);
}

function rooflineSection(card: RooflineCard): HTMLElement {
  return section(
    {
      anchor: 'roofline',
      testid: 'op-roofline-section',
      title: 'Roofline',
      intro:
        'How close each operator comes to what the GPU can do: its work from the recorded input shapes over its device time, under the memory and compute roofs.',
    },
    card.element,
  );
}

export const operatorsView: ViewDef = {
  id: 'operators',
  label: 'Operators',
  order: 20,
  render: renderOperators,
};
