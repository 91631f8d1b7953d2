// The Operator page: pies of the top operators by device and host time, a searchable,
// sortable table (by operator, or operator + input shape), CSV export, and the call
// stacks of a row. Grouping, search, sort, pie metrics and the open call stack live in
// the URL (p.kinetoscope.operators.*), so a link reopens the same state.

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { OperatorGroupBy, OperatorRow, OperatorsResponse } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { h, replaceChildren } from '../../components/dom';
import { filterRows } from '../../components/filter';
import { formatCount, formatDuration, formatPercent } from '../../components/format';
import { HashParamStore, type HashParams, type HashUpdate } from '../../components/hash_params';
import { PieCard } from '../../components/pie_card';
import { editorTarget, hostInfo } from '../../components/source_link';
import { VirtualTable, type Column } from '../../components/table';
import { sortRows } from '../../components/table_model';
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
  parseSort,
  pick,
  unlessDefault,
  type SortSpec,
} from '../../components/url_values';
import {
  partialNotice,
  reloadSlot,
  section,
  showRowCount,
  tableChrome,
  tile,
  viewHead,
} from '../page_kit';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { CallStackPanel } from './callstacks';
import {
  AVG_OF,
  callStackSourceLabel,
  DEVICE_METRICS,
  findRow,
  GROUP_BYS,
  GROUP_LABEL,
  hasDeviceTime,
  HOST_METRICS,
  METRIC_HELP,
  METRIC_LABEL,
  operatorCsv,
  operatorPie,
  rowId,
  searchTexts,
  shapeParam,
  shapeText,
  tensorCoreShare,
  type DeviceMetric,
  type HostMetric,
  type TimeMetric,
} from './model';

const K = {
  groupBy: 'operators.group_by',
  search: 'operators.search',
  sort: 'operators.sort',
  devicePie: 'operators.device_pie',
  hostPie: 'operators.host_pie',
  stack: 'operators.stack',
  stackShape: 'operators.stack_shape',
} as const;
/** Not a view key: "vscode" / "none" overrides the VS Code detection (README). */
const EDITOR_KEY = 'editor';

const SORT_KEYS = [
  'name',
  'input_shape',
  'calls',
  'device_self_us',
  'device_total_us',
  'host_self_us',
  'host_total_us',
  'tensor_core_eligible',
  'tensor_core_pct',
  'call_stack',
];

interface State {
  groupBy: OperatorGroupBy;
  search: string;
  sort: SortSpec | undefined;
  devicePie: DeviceMetric;
  hostPie: HostMetric;
  stack: string | undefined;
  stackShape: string | undefined;
}

function readState(p: HashParams): State {
  return {
    groupBy: pick(p[K.groupBy], GROUP_BYS, 'name'),
    search: p[K.search] ?? '',
    sort: parseSort(p[K.sort], SORT_KEYS),
    devicePie: pick(p[K.devicePie], DEVICE_METRICS, 'device_self_us'),
    hostPie: pick(p[K.hostPie], HOST_METRICS, 'host_self_us'),
    stack: p[K.stack],
    stackShape: p[K.stackShape],
  };
}

function stateUpdate(s: State): HashUpdate {
  return {
    [K.groupBy]: unlessDefault(s.groupBy, 'name'),
    [K.search]: s.search.trim() || undefined,
    [K.sort]: formatSort(s.sort),
    [K.devicePie]: unlessDefault(s.devicePie, 'device_self_us'),
    [K.hostPie]: unlessDefault(s.hostPie, 'host_self_us'),
    [K.stack]: s.stack,
    [K.stackShape]: s.stack !== undefined && s.groupBy === 'shape' ? s.stackShape : undefined,
  };
}

function cellAttrs(key: string, value: string | number | boolean | null | undefined) {
  return {
    'data-col': key,
    'data-value': value === null || value === undefined ? '' : String(value),
  };
}

function durationColumn(metric: TimeMetric, total: number): Column<OperatorRow> {
  return {
    key: metric,
    label: METRIC_LABEL[metric].replace(' time', ''),
    title: `${METRIC_HELP[metric]}. Click to sort.`,
    align: 'right',
    minWidth: 112,
    cell: (row) =>
      h(
        'span',
        { class: row[metric] === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
        h('span', { class: 'ks-num' }, formatDuration(row[metric])),
        total > 0
          ? h('span', { class: 'ks-pct' }, formatPercent((row[metric] / total) * 100, 1))
          : null,
      ),
    sortValue: (row) => row[metric],
    cellAttrs: (row) => ({
      ...cellAttrs(metric, row[metric]),
      title: `${formatDuration(row[metric])} in ${formatCount(row.calls)} calls; ${formatDuration(row[AVG_OF[metric]])} per call`,
    }),
  };
}

/** Sums of the self times: the share shown under a self time. Total times overlap (a
 * parent's total holds its children's), so they get no share. */
function shareBases(rows: readonly OperatorRow[]): Record<TimeMetric, number> {
  const sum = { device_self_us: 0, device_total_us: 0, host_self_us: 0, host_total_us: 0 };
  for (const r of rows) {
    sum.device_self_us += r.device_self_us;
    sum.host_self_us += r.host_self_us;
  }
  return sum;
}

/** Columns the operator table drops first, in order, when it is too narrow (1280 px). */
const NARROW_HIDES = ['host_total_us', 'device_total_us', 'tensor_core_pct', 'call_stack'];

function buildColumns(
  groupBy: OperatorGroupBy,
  device: boolean,
  rows: readonly OperatorRow[],
  openStack: (row: OperatorRow) => void,
): Column<OperatorRow>[] {
  const sums = shareBases(rows);
  const cols: Column<OperatorRow>[] = [
    {
      key: 'name',
      label: 'Name',
      minWidth: 240,
      grow: 3,
      cell: (row) => h('span', { title: row.name }, row.name),
      sortValue: (row) => row.name,
      cellAttrs: (row) => cellAttrs('name', row.name),
    },
  ];
  if (groupBy === 'shape') {
    cols.push({
      key: 'input_shape',
      label: 'Input shape',
      minWidth: 200,
      grow: 2.2,
      cell: (row) => {
        const text = shapeText(row.input_shape);
        return h('span', { class: 'ks-mono', title: text }, text);
      },
      sortValue: (row) => shapeText(row.input_shape),
      cellAttrs: (row) => cellAttrs('input_shape', shapeParam(row.input_shape)),
    });
  }
  cols.push({
    key: 'calls',
    label: 'Calls',
    align: 'right',
    minWidth: 80,
    cell: (row) => h('span', { class: 'ks-num' }, formatCount(row.calls)),
    sortValue: (row) => row.calls,
    cellAttrs: (row) => cellAttrs('calls', row.calls),
  });
  const metrics: TimeMetric[] = device
    ? ['device_self_us', 'device_total_us', 'host_self_us', 'host_total_us']
    : ['host_self_us', 'host_total_us'];
  for (const m of metrics) cols.push(durationColumn(m, sums[m]));
  cols.push({
    key: 'tensor_core_eligible',
    label: 'TC eligible',
    title:
      'Tensor-core eligible: a conv/matmul-family operator, or one that launched a tensor-core kernel (itself or its children). Click to sort.',
    minWidth: 92,
    cell: (row) => yesNo(row.tensor_core_eligible),
    sortValue: (row) => (row.tensor_core_eligible ? 1 : 0),
    cellAttrs: (row) => cellAttrs('tensor_core_eligible', row.tensor_core_eligible),
  });
  if (device) {
    cols.push({
      key: 'tensor_core_pct',
      label: 'TC self %',
      title: 'Share of the device self time spent in tensor-core kernels. Click to sort.',
      align: 'right',
      minWidth: 86,
      cell: (row) => {
        const pct = tensorCoreShare(row, 'self');
        return h('span', { class: pct ? 'ks-num' : 'ks-num ks-zero' }, formatPercent(pct, 1));
      },
      sortValue: (row) => tensorCoreShare(row, 'self'),
      cellAttrs: (row) => cellAttrs('tensor_core_pct', tensorCoreShare(row, 'self')),
    });
  }
  cols.push({
    key: 'call_stack',
    label: 'Call stack',
    minWidth: 92,
    cell: (row) =>
      row.has_call_stack
        ? h(
            'button',
            {
              class: 'ks-btn ks-btn-small',
              testid: 'op-stack-button',
              title: `Show the call stacks of ${row.name}`,
              attrs: { type: 'button' },
              on: { click: () => openStack(row) },
            },
            'View',
          )
        : h('span', { class: 'ks-no' }, '—'),
    sortValue: (row) => (row.has_call_stack ? 1 : 0),
    cellAttrs: (row) => cellAttrs('call_stack', row.has_call_stack),
  });
  return cols;
}

async function renderOperators(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  const store = new HashParamStore([...Object.values(K), EDITOR_KEY]);
  const params = store.read();
  const state = readState(params);
  const editor = editorTarget(hostInfo(params[EDITOR_KEY]));
  const cache = new Map<OperatorGroupBy, OperatorsResponse>();

  const fetchOps = async (groupBy: OperatorGroupBy, signal: AbortSignal) => {
    const hit = cache.get(groupBy);
    if (hit) return hit;
    const result = await ctx.api.get('operators', { ...ctx.key, group_by: groupBy }, signal);
    if (isStillLoading(result)) throw new ViewNotReady();
    cache.set(groupBy, result);
    return result;
  };

  let data = await fetchOps(state.groupBy, ctx.signal);
  const device = hasDeviceTime(data);
  const save = (): void => store.write(stateUpdate(state));

  // ----- page skeleton -----
  const page = h('div', {
    class: 'ks-view ks-operators',
    testid: 'operators',
    dataset: {
      run: ctx.key.run,
      worker: ctx.key.worker,
      span: ctx.key.span,
      groupBy: state.groupBy,
      busy: 'false',
      editor,
    },
  });

  const notices: HTMLElement[] = [];
  const partial = partialNotice(ctx.status);
  if (partial) notices.push(partial);
  if (!ctx.views.includes('kernels') && data.kernel_view_absent_reason) {
    notices.push(
      h(
        'div',
        { class: 'ks-notice', testid: 'no-kernel-view', role: 'note' },
        h('strong', null, 'No Kernel view: '),
        `${data.kernel_view_absent_reason}.`,
        device ? null : ' Device time columns are left out.',
      ),
    );
  }

  const tiles = h(
    'div',
    { class: 'ks-tiles', testid: 'operators-summary' },
    tile('Operator calls', formatCount(data.op_count), 'aten ops and record_function ranges'),
    tile(
      'Host self time',
      formatDuration(data.host_self_us),
      'sum over all operators',
      'operators-host-self',
    ),
    device
      ? tile(
          'Device self time',
          formatDuration(data.device_self_us),
          'GPU time launched by operators',
          'operators-device-self',
        )
      : null,
    tile(
      'Call stacks',
      data.call_stack_source ? 'Recorded' : 'None',
      callStackSourceLabel(data.call_stack_source),
    ),
  );

  // ----- pies -----
  const devicePieSelect = selectField(
    'Device time',
    'op-device-pie-metric',
    DEVICE_METRICS.map((m) => [m, METRIC_LABEL[m]] as const),
    state.devicePie,
    (v) => {
      state.devicePie = pick(v, DEVICE_METRICS, 'device_self_us');
      save();
      void updatePies();
    },
  );
  const hostPieSelect = selectField(
    'Host time',
    'op-host-pie-metric',
    HOST_METRICS.map((m) => [m, METRIC_LABEL[m]] as const),
    state.hostPie,
    (v) => {
      state.hostPie = pick(v, HOST_METRICS, 'host_self_us');
      save();
      void updatePies();
    },
  );
  // The label text is in the card title; keep the selects compact.
  devicePieSelect.el.querySelector('.ks-field-label')?.remove();
  hostPieSelect.el.querySelector('.ks-field-label')?.remove();
  const devicePie = device
    ? new PieCard('Top operators by device time', 'op-device-pie', ctx.themes, devicePieSelect.el)
    : undefined;
  const hostPie = new PieCard(
    'Top operators by host time',
    'op-host-pie',
    ctx.themes,
    hostPieSelect.el,
  );
  const pieOpts = { format: formatDuration };
  const updatePies = async (): Promise<void> => {
    await Promise.all([
      devicePie?.set(operatorPie(data.rows, state.devicePie), pieOpts),
      hostPie.set(operatorPie(data.rows, state.hostPie), pieOpts),
    ]);
  };

  // ----- table -----
  let filtered: OperatorRow[] = [];
  let table: VirtualTable<OperatorRow> | undefined;
  let columns: Column<OperatorRow>[] = [];
  const tableHost = h('div', { class: 'ks-table-host' });
  const chrome = tableChrome('op');

  const selectedId = (): string | undefined => {
    if (state.stack === undefined) return undefined;
    return state.groupBy === 'shape'
      ? `${state.stack}\u0000${state.stackShape ?? 'null'}`
      : state.stack;
  };

  const columnChoice = new Map<string, boolean>();
  const buildTable = (): void => {
    table?.destroy();
    columns = buildColumns(state.groupBy, device, data.rows, (row) => void openStack(row));
    if (state.sort && !columns.some((c) => c.key === state.sort?.key)) state.sort = undefined;
    const t = new VirtualTable<OperatorRow>({
      columns,
      rows: filtered,
      rowAttrs: (row) => {
        const attrs: Record<string, string> = { 'data-op': row.name };
        if (state.groupBy === 'shape') attrs['data-shape'] = shapeParam(row.input_shape);
        if (rowId(row, state.groupBy) === selectedId()) attrs['data-selected'] = 'true';
        return attrs;
      },
      testid: 'op-table',
      caption: 'Operators',
      emptyText: data.rows.length
        ? 'No operator matches the search.'
        : 'No operators in this span.',
      maxHeight: 560,
      optional: NARROW_HIDES,
      // Without GPU activity, tensor cores mean nothing: shown only on request.
      hidden: device ? [] : ['tensor_core_eligible'],
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
    filtered = filterRows(data.rows, state.search, (r) => searchTexts(r, state.groupBy));
    table?.setRows(filtered);
    showRowCount(chrome.count, filtered.length, data.rows.length);
  };

  /** The rows as the table shows them: filtered and sorted. */
  const shownRows = (): OperatorRow[] => {
    const sort = state.sort;
    const column = sort && columns.find((c) => c.key === sort.key);
    return sort && column?.sortValue ? sortRows(filtered, column.sortValue, sort.dir) : filtered;
  };

  const exportCsv = (): void => {
    const csv = operatorCsv(shownRows(), state.groupBy, device);
    downloadCsv(
      csvFileName(['operators', ctx.key.run, ctx.key.worker, ctx.key.span, state.groupBy]),
      toCsv(csv.header, csv.rows),
    );
  };

  const groupSelect = selectField(
    'Group by',
    'op-group-by',
    GROUP_BYS.map((g) => [g, GROUP_LABEL[g]] as const),
    state.groupBy,
    (v) => void changeGroup(pick(v, GROUP_BYS, 'name')),
  );
  const search: SearchField = searchField(
    'Search',
    'op-search',
    'Filter by name (or shape); space-separated terms all match',
    state.search,
    (v) => {
      state.search = v;
      save();
      applyFilter();
    },
  );

  // ----- call stacks -----
  const panel = new CallStackPanel({
    api: ctx.api,
    key: ctx.key,
    signal: ctx.signal,
    device,
    editor,
    onClose: () => {
      state.stack = undefined;
      state.stackShape = undefined;
      save();
      panel.close();
      table?.setRows(filtered);
    },
  });

  const openStack = async (row: OperatorRow, scroll = true): Promise<void> => {
    state.stack = row.name;
    state.stackShape = state.groupBy === 'shape' ? shapeParam(row.input_shape) : undefined;
    save();
    table?.setRows(filtered);
    const shown = panel.show(row, state.groupBy);
    if (scroll) scrollToAnchor(page, 'callstacks');
    await shown;
  };

  const slot = reloadSlot(page, chrome, 'the operators', () => {
    groupSelect.select.value = state.groupBy;
  });
  const changeGroup = async (groupBy: OperatorGroupBy): Promise<void> => {
    if (groupBy === state.groupBy && cache.has(groupBy)) return;
    await slot.run(
      (signal) => fetchOps(groupBy, signal),
      (next) => {
        data = next;
        state.groupBy = groupBy;
        if (state.sort?.key === 'input_shape' && groupBy !== 'shape') state.sort = undefined;
        state.stack = undefined;
        state.stackShape = undefined;
        panel.close();
        save();
        page.dataset.groupBy = groupBy;
        filtered = filterRows(data.rows, state.search, (r) => searchTexts(r, groupBy));
        buildTable();
        applyFilter();
        void updatePies();
      },
    );
  };

  const csvButton = toolButton(
    'Export CSV',
    'op-export-csv',
    exportCsv,
    'Download the table as shown (grouping, search and sort applied) as CSV',
  );

  const chartsSection = section(
    { anchor: 'charts', testid: 'operators-charts', title: 'Top operators' },
    h('div', { class: 'ks-chart-grid' }, devicePie?.element, hostPie.element),
  );

  const tableSection = section(
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
      groupSelect.el,
      search.el,
      chrome.count,
      chrome.busyLabel,
      csvButton,
    ),
    chrome.errorBox,
    tableHost,
  );

  page.append(
    viewHead('Operators', ctx.key, `${formatCount(data.op_count)} operator calls`),
    ...notices,
    tiles,
    chartsSection,
    tableSection,
    panel.element,
  );
  container.appendChild(page);

  filtered = filterRows(data.rows, state.search, (r) => searchTexts(r, state.groupBy));
  buildTable();
  applyFilter();
  await updatePies();

  // A call stack named by the URL.
  if (state.stack !== undefined) {
    const row = findRow(data.rows, state.groupBy, state.stack, state.stackShape);
    if (row?.has_call_stack) {
      void openStack(row, false);
    } else {
      state.stack = undefined;
      state.stackShape = undefined;
    }
  }
  save();
  page.dataset.ready = 'true';

  return {
    dispose(): void {
      slot.abort();
      search.dispose();
      devicePie?.dispose();
      hostPie.dispose();
      panel.dispose();
      table?.destroy();
      page.remove();
    },
    scrollTo: (anchor: string) => scrollToAnchor(page, anchor),
  };
}

export const operatorsView: ViewDef = {
  id: 'operators',
  label: 'Operators',
  render: renderOperators,
};
