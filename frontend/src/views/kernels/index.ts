// The Kernel page: the share of kernel time on tensor cores (anchor "tensor-cores", linked
// from the Overview's recommendations), the top kernels, and a searchable, sortable table
// per kernel (or kernel + launching operator), filtered by device and stream through the
// route's parameters, with CSV export. State lives in the URL (state.ts).

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { KernelRow, KernelsResponse } from '../../api/types';
import { colAttrs } from '../../components/columns';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { append, h, replaceChildren } from '../../components/dom';
import { formatCount, formatDuration, formatPercent } from '../../components/format';
import { HashParamStore } from '../../components/hash_params';
import { PieCard } from '../../components/pie_card';
import { RooflineCard } from '../../components/roofline_chart';
import {
  ensureTableToolsStyle,
  selectField,
  toolButton,
  type SearchField,
} from '../../components/table_tools';
import { parseIndex, pick } from '../../components/url_values';
import * as kit from '../page_kit';
import { TablePanel } from '../table_panel';
import { WhatIfPanel, whatIfColumn } from '../whatif_panel';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { kernelColumns, NARROW_HIDES } from './columns';
import { compileLinks } from './compile_links';
import { replayNote } from './replay_note';
import {
  eligibleWithoutTensorCores,
  GROUP_BYS,
  GROUP_LABEL,
  kernelCsv,
  kernelPie,
  matrixCoreShort,
  searchTexts,
  kernelLabels,
  shortKernelName,
  tensorCoreColors,
  tensorCorePie,
} from './model';
import { K, params, readState, stateUpdate, type State } from './state';

const ALL = 'all';

type Select = ReturnType<typeof selectField>;

/** The kernel rows per parameter set (grouping, device, stream), each fetched once. */
class KernelSource {
  private readonly cache = new Map<string, KernelsResponse>();

  constructor(private readonly ctx: ViewContext) {}

  async get(s: State, signal: AbortSignal): Promise<KernelsResponse> {
    const p = params(s);
    const cacheKey = JSON.stringify(p);
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    const result = await this.ctx.api.get('kernels', { ...this.ctx.key, ...p }, signal);
    if (isStillLoading(result)) throw new ViewNotReady();
    this.cache.set(cacheKey, result);
    return result;
  }
}

/** The first answer, without the URL's device or stream filter when this trace lacks it. */
async function firstKernels(
  source: KernelSource,
  state: State,
  signal: AbortSignal,
): Promise<KernelsResponse> {
  const data = await source.get(state, signal);
  const badDevice = state.device !== undefined && !data.devices.includes(state.device);
  const badStream = state.stream !== undefined && !data.streams.includes(state.stream);
  if (!badDevice && !badStream) return data;
  if (badDevice) state.device = undefined;
  if (badStream) state.stream = undefined;
  return source.get(state, signal);
}

/** A device id as the view names it ("GPU 0", "XPU 0"). */
function deviceLabel(data: KernelsResponse, device: number): string {
  return data.device_labels[data.devices.indexOf(device)] ?? `device ${device}`;
}

function filterLabel(data: KernelsResponse, state: State): string {
  const parts: string[] = [];
  if (state.device !== undefined) parts.push(deviceLabel(data, state.device));
  if (state.stream !== undefined) parts.push(`stream ${state.stream}`);
  return parts.length ? parts.join(', ') : 'all devices and streams';
}

function kernelTiles(data: KernelsResponse, state: State): HTMLElement[] {
  const replay = data.graph_replay;
  return [
    kit.tile(
      'Kernel calls',
      formatCount(data.kernel_count),
      filterLabel(data, state),
      'kernels-count',
    ),
    kit.tile('Kernel time', formatDuration(data.total_us), 'sum of kernel durations'),
    kit.tile(
      `Time on ${data.matrix_core_name}`,
      formatPercent(data.tensor_core_pct),
      `${formatDuration(data.tensor_core_time_us)} of the ` +
        `${formatDuration(data.total_us - data.tensor_core_unknown_time_us)} known`,
      'kernels-tc-pct',
    ),
    kit.tile(
      `Eligible, not on ${matrixCoreShort(data.matrix_core_name)}`,
      formatDuration(eligibleWithoutTensorCores(data.rows)),
      'kernels of matrix-core eligible ops known not to use them',
    ),
    ...(replay
      ? [
          kit.tile(
            'Replayed time matched to its op',
            formatPercent(replay.matched_pct),
            `of the ${formatCount(replay.kernels)} graph-replayed kernels’ time, found under ` +
              `the op that captured them (${replay.note})`,
            'kernels-graph-replay',
          ),
        ]
      : []),
  ];
}

/** A filter select with an "all" choice. */
function choiceSelect(
  label: string,
  testid: string,
  all: string,
  values: readonly number[],
  valueLabel: (v: number) => string,
  current: number | undefined,
  onChange: (value: number | undefined) => void,
): Select {
  return selectField(
    label,
    testid,
    [[ALL, all] as const, ...values.map((v) => [String(v), valueLabel(v)] as const)],
    current === undefined ? ALL : String(current),
    (v) => onChange(v === ALL ? undefined : parseIndex(v)),
  );
}

class KernelsPage {
  readonly element: HTMLElement;
  private readonly tilesEl = h('div', { class: 'ks-tiles', testid: 'kernels-summary' });
  private readonly replayEl = h('div', { testid: 'kernels-replay' });
  private readonly chrome = kit.tableChrome('kernel');
  private readonly table: TablePanel<KernelRow>;
  private readonly tcPie: PieCard;
  private readonly topPie: PieCard;
  private readonly roofline: RooflineCard;
  private selectedName: string | undefined;
  private readonly selects: { group: Select; device: Select; stream: Select };
  private readonly search: SearchField;
  private readonly slot: ReturnType<typeof kit.reloadSlot>;
  private readonly whatIf: WhatIfPanel;

  constructor(
    private readonly ctx: ViewContext,
    private readonly store: HashParamStore,
    private readonly state: State,
    private readonly source: KernelSource,
    private data: KernelsResponse,
  ) {
    this.element = kit.tablePageRoot('kernels', ctx.key, state.groupBy);
    this.tcPie = new PieCard(
      'Kernel time on matrix cores (Tensor Cores / MFMA)',
      'kernel-tc-pie',
      ctx.themes,
      null,
      'No kernel time.',
    );
    this.topPie = new PieCard('Top kernels by total time', 'kernel-top-pie', ctx.themes);
    this.roofline = new RooflineCard('kernel-roofline', ctx.themes, (name) => this.selectRow(name));
    this.table = new TablePanel<KernelRow>({
      testid: 'kernel-table',
      caption: 'Kernels',
      optional: NARROW_HIDES,
      rowAttrs: (row) => ({
        'data-kernel': row.name,
        'data-op': row.op_name ?? '',
        ...(row.name === this.selectedName ? { 'data-selected': 'true' } : {}),
      }),
      searchTexts,
      cellAttrs: colAttrs,
      count: this.chrome.count,
      onSort: (sort) => {
        state.sort = sort;
        this.save();
      },
    });
    this.selects = this.makeSelects();
    this.search = this.table.searchBox(
      'kernel-search',
      'Filter by kernel or operator name; space-separated terms all match',
      state,
      () => this.save(),
      () => this.data.rows,
    );
    this.whatIf = new WhatIfPanel(ctx.api, { ...ctx.key, runWhenSeveral: true }, ctx.signal);
    this.slot = kit.reloadSlot(this.element, this.chrome, 'the kernels', () => this.syncControls());
  }

  /** Fills the page (in the view host, hidden until the page is returned); its charts are
   *  drawn once it is shown, and the page is marked ready then. */
  start(): Promise<void> {
    append(this.element, [
      kit.viewHead('Kernels', this.ctx.key, `${formatCount(this.data.kernel_count)} kernel calls`),
      kit.partialNotice(this.ctx.status),
      this.tilesEl,
      this.replayEl,
      this.chartsSection(),
      kit.section(
        {
          anchor: 'roofline',
          testid: 'kernels-roofline',
          title: 'Roofline',
          intro:
            'How close each kernel comes to what the GPU can do: the work of the operator that launched it (from its input shapes), split among its kernels by time.',
        },
        this.roofline.element,
      ),
      this.tableSection(),
      this.whatIf.element,
    ]);
    this.renderTiles();
    this.buildTable();
    const drawn = this.updatePies();
    this.save();
    kit.whenChartsDrawn(this.element, drawn);
    return Promise.resolve();
  }

  dispose(): void {
    this.slot.abort();
    this.search.dispose();
    this.tcPie.dispose();
    this.topPie.dispose();
    this.roofline.dispose();
    this.whatIf.dispose();
    this.table.destroy();
    this.element.remove();
  }

  private save(): void {
    this.store.write(stateUpdate(this.state));
  }

  private renderTiles(): void {
    replaceChildren(this.tilesEl, kernelTiles(this.data, this.state));
    replaceChildren(this.replayEl, replayNote(this.data));
  }

  private buildTable(): void {
    const { state, data } = this;
    const whatIf = whatIfColumn<KernelRow>(
      (row) => row.name,
      (row) => this.whatIf.open({ kind: 'kernel', name: row.name }),
    );
    state.sort = this.table.build([...kernelColumns(state.groupBy, data), whatIf], data.rows, {
      sort: state.sort,
      search: state.search,
      emptyText: data.rows.length ? 'No kernel matches the search.' : 'No kernels.',
    });
  }

  /** A roofline dot's row: marked, filtered to by name, scrolled to. */
  private selectRow(name: string): void {
    this.selectedName = name;
    this.table.refresh();
    const row = this.table.element.querySelector('[data-selected="true"]');
    row?.scrollIntoView({ block: 'center' });
  }

  private async updatePies(): Promise<void> {
    const { data } = this;
    const labels = kernelLabels(data.rows.map((r) => r.name));
    await Promise.all([
      this.roofline.set(data.rows, data.roofs, (r) => r.total_us),
      this.tcPie.set(tensorCorePie(data), {
        format: formatDuration,
        colors: tensorCoreColors(tensorCorePie(data)),
        legendWidth: 260,
      }),
      this.topPie.set(kernelPie(data.rows), {
        format: formatDuration,
        label: (name) => labels.get(name) ?? shortKernelName(name),
        legendWidth: 260,
      }),
    ]);
  }

  private reload(next: State): Promise<void> {
    return this.slot.run(
      (signal) => this.source.get(next, signal),
      (result) => {
        const { state } = this;
        this.data = result;
        const regroup = next.groupBy !== state.groupBy;
        Object.assign(state, next);
        this.save();
        this.element.dataset.groupBy = state.groupBy;
        // Device/stream columns depend on the unfiltered lists; rebuilt with the grouping.
        if (regroup) this.buildTable();
        else this.table.filter(result.rows, state.search);
        this.renderTiles();
        void this.updatePies();
      },
    );
  }

  private makeSelects(): { group: Select; device: Select; stream: Select } {
    const { state, data } = this;
    const group = selectField(
      'Group by',
      'kernel-group-by',
      GROUP_BYS.map((g) => [g, GROUP_LABEL[g]] as const),
      state.groupBy,
      (v) => void this.reload({ ...state, groupBy: pick(v, GROUP_BYS, 'name') }),
    );
    const device = choiceSelect(
      'Device',
      'kernel-device',
      'All devices',
      data.devices,
      (d) => deviceLabel(data, d),
      state.device,
      (v) => void this.reload({ ...state, device: v }),
    );
    const stream = choiceSelect(
      'Stream',
      'kernel-stream',
      'All streams',
      data.streams,
      (s) => `Stream ${s}`,
      state.stream,
      (v) => void this.reload({ ...state, stream: v }),
    );
    return { group, device, stream };
  }

  private syncControls(): void {
    const { state, selects } = this;
    selects.group.select.value = state.groupBy;
    selects.device.select.value = state.device === undefined ? ALL : String(state.device);
    selects.stream.select.value = state.stream === undefined ? ALL : String(state.stream);
  }

  private exportCsv(): void {
    const { ctx, state } = this;
    const csv = kernelCsv(this.table.shownRows(), state.groupBy);
    const parts = ['kernels', ctx.key.run, ctx.key.worker, ctx.key.span, state.groupBy];
    if (state.device !== undefined) parts.push(`gpu${state.device}`);
    if (state.stream !== undefined) parts.push(`stream${state.stream}`);
    downloadCsv(csvFileName(parts), toCsv(csv.header, csv.rows));
  }

  private chartsSection(): HTMLElement {
    const name = this.data.matrix_core_name;
    return kit.section(
      {
        anchor: 'tensor-cores',
        testid: 'kernels-tensor-cores',
        title: name,
        intro: `Share of the kernel time in kernels that run on ${name} (tensor cores on NVIDIA, MFMA cores on AMD), by the kernel taxonomy; kernels it cannot tell are shown as unknown. Matmul, convolution and attention kernels in FP16/BF16/FP8 (or TF32) can run on them; the “Op TC eligible” column marks kernels launched by such operators.`,
      },
      h('div', { class: 'ks-chart-grid' }, this.tcPie.element, this.topPie.element),
    );
  }

  private tableSection(): HTMLElement {
    const { chrome, selects } = this;
    return kit.section(
      {
        anchor: 'kernels',
        testid: 'kernels-table',
        title: 'Kernels',
        intro:
          'One row per kernel name and device (or per kernel, launching operator and launch configuration). Click a header to sort.',
      },
      h(
        'div',
        { class: 'ks-toolbar' },
        selects.group.el,
        selects.device.el,
        selects.stream.el,
        this.search.el,
        chrome.count,
        chrome.busyLabel,
        toolButton(
          'Export CSV',
          'kernel-export-csv',
          () => this.exportCsv(),
          'Download the table as shown (grouping, filters, search and sort applied) as CSV',
        ),
      ),
      chrome.errorBox,
      this.table.element,
    );
  }
}

async function renderKernels(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  const store = new HashParamStore(Object.values(K));
  const state = readState(store.read());
  const source = new KernelSource(ctx);
  const data = await firstKernels(source, state, ctx.signal);
  const page = new KernelsPage(ctx, store, state, source, data);
  const handle = await kit.mountPage(container, page);
  // Inductor kernels and the compiles that made them, when the run has compile logs.
  void compileLinks(ctx, data.rows)
    .then((note) => note && page.element.appendChild(note))
    .catch(() => undefined);
  return handle;
}

export const kernelsView: ViewDef = {
  id: 'kernels',
  label: 'Kernels',
  order: 30,
  absent: 'it has no GPU kernels (a CPU-only profile)',
  render: renderKernels,
};
