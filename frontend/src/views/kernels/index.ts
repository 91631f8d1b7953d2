// The Kernel page: the share of kernel time on tensor cores (anchor "tensor-cores", linked
// from the Overview's recommendations), the top kernels, and a searchable, sortable table
// per kernel (or kernel + launching operator), filtered by device and stream through the
// route's parameters, with CSV export. State lives in the URL (p.kinetoscope.kernels.*).

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { KernelGroupBy, KernelRow, KernelsParams, KernelsResponse } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { append, h, replaceChildren } from '../../components/dom';
import { filterRows } from '../../components/filter';
import { formatBytes, formatCount, formatDuration, formatPercent } from '../../components/format';
import { HashParamStore, type HashParams, type HashUpdate } from '../../components/hash_params';
import { PieCard } from '../../components/pie_card';
import { VirtualTable, type Column } from '../../components/table';
import { sortRows, type SortValue } from '../../components/table_model';
import {
  ensureTableToolsStyle,
  onSortChange,
  searchField,
  selectField,
  toolButton,
  yesNo,
  type SearchField,
} from '../../components/table_tools';
import {
  formatSort,
  parseIndex,
  parseSort,
  pick,
  unlessDefault,
  type SortSpec,
} from '../../components/url_values';
import * as kit from '../page_kit';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import {
  dimsSize,
  dimsText,
  eligibleWithoutTensorCores,
  GROUP_BYS,
  GROUP_LABEL,
  kernelCsv,
  kernelPie,
  matrixCoreShort,
  searchTexts,
  shortKernelName,
  tensorCoreColors,
  tensorCorePie,
} from './model';

const K = {
  groupBy: 'kernels.group_by',
  device: 'kernels.device',
  stream: 'kernels.stream',
  search: 'kernels.search',
  sort: 'kernels.sort',
} as const;

/** Columns the kernel table drops first, in order, when it is too narrow (1280 px). */
const NARROW_HIDES = [
  'min_us',
  'registers_per_thread',
  'block',
  'grid',
  'max_us',
  'blocks_per_sm',
  'mean_us',
  'occupancy_pct',
  'stream',
  'device',
];

const SORT_KEYS = [
  'name',
  'op_name',
  'device',
  'stream',
  'calls',
  'total_us',
  'mean_us',
  'min_us',
  'max_us',
  'blocks_per_sm',
  'occupancy_pct',
  'registers_per_thread',
  'shared_memory',
  'grid',
  'block',
  'tensor_cores_used',
  'op_tensor_core_eligible',
];

const ALL = 'all';

interface State {
  groupBy: KernelGroupBy;
  device: number | undefined;
  stream: number | undefined;
  search: string;
  sort: SortSpec | undefined;
}

function readState(p: HashParams): State {
  return {
    groupBy: pick(p[K.groupBy], GROUP_BYS, 'name'),
    device: parseIndex(p[K.device]),
    stream: parseIndex(p[K.stream]),
    search: p[K.search] ?? '',
    sort: parseSort(p[K.sort], SORT_KEYS),
  };
}

function stateUpdate(s: State): HashUpdate {
  return {
    [K.groupBy]: unlessDefault(s.groupBy, 'name'),
    [K.device]: s.device === undefined ? undefined : String(s.device),
    [K.stream]: s.stream === undefined ? undefined : String(s.stream),
    [K.search]: s.search.trim() || undefined,
    [K.sort]: formatSort(s.sort),
  };
}

function params(s: State): KernelsParams {
  return { group_by: s.groupBy, device: s.device, stream: s.stream };
}

function attrs(key: string, value: unknown): Record<string, string> {
  let text = '';
  if (Array.isArray(value)) text = JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string')
    text = String(value);
  return { 'data-col': key, 'data-value': text };
}

interface ColumnSpec {
  key: keyof KernelRow;
  label: string;
  title: string;
  minWidth: number;
  text: (row: KernelRow) => string;
  sortValue?: (row: KernelRow) => SortValue;
}

function numberColumn(spec: ColumnSpec): Column<KernelRow> {
  return {
    key: spec.key,
    label: spec.label,
    title: `${spec.title} Click to sort.`,
    align: 'right',
    minWidth: spec.minWidth,
    cell: (row) => h('span', { class: 'ks-num' }, spec.text(row)),
    sortValue:
      spec.sortValue ??
      ((row) => {
        const v = row[spec.key];
        return typeof v === 'number' ? v : null;
      }),
    cellAttrs: (row) => attrs(spec.key, row[spec.key]),
  };
}

function buildColumns(groupBy: KernelGroupBy, data: KernelsResponse): Column<KernelRow>[] {
  const cols: Column<KernelRow>[] = [
    {
      key: 'name',
      label: 'Name',
      title: 'Kernel name (template arguments and parameters folded; hover for the full name)',
      minWidth: 320,
      grow: 3,
      cell: (row) => h('span', { class: 'ks-mono', title: row.name }, shortKernelName(row.name)),
      sortValue: (row) => row.name,
      cellAttrs: (row) => attrs('name', row.name),
    },
  ];
  if (groupBy === 'op') {
    cols.push({
      key: 'op_name',
      label: 'Operator',
      title: 'The operator whose runtime call launched the kernel. Click to sort.',
      minWidth: 180,
      grow: 1.6,
      cell: (row) =>
        row.op_name
          ? h('span', { title: row.op_name }, row.op_name)
          : h('span', { class: 'ks-no' }, '(none)'),
      sortValue: (row) => row.op_name ?? null,
      cellAttrs: (row) => attrs('op_name', row.op_name ?? ''),
    });
  }
  if (data.devices.length > 1) {
    cols.push(
      numberColumn({
        key: 'device',
        label: 'GPU',
        title: 'Device the kernel ran on.',
        minWidth: 60,
        text: (r) => (r.device === null ? '—' : String(r.device)),
      }),
    );
  }
  if (data.streams.length > 1) {
    cols.push(
      numberColumn({
        key: 'stream',
        label: 'Stream',
        title: 'CUDA stream (— when the calls used several).',
        minWidth: 70,
        text: (r) => (r.stream === null ? '—' : String(r.stream)),
      }),
    );
  }
  const dur = (key: 'total_us' | 'mean_us' | 'min_us' | 'max_us', label: string, title: string) =>
    numberColumn({ key, label, title, minWidth: 78, text: (r) => formatDuration(r[key]) });
  cols.push(
    numberColumn({
      key: 'calls',
      label: 'Calls',
      title: 'Number of launches.',
      minWidth: 76,
      text: (r) => formatCount(r.calls),
    }),
    dur('total_us', 'Total', 'Sum of the kernel durations.'),
    dur('mean_us', 'Mean', 'Mean duration per call.'),
    dur('min_us', 'Min', 'Shortest call.'),
    dur('max_us', 'Max', 'Longest call.'),
    numberColumn({
      key: 'blocks_per_sm',
      label: 'Blocks/SM',
      title:
        'Mean blocks per SM (blocks of the kernel / SMs of the GPU), weighted by duration; below 1 leaves SMs idle.',
      minWidth: 80,
      text: (r) => (r.blocks_per_sm === null ? '—' : r.blocks_per_sm.toFixed(2)),
    }),
    numberColumn({
      key: 'occupancy_pct',
      label: 'Occupancy',
      title: 'Mean estimated achieved occupancy, weighted by duration.',
      minWidth: 84,
      text: (r) => formatPercent(r.occupancy_pct, 1),
    }),
    numberColumn({
      key: 'registers_per_thread',
      label: 'Registers',
      title: 'Registers per thread.',
      minWidth: 74,
      text: (r) => (r.registers_per_thread === null ? '—' : String(r.registers_per_thread)),
    }),
    numberColumn({
      key: 'shared_memory',
      label: 'Shared mem',
      title: 'Shared memory per block.',
      minWidth: 84,
      text: (r) => formatBytes(r.shared_memory),
    }),
    numberColumn({
      key: 'grid',
      label: 'Grid',
      title: 'Grid dimensions (of the longest call when grouped by kernel); sorts by block count.',
      minWidth: 104,
      text: (r) => dimsText(r.grid),
      sortValue: (r) => dimsSize(r.grid),
    }),
    numberColumn({
      key: 'block',
      label: 'Block',
      title: 'Block dimensions; sorts by threads per block.',
      minWidth: 88,
      text: (r) => dimsText(r.block),
      sortValue: (r) => dimsSize(r.block),
    }),
    {
      key: 'tensor_cores_used',
      label: matrixCoreShort(data.matrix_core_name),
      title:
        'The kernel runs on tensor cores (MFMA cores on AMD), by the kernel taxonomy; Unknown when ' +
        'its name does not tell. Click to sort.',
      minWidth: 92,
      cell: (row) => yesNo(row.tensor_cores_used),
      sortValue: (row) => (row.tensor_cores_used === null ? 0.5 : row.tensor_cores_used ? 1 : 0),
      cellAttrs: (row) => attrs('tensor_cores_used', row.tensor_cores_used),
    },
    {
      key: 'op_tensor_core_eligible',
      label: 'Op TC eligible',
      title: 'A launching operator is tensor-core eligible (conv/matmul family). Click to sort.',
      minWidth: 104,
      cell: (row) => yesNo(row.op_tensor_core_eligible),
      sortValue: (row) => (row.op_tensor_core_eligible ? 1 : 0),
      cellAttrs: (row) => attrs('op_tensor_core_eligible', row.op_tensor_core_eligible),
    },
  );
  return cols;
}

async function renderKernels(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  const store = new HashParamStore(Object.values(K));
  const state = readState(store.read());
  const cache = new Map<string, KernelsResponse>();
  const save = (): void => store.write(stateUpdate(state));

  const fetchKernels = async (s: State, signal: AbortSignal): Promise<KernelsResponse> => {
    const p = params(s);
    const cacheKey = JSON.stringify(p);
    const hit = cache.get(cacheKey);
    if (hit) return hit;
    const result = await ctx.api.get('kernels', { ...ctx.key, ...p }, signal);
    if (isStillLoading(result)) throw new ViewNotReady();
    cache.set(cacheKey, result);
    return result;
  };

  let data = await fetchKernels(state, ctx.signal);
  // Filters from the URL that this trace does not have: drop them.
  if (
    (state.device !== undefined && !data.devices.includes(state.device)) ||
    (state.stream !== undefined && !data.streams.includes(state.stream))
  ) {
    if (state.device !== undefined && !data.devices.includes(state.device))
      state.device = undefined;
    if (state.stream !== undefined && !data.streams.includes(state.stream))
      state.stream = undefined;
    data = await fetchKernels(state, ctx.signal);
  }

  const page = h('div', {
    class: 'ks-view ks-kernels',
    testid: 'kernels',
    dataset: {
      run: ctx.key.run,
      worker: ctx.key.worker,
      span: ctx.key.span,
      groupBy: state.groupBy,
      busy: 'false',
    },
  });

  const tilesEl = h('div', { class: 'ks-tiles', testid: 'kernels-summary' });
  const renderTiles = (): void => {
    const eligible = eligibleWithoutTensorCores(data.rows);
    replaceChildren(
      tilesEl,
      kit.tile('Kernel calls', formatCount(data.kernel_count), filterLabel(), 'kernels-count'),
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
        formatDuration(eligible),
        'kernels of matrix-core eligible ops known not to use them',
      ),
    );
  };
  const filterLabel = (): string => {
    const parts: string[] = [];
    if (state.device !== undefined) parts.push(`GPU ${state.device}`);
    if (state.stream !== undefined) parts.push(`stream ${state.stream}`);
    return parts.length ? parts.join(', ') : 'all devices and streams';
  };

  // ----- pies -----
  const tcPie = new PieCard(
    'Kernel time on matrix cores (Tensor Cores / MFMA)',
    'kernel-tc-pie',
    ctx.themes,
    null,
    'No kernel time.',
  );
  const topPie = new PieCard('Top kernels by total time', 'kernel-top-pie', ctx.themes);
  const updatePies = async (): Promise<void> => {
    await Promise.all([
      tcPie.set(tensorCorePie(data), {
        format: formatDuration,
        colors: tensorCoreColors(tensorCorePie(data)),
        legendWidth: 260,
      }),
      topPie.set(kernelPie(data.rows), {
        format: formatDuration,
        label: shortKernelName,
        legendWidth: 260,
      }),
    ]);
  };

  // ----- table -----
  let filtered: KernelRow[] = [];
  let columns: Column<KernelRow>[] = [];
  let table: VirtualTable<KernelRow> | undefined;
  const tableHost = h('div', { class: 'ks-table-host' });
  const chrome = kit.tableChrome('kernel');

  const columnChoice = new Map<string, boolean>();
  const buildTable = (): void => {
    table?.destroy();
    columns = buildColumns(state.groupBy, data);
    if (state.sort && !columns.some((c) => c.key === state.sort?.key)) state.sort = undefined;
    const t = new VirtualTable<KernelRow>({
      columns,
      rows: filtered,
      rowAttrs: (row) => ({ 'data-kernel': row.name, 'data-op': row.op_name ?? '' }),
      testid: 'kernel-table',
      caption: 'Kernels',
      emptyText: data.rows.length ? 'No kernel matches the search.' : 'No kernels.',
      maxHeight: 560,
      optional: NARROW_HIDES,
      columnChoice,
      ...(state.sort ? { sort: state.sort } : {}),
    });
    onSortChange(t, columns, (sort) => {
      state.sort = sort;
      save();
    });
    table = t;
    replaceChildren(tableHost, t.element);
  };

  const applyFilter = (): void => {
    filtered = filterRows(data.rows, state.search, searchTexts);
    table?.setRows(filtered);
    kit.showRowCount(chrome.count, filtered.length, data.rows.length);
  };

  const shownRows = (): KernelRow[] => {
    const sort = state.sort;
    const column = sort && columns.find((c) => c.key === sort.key);
    return sort && column?.sortValue ? sortRows(filtered, column.sortValue, sort.dir) : filtered;
  };

  const exportCsv = (): void => {
    const csv = kernelCsv(shownRows(), state.groupBy);
    const parts = ['kernels', ctx.key.run, ctx.key.worker, ctx.key.span, state.groupBy];
    if (state.device !== undefined) parts.push(`gpu${state.device}`);
    if (state.stream !== undefined) parts.push(`stream${state.stream}`);
    downloadCsv(csvFileName(parts), toCsv(csv.header, csv.rows));
  };

  const slot = kit.reloadSlot(page, chrome, 'the kernels', () => syncControls());
  const reload = (next: State): Promise<void> =>
    slot.run(
      (signal) => fetchKernels(next, signal),
      (result) => {
        data = result;
        const regroup = next.groupBy !== state.groupBy;
        Object.assign(state, next);
        save();
        page.dataset.groupBy = state.groupBy;
        filtered = filterRows(data.rows, state.search, searchTexts);
        // Device/stream columns depend on the unfiltered lists; rebuilt with the grouping.
        if (regroup) buildTable();
        applyFilter();
        renderTiles();
        void updatePies();
      },
    );

  const groupSelect = selectField(
    'Group by',
    'kernel-group-by',
    GROUP_BYS.map((g) => [g, GROUP_LABEL[g]] as const),
    state.groupBy,
    (v) => void reload({ ...state, groupBy: pick(v, GROUP_BYS, 'name') }),
  );
  const deviceSelect = selectField(
    'Device',
    'kernel-device',
    [[ALL, 'All devices'] as const, ...data.devices.map((d) => [String(d), `GPU ${d}`] as const)],
    state.device === undefined ? ALL : String(state.device),
    (v) => void reload({ ...state, device: v === ALL ? undefined : parseIndex(v) }),
  );
  const streamSelect = selectField(
    'Stream',
    'kernel-stream',
    [
      [ALL, 'All streams'] as const,
      ...data.streams.map((s) => [String(s), `Stream ${s}`] as const),
    ],
    state.stream === undefined ? ALL : String(state.stream),
    (v) => void reload({ ...state, stream: v === ALL ? undefined : parseIndex(v) }),
  );
  const syncControls = (): void => {
    groupSelect.select.value = state.groupBy;
    deviceSelect.select.value = state.device === undefined ? ALL : String(state.device);
    streamSelect.select.value = state.stream === undefined ? ALL : String(state.stream);
  };
  const search: SearchField = searchField(
    'Search',
    'kernel-search',
    'Filter by kernel or operator name; space-separated terms all match',
    state.search,
    (v) => {
      state.search = v;
      save();
      applyFilter();
    },
  );

  const tcSection = kit.section(
    {
      anchor: 'tensor-cores',
      testid: 'kernels-tensor-cores',
      title: data.matrix_core_name,
      intro: `Share of the kernel time in kernels that run on ${data.matrix_core_name} (tensor cores on NVIDIA, MFMA cores on AMD), by the kernel taxonomy; kernels it cannot tell are shown as unknown. Matmul, convolution and attention kernels in FP16/BF16/FP8 (or TF32) can run on them; the “Op TC eligible” column marks kernels launched by such operators.`,
    },
    h('div', { class: 'ks-chart-grid' }, tcPie.element, topPie.element),
  );

  const tableSection = kit.section(
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
      groupSelect.el,
      deviceSelect.el,
      streamSelect.el,
      search.el,
      chrome.count,
      chrome.busyLabel,
      toolButton(
        'Export CSV',
        'kernel-export-csv',
        exportCsv,
        'Download the table as shown (grouping, filters, search and sort applied) as CSV',
      ),
    ),
    chrome.errorBox,
    tableHost,
  );

  append(page, [
    kit.viewHead('Kernels', ctx.key, `${formatCount(data.kernel_count)} kernel calls`),
    kit.partialNotice(ctx.status),
    tilesEl,
    tcSection,
    tableSection,
  ]);
  container.appendChild(page);

  renderTiles();
  filtered = filterRows(data.rows, state.search, searchTexts);
  buildTable();
  applyFilter();
  await updatePies();
  save();
  page.dataset.ready = 'true';

  return {
    dispose(): void {
      slot.abort();
      search.dispose();
      tcPie.dispose();
      topPie.dispose();
      table?.destroy();
      page.remove();
    },
    scrollTo: (anchor: string) => scrollToAnchor(page, anchor),
  };
}

export const kernelsView: ViewDef = {
  id: 'kernels',
  label: 'Kernels',
  render: renderKernels,
};
