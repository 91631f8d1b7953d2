// The kernel table's columns as data (components/columns.ts). Every cell carries data-col
// and data-value (dimensions as JSON) for the end-to-end tests.

import type { KernelGroupBy, KernelRow, KernelsResponse } from '../../api/types';
import { num, type ColumnSpec } from '../../components/columns';
import { h } from '../../components/dom';
import { rooflineColumns, ROOFLINE_NARROW_HIDES } from '../../components/roofline_columns';
import { formatBytes, formatCount, formatDuration, formatPercent } from '../../components/format';
import type { SortValue } from '../../components/table_model';
import { yesNo } from '../../components/table_tools';
import { capturedAtColumn } from '../../components/captured_column';
import { sourceAnchor } from '../../components/editor_links';
import {
  dimsSize,
  dimsText,
  frameLabel,
  fusedText,
  matrixCoreShort,
  kernelLabels,
  recordedCuptiFields,
  shortKernelName,
  sourceText,
} from './model';

/** Columns the kernel table drops first, in order, when it is too narrow (1280 px). */
export const NARROW_HIDES = [
  ...ROOFLINE_NARROW_HIDES,
  'queue_mean_us',
  'priority',
  'occupancy_limited_by',
  'graph_annotations',
  'launch_delay_p90_us',
  'launch_delay_mean_us',
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
  'shared_memory',
  // Never the what-if button (views/whatif_panel.ts): Top gains sends users to it (at
  // 1280 px it was hidden with 16 other columns, none of its buttons showing).
];

/** A right-aligned number column of a KernelRow field. */
function numberColumn(
  key: Exclude<keyof KernelRow, 'fused_ops' | 'source' | 'captured_source' | 'graph_annotations'>,
  label: string,
  tooltip: string,
  minWidth: number,
  text: (row: KernelRow) => string,
  sort?: (row: KernelRow) => SortValue,
): ColumnSpec<KernelRow> {
  return {
    key,
    label,
    tooltip: `${tooltip} Click to sort.`,
    align: 'right',
    minWidth,
    value: (row) => row[key],
    cell: (row) => num(text(row)),
    // Non-numbers (dimensions) sort by `sort`, else as missing.
    sort:
      sort ??
      ((row) => {
        const v = row[key];
        return typeof v === 'number' ? v : null;
      }),
  };
}

const orDash = (v: number | null): string => (v === null ? '—' : String(v));

/** A whole-number column shown as written, — when null. */
const countColumn = (
  key: 'device' | 'stream' | 'priority' | 'registers_per_thread',
  label: string,
  tooltip: string,
  minWidth: number,
): ColumnSpec<KernelRow> => numberColumn(key, label, tooltip, minWidth, (r) => orDash(r[key]));

const duration = (
  key: 'total_us' | 'mean_us' | 'min_us' | 'max_us',
  label: string,
  tooltip: string,
) => numberColumn(key, label, tooltip, 78, (r) => formatDuration(r[key]));

/** A launch delay this many times the kernel's mean duration is a queue, not a launch. */
export const QUEUED_RATIO = 10;

const QUEUED_HELP =
  'The kernel waited behind the work queued before it on its stream: the host ran ahead ' +
  'of the GPU (a deep queue keeps the GPU busy), not a slow launch.';

/** Launch call start → kernel start (— when no call of the row has a linked launch); far
 *  longer than the kernel itself, it says "queued" and why. */
const launchDelay = (
  key: 'launch_delay_mean_us' | 'launch_delay_p90_us',
  label: string,
  tooltip: string,
): ColumnSpec<KernelRow> => ({
  ...numberColumn(
    key,
    label,
    `${tooltip} It holds the launch and the wait behind the kernels queued before it on ` +
      `its stream. Graph kernels after a replay's first have none.`,
    92,
    () => '',
  ),
  cell: (r) => {
    const v = r[key];
    if (v === null) return num('—');
    const queued = r.mean_us > 0 && v > QUEUED_RATIO * r.mean_us;
    return h(
      'span',
      { class: 'ks-stack', title: queued ? QUEUED_HELP : undefined },
      num(formatDuration(v)),
      queued ? h('span', { class: 'ks-pct', testid: 'kernel-queued' }, 'queued') : null,
    );
  },
});

/** The name column, each name shown by its label (`kernelLabels`: folded, yet distinct). */
function nameColumn(labels: Map<string, string>): ColumnSpec<KernelRow> {
  return {
    key: 'name',
    label: 'Name',
    tooltip: 'Kernel name (template arguments and parameters folded; hover for the full name)',
    minWidth: 320,
    grow: 3,
    value: (row) => row.name,
    cell: (row) =>
      h(
        'span',
        { class: 'ks-mono', title: row.name },
        labels.get(row.name) ?? shortKernelName(row.name),
      ),
  };
}

const OPERATOR: ColumnSpec<KernelRow> = {
  key: 'op_name',
  label: 'Operator',
  tooltip: 'The operator whose runtime call launched the kernel. Click to sort.',
  minWidth: 180,
  grow: 1.6,
  value: (row) => row.op_name,
  cell: (row) => {
    const op = row.op_name
      ? h('span', { title: row.op_name }, row.op_name)
      : h('span', { class: 'ks-no' }, '(none)');
    if (!row.replayed) return op;
    // A graph replay: the op is the capturing one when the capture was profiled.
    const why = 'Ran in a CUDA/HIP graph replay (see the graph replay tile)';
    return h('span', null, op, h('span', { class: 'ks-no', title: why }, ' · replayed'));
  },
};

// Inductor kernels (compiled code): the aten ops fused in the kernel, and under them the
// model line that ran it (else the generated wrapper's), a link to it in the editor.
const SOURCE: ColumnSpec<KernelRow> = {
  key: 'source',
  label: 'Fused ops · source',
  tooltip:
    'Compiled (Inductor) kernels: the aten ops fused in the kernel, and the model code that ' +
    'ran it (else the generated wrapper); hover for every frame. Click to sort.',
  minWidth: 220,
  grow: 1.6,
  value: (row) => sourceText(row),
  cell: (row) => {
    const frames = row.source ?? [];
    if (!frames.length && !row.fused_ops) return h('span', { class: 'ks-no' }, '—');
    const title = [
      ...(row.fused_ops ? [`fused: ${row.fused_ops.join(', ')}`] : []),
      ...frames.map(
        (f) => `${f.filename}:${f.line ?? '?'} ${f.name}${f.generated ? ' (generated)' : ''}`,
      ),
    ].join('\n');
    const first = frames[0];
    const where = first
      ? sourceAnchor(first.filename, first.line, frameLabel(first), 'kernel-source-link')
      : null;
    return h(
      'span',
      { class: 'ks-source-cell', title },
      h('span', { class: 'ks-source-ops' }, fusedText(row.fused_ops)),
      where ? h('span', { class: 'ks-source-where' }, where) : null,
    );
  },
};

const DEVICE = countColumn('device', 'Device', 'Device the kernel ran on.', 60);
const STREAM = countColumn('stream', 'Stream', 'CUDA stream (— when the calls used several).', 70);

const LAUNCH_COLUMNS: ColumnSpec<KernelRow>[] = [
  numberColumn('calls', 'Calls', 'Number of launches.', 76, (r) => formatCount(r.calls)),
  duration('total_us', 'Total', 'Sum of the kernel durations.'),
  duration('mean_us', 'Mean', 'Mean duration per call.'),
  duration('min_us', 'Min', 'Shortest call.'),
  duration('max_us', 'Max', 'Longest call.'),
  launchDelay(
    'launch_delay_mean_us',
    'Launch delay',
    'Mean time from the launch call to the kernel start.',
  ),
  launchDelay('launch_delay_p90_us', 'Launch p90', '90th percentile of the launch delay.'),
  numberColumn(
    'blocks_per_sm',
    'Blocks/SM',
    'Mean blocks per SM (blocks of the kernel / SMs of the GPU), weighted by duration; below 1 leaves SMs idle.',
    80,
    (r) => (r.blocks_per_sm === null ? '—' : r.blocks_per_sm.toFixed(2)),
  ),
  numberColumn(
    'occupancy_pct',
    'Occupancy',
    'Mean estimated achieved occupancy, weighted by duration.',
    84,
    (r) => formatPercent(r.occupancy_pct, 1),
  ),
  countColumn('registers_per_thread', 'Registers', 'Registers per thread.', 74),
  numberColumn('shared_memory', 'Shared mem', 'Shared memory per block.', 100, (r) =>
    formatBytes(r.shared_memory),
  ),
  numberColumn(
    'grid',
    'Grid',
    'Grid dimensions (of the longest call when grouped by kernel); sorts by block count.',
    104,
    (r) => dimsText(r.grid),
    (r) => dimsSize(r.grid),
  ),
  numberColumn(
    'block',
    'Block',
    'Block dimensions; sorts by threads per block.',
    88,
    (r) => dimsText(r.block),
    (r) => dimsSize(r.block),
  ),
];

// The fields CUPTI writes beside the launch configuration (recent PyTorch), each column
// shown only where the trace has it.
const LIMITED_BY: ColumnSpec<KernelRow> = {
  key: 'occupancy_limited_by',
  label: 'Limited by',
  tooltip:
    'What bounds the occupancy of the longest call: REGS (registers per thread), SMEM ' +
    '(shared memory per block), WARPS, BLOCKS or BARRIERS per SM, as CUPTI reports it. ' +
    'Click to sort.',
  minWidth: 92,
  value: (row) => row.occupancy_limited_by,
  cell: (row) =>
    row.occupancy_limited_by === null
      ? h('span', { class: 'ks-no' }, '—')
      : h('span', { class: 'ks-mono' }, row.occupancy_limited_by),
};

const PRIORITY = countColumn(
  'priority',
  'Priority',
  'Stream priority the longest call ran at (lower is more urgent).',
  70,
);

const QUEUE = numberColumn(
  'queue_mean_us',
  'Queue wait',
  'Mean time from the launch entering its stream queue (CUPTI "queued") to the kernel start: ' +
    'the wait behind the work queued before it.',
  88,
  (r) => (r.queue_mean_us === null ? '—' : formatDuration(r.queue_mean_us)),
);

// The CUDA-graph annotations (torch's mark_kernels scopes) of a row's replayed calls.
const GRAPH_ANNOTATIONS: ColumnSpec<KernelRow> = {
  key: 'graph_annotations',
  label: 'Graph annotation',
  tooltip:
    "What the code that captured the CUDA graph named the kernel's node (torch " +
    'mark_kernels: module · op · phase), most time first. Click to sort.',
  minWidth: 160,
  grow: 1.2,
  value: (row) => row.graph_annotations?.join(' | ') ?? null,
  cell: (row) =>
    row.graph_annotations
      ? h('span', { title: row.graph_annotations.join('\n') }, row.graph_annotations.join(' | '))
      : h('span', { class: 'ks-no' }, '—'),
};

// Graph-replayed kernels: the code around the op that launched the kernel while the graph
// was captured (a profiled capture's Python frames), its first frame a link.
const CAPTURED_AT = capturedAtColumn<KernelRow>(
  (row) => row.captured_source ?? [],
  'kernel-captured-link',
);

const CUPTI_COLUMNS = {
  occupancy_limited_by: LIMITED_BY,
  priority: PRIORITY,
  queue_mean_us: QUEUE,
};

function cuptiColumns(rows: readonly KernelRow[]): ColumnSpec<KernelRow>[] {
  return recordedCuptiFields(rows).map((key) => CUPTI_COLUMNS[key]);
}

function tensorCoreColumns(matrixCoreName: string): ColumnSpec<KernelRow>[] {
  return [
    {
      key: 'tensor_cores_used',
      label: matrixCoreShort(matrixCoreName),
      tooltip:
        'The kernel runs on tensor cores (MFMA cores on AMD), by the kernel taxonomy; Unknown when ' +
        'its name does not tell. Click to sort.',
      minWidth: 92,
      value: (row) => row.tensor_cores_used,
      cell: (row) => yesNo(row.tensor_cores_used),
      sort: (row) => (row.tensor_cores_used === null ? 0.5 : row.tensor_cores_used ? 1 : 0),
    },
    {
      key: 'op_tensor_core_eligible',
      label: 'Op TC eligible',
      tooltip: 'A launching operator is tensor-core eligible (conv/matmul family). Click to sort.',
      minWidth: 104,
      value: (row) => row.op_tensor_core_eligible,
      cell: (row) => yesNo(row.op_tensor_core_eligible),
    },
  ];
}

/** The columns for a grouping; GPU and stream only when the trace has several. */
export function kernelColumns(
  groupBy: KernelGroupBy,
  data: KernelsResponse,
): ColumnSpec<KernelRow>[] {
  return [
    nameColumn(kernelLabels(data.rows.map((r) => r.name))),
    ...(groupBy === 'op' ? [OPERATOR] : []),
    ...(data.rows.some((r) => r.fused_ops !== undefined) ? [SOURCE] : []),
    ...(data.rows.some((r) => r.graph_annotations !== null) ? [GRAPH_ANNOTATIONS] : []),
    ...(data.rows.some((r) => r.captured_source !== undefined) ? [CAPTURED_AT] : []),
    ...(data.devices.length > 1 ? [DEVICE] : []),
    ...(data.streams.length > 1 ? [STREAM] : []),
    ...LAUNCH_COLUMNS,
    ...cuptiColumns(data.rows),
    ...tensorCoreColumns(data.matrix_core_name),
    ...rooflineColumns<KernelRow>(),
  ];
}
