// The Distributed page's tables as data: one array of column specs per table (process
// groups, time per rank, collectives, stragglers, GPUs). Cells with test ids carry
// `<table>-<row>-<key>` and their value (data-value) for the end-to-end tests.

import type { DistributedResponse, ProcessGroupInfo } from '../../api/types';
import { FORMAT, num, numberFormat, type ColumnSpec } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { formatDuration } from '../../components/format';
import { causeCell, durationCell, lateRankCell, MISSING, rankCell } from './cells';
import {
  formatRanks,
  PART_COLOR,
  PART_HELP,
  PART_LABEL,
  PARTS,
  pct,
  rowShare,
  SYNC_COLOR,
  SYNC_HELP,
  waitShare,
  type CollectiveRow,
  type GpuRow,
  type RankRow,
  type StragglerRow,
  type SyncPart,
} from './model';
import { formatBandwidth, plural } from './text';

const bandwidth = numberFormat(formatBandwidth);
const percent = numberFormat(pct);

export const PROCESS_GROUP_COLUMNS: ColumnSpec<ProcessGroupInfo>[] = [
  { key: 'name', label: 'Group', minWidth: 70, grow: 0.5, value: (g) => g.name },
  {
    key: 'description',
    label: 'Description',
    minWidth: 140,
    value: (g) => g.description,
    sort: false,
  },
  { key: 'backend', label: 'Backend', minWidth: 150, value: (g) => g.backend_config, sort: false },
  {
    key: 'size',
    label: 'Size',
    align: 'right',
    minWidth: 60,
    grow: 0.4,
    value: (g) => g.size,
    format: FORMAT.count,
  },
  {
    key: 'ranks',
    label: 'Ranks',
    minWidth: 160,
    grow: 2,
    value: (g) => formatRanks(g.ranks),
    sort: false,
  },
];

function syncColumn(part: SyncPart): ColumnSpec<RankRow> {
  return {
    key: part,
    label: part === 'sync_wait' ? 'Sync wait' : 'Transfer',
    swatch: SYNC_COLOR[part],
    tooltip: `${SYNC_HELP[part]} (share of the rank’s collective time)`,
    align: 'right',
    minWidth: 90,
    value: (row) => row.values?.[part],
    cell: (row) => {
      const w = waitShare(row.values);
      return durationCell(
        row.values?.[part],
        w === null ? null : part === 'sync_wait' ? w : 100 - w,
      );
    },
    testid: (row) => `rank-${row.rank}-${part}`,
  };
}

const rankId =
  (what: string) =>
  (row: RankRow): string =>
    `rank-${row.rank}-${what}`;

const HOST_COLUMN: ColumnSpec<RankRow> = {
  key: 'host',
  label: 'Host',
  minWidth: 70,
  value: (r) => r.host,
};

const RANK_NAME_COLUMNS: ColumnSpec<RankRow>[] = [
  {
    key: 'rank',
    label: 'Rank',
    minWidth: 66,
    grow: 0.5,
    value: (r) => r.rank,
    cell: rankCell,
    testid: rankId('rank'),
  },
  {
    key: 'worker',
    label: 'Worker',
    minWidth: 110,
    grow: 1.4,
    tooltip:
      'The trace file’s worker name (rank from distributedInfo, the file name, or the order)',
    value: (row) => row.worker,
    cell: (row) => h('span', { title: `rank from ${row.rankSource}` }, row.worker),
    testid: rankId('worker'),
  },
];

const RANK_TIME_COLUMNS: ColumnSpec<RankRow>[] = [
  {
    key: 'step_time',
    label: 'Step time',
    tooltip: 'The rank’s time in the step (all steps: the sum of its steps)',
    align: 'right',
    minWidth: 86,
    value: (row) => row.values?.step_time,
    format: FORMAT.duration,
    testid: rankId('step_time'),
  },
  ...PARTS.map((part): ColumnSpec<RankRow> => ({
    key: part,
    label: PART_LABEL[part],
    swatch: PART_COLOR[part],
    tooltip: `${PART_HELP[part]} (click to sort)`,
    align: 'right',
    minWidth: part === 'communication' ? 126 : part === 'computation' ? 120 : 86,
    value: (row) => row.values?.[part],
    cell: (row) => durationCell(row.values?.[part], rowShare(row, part)),
    testid: rankId(part),
  })),
  syncColumn('sync_wait'),
  syncColumn('transfer'),
  {
    key: 'late',
    label: 'Late',
    tooltip: 'Steps in which this rank was the straggler, and by how much in total',
    align: 'right',
    minWidth: 80,
    value: (row) => row.lateBy,
    cell: (row) =>
      row.stepsLate
        ? h(
            'span',
            { class: 'ks-stack' },
            num(formatDuration(row.lateBy)),
            h('span', { class: 'ks-pct' }, plural(row.stepsLate, 'step')),
          )
        : MISSING(),
    testid: rankId('late'),
  },
  {
    key: 'unmatched',
    label: 'Unmatched',
    tooltip: 'Collectives no other rank’s trace has (all steps)',
    align: 'right',
    minWidth: 86,
    grow: 0.6,
    value: (row) => row.unmatched,
    format: FORMAT.count,
    testid: rankId('unmatched'),
  },
];

/** Time per rank; the Host column only when some rank records its host. */
export function rankColumns(view: DistributedResponse): ColumnSpec<RankRow>[] {
  const host = view.ranks.some((r) => r.host) ? [HOST_COLUMN] : [];
  return [...RANK_NAME_COLUMNS, ...host, ...RANK_TIME_COLUMNS];
}

const collectiveId =
  (what: string) =>
  (row: CollectiveRow): string =>
    `coll-${row.name}-${what}`;

function collectiveNumber(
  key: Extract<keyof CollectiveRow, string>,
  label: string,
  minWidth: number,
  format: ColumnSpec<CollectiveRow>['format'],
  tooltip?: string,
): ColumnSpec<CollectiveRow> {
  const spec: ColumnSpec<CollectiveRow> = {
    key,
    label,
    align: 'right',
    minWidth,
    value: (c) => c[key],
    format,
    testid: collectiveId(key),
  };
  if (tooltip !== undefined) spec.tooltip = tooltip;
  return spec;
}

export const COLLECTIVE_COLUMNS: ColumnSpec<CollectiveRow>[] = [
  {
    key: 'name',
    label: 'Collective',
    minWidth: 140,
    grow: 1.4,
    value: (c) => c.name,
    testid: collectiveId('name'),
  },
  { ...collectiveNumber('calls', 'Calls', 70, FORMAT.count), grow: 0.6 },
  collectiveNumber(
    'bytes',
    'Bytes',
    96,
    FORMAT.bytes,
    'Data size of the calls whose size the trace records',
  ),
  collectiveNumber('total_us', 'Total time', 96, FORMAT.duration),
  collectiveNumber('avg_us', 'Avg time', 90, FORMAT.duration),
  collectiveNumber(
    'algbw_gbps',
    'Algorithm BW',
    104,
    bandwidth,
    'Size / transfer time (GB/s), as nccl-tests',
  ),
  collectiveNumber(
    'busbw_gbps',
    'Bus BW',
    96,
    bandwidth,
    'Algorithm bandwidth × NCCL’s bus factor for the collective and group size (GB/s)',
  ),
  {
    ...collectiveNumber('sync_wait_us', 'Sync wait', 100, undefined, SYNC_HELP.sync_wait),
    swatch: SYNC_COLOR.sync_wait,
    cell: (c) => durationCell(c.sync_wait_us, c.wait_pct),
  },
  {
    ...collectiveNumber('transfer_us', 'Transfer', 100, undefined, SYNC_HELP.transfer),
    swatch: SYNC_COLOR.transfer,
    cell: (c) => durationCell(c.transfer_us, c.wait_pct === null ? null : 100 - c.wait_pct),
  },
];

const stragglerId =
  (what: string) =>
  (row: StragglerRow): string =>
    `straggler-${row.step}-${what}`;

const STRAGGLER_COLUMNS: ColumnSpec<StragglerRow>[] = [
  {
    key: 'step',
    label: 'Step',
    minWidth: 130,
    grow: 1.2,
    value: (r) => r.step,
    sort: (r) => r.number ?? r.step,
    testid: stragglerId('step'),
  },
  {
    key: 'ranks',
    label: 'Ranks',
    align: 'right',
    minWidth: 64,
    grow: 0.5,
    value: (r) => r.ranks,
    format: FORMAT.count,
  },
  {
    key: 'median',
    label: 'Median step',
    align: 'right',
    minWidth: 96,
    value: (r) => r.median,
    format: FORMAT.duration,
  },
  {
    key: 'max',
    label: 'Slowest step',
    align: 'right',
    minWidth: 96,
    value: (r) => r.max,
    format: FORMAT.duration,
  },
  {
    key: 'rank',
    label: 'Late rank',
    minWidth: 130,
    grow: 1.2,
    value: (r) => r.straggler?.rank,
    cell: lateRankCell,
    testid: stragglerId('rank'),
  },
  {
    key: 'late_by',
    label: 'Late by',
    tooltip:
      'Its arrival at the step’s first common collective (else the step end) minus the median of the other ranks',
    align: 'right',
    minWidth: 92,
    value: (r) => r.straggler?.late_by_us,
    format: FORMAT.duration,
    testid: stragglerId('late_by'),
  },
  {
    key: 'cause',
    label: 'Cause',
    tooltip: 'The factor in which the late rank exceeds the other ranks’ median the most',
    minWidth: 196,
    grow: 1.5,
    value: (r) => r.straggler?.cause,
    cell: causeCell,
    testid: stragglerId('cause'),
  },
  {
    key: 'measured',
    label: 'Measured at',
    minWidth: 110,
    grow: 0.8,
    value: (r) => r.straggler?.measured,
    format: (m) =>
      typeof m !== 'string'
        ? '—'
        : m === 'first_collective'
          ? 'first collective'
          : m.replace(/_/g, ' '),
  },
];

/** A last column linking each row to the trace view (a straggler's step, a group's call). */
export function traceColumn<R>(traceLink: (row: R) => Children): ColumnSpec<R> {
  return {
    key: 'trace',
    label: 'Trace',
    minWidth: 120,
    value: () => null,
    cell: traceLink,
    sort: false,
  };
}

/** Stragglers per step; the last column links each step of its late rank to the trace. */
export function stragglerColumns(
  traceLink: (row: StragglerRow) => Children,
): ColumnSpec<StragglerRow>[] {
  return [...STRAGGLER_COLUMNS, traceColumn(traceLink)];
}

type Device = GpuRow['device'];

function gpuColumn(
  key: string,
  label: string,
  minWidth: number,
  value: (d: Device) => number | string | null,
  format: ColumnSpec<GpuRow>['format'],
): ColumnSpec<GpuRow> {
  return { key, label, align: 'right', minWidth, value: (r) => value(r.device), format };
}

export const GPU_COLUMNS: ColumnSpec<GpuRow>[] = [
  {
    key: 'rank',
    label: 'Rank',
    minWidth: 64,
    grow: 0.5,
    value: (r) => r.rank,
    format: FORMAT.number,
    testid: (r) => `gpu-${r.id}-rank`,
  },
  { key: 'worker', label: 'Worker', minWidth: 120, grow: 1.2, value: (r) => r.worker },
  { ...gpuColumn('gpu', 'GPU', 56, (d) => d.id, FORMAT.number), grow: 0.4 },
  { key: 'name', label: 'Device', minWidth: 150, grow: 1.6, value: (r) => r.device.name },
  gpuColumn('memory', 'Memory', 90, (d) => d.memory_bytes, FORMAT.bytes),
  { ...gpuColumn('cc', 'Compute cap.', 96, (d) => d.compute_capability, FORMAT.text), grow: 0.6 },
  {
    ...gpuColumn('util', 'Utilization', 90, (d) => d.utilization_pct, percent),
    tooltip: 'Share of the time a kernel ran on the GPU',
    testid: (r) => `gpu-${r.id}-util`,
  },
  gpuColumn('sm', 'SM efficiency', 100, (d) => d.sm_efficiency_pct, percent),
  gpuColumn('occupancy', 'Occupancy', 90, (d) => d.achieved_occupancy_pct, percent),
  gpuColumn('tc', 'Tensor cores', 96, (d) => d.tensor_core_pct, percent),
  gpuColumn('kernel', 'Kernel time', 96, (d) => d.kernel_time_us, FORMAT.duration),
];
