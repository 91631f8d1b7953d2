// Columns of the Memory view's tables as data (components/columns.ts): allocations
// (alloc/free pairs) and operator statistics. With `colAttrs`, cells carry data-col /
// data-value (the API's raw number) for tests.

import type { MemoryOperatorRow } from '../../api/types';
import { FORMAT, num, type CellFormat, type ColumnSpec } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { DASH, formatBytes, formatDuration } from '../../components/format';
import {
  formatAbsTime,
  formatBytesExact,
  formatRelTime,
  STATE_HELP,
  stateLabel,
  type AllocationView,
} from './model';

const STATE_ORDER: Record<string, number> = { never_freed: 0, freed_unseen: 1, paired: 2 };

function dash(): Children {
  return h('span', { class: 'ks-muted' }, DASH);
}

/** An operator name, cut by the column's width (hover for the whole name). */
const opFormat: CellFormat = (value) =>
  typeof value === 'string' && value !== ''
    ? h('span', { class: 'ks-mem-op', title: value }, value)
    : dash();

/** Bytes in binary units (hover for the exact count); zero greyed. */
const bytesFormat: CellFormat = (value) => {
  const bytes = typeof value === 'number' ? value : 0;
  return h(
    'span',
    { class: bytes === 0 ? 'ks-num ks-zero' : 'ks-num', title: formatBytesExact(bytes) },
    formatBytes(bytes),
  );
};

const durationFormat: CellFormat = (value) =>
  typeof value === 'number' ? num(formatDuration(value)) : dash();

/** A time relative to `origin` (hover for the trace time), or `missing` when there is none. */
function timeCell(t: number | null, origin: number, missing: Children): Children {
  if (t === null) return missing;
  return h('span', { class: 'ks-num', title: formatAbsTime(t) }, formatRelTime(t - origin));
}

/** A column of operator names. */
function opColumn<R>(
  key: string,
  label: string,
  value: (row: R) => string | null,
  look: { tooltip?: string; minWidth: number; grow: number },
): ColumnSpec<R> {
  return { key, label, ...look, value, format: opFormat };
}

/** A column of trace times shown relative to `origin`. */
function timeColumn(
  key: string,
  label: string,
  origin: number,
  time: (v: AllocationView) => number | null,
  missing: (v: AllocationView) => Children,
): ColumnSpec<AllocationView> {
  return {
    key,
    label,
    tooltip: 'Time since the first memory event (hover for the trace time)',
    align: 'right',
    minWidth: 108,
    value: time,
    cell: (v) => timeCell(time(v), origin, missing(v)),
  };
}

const STATE_COLUMN: ColumnSpec<AllocationView> = {
  key: 'state',
  label: 'State',
  tooltip:
    'freed: both events seen; never freed: no free in the trace; allocated before recording: only the free is in the trace',
  minWidth: 112,
  grow: 0.9,
  value: (v) => v.row.state,
  cell: (v) =>
    h(
      'span',
      { class: `ks-mem-state ks-mem-state-${v.row.state}`, title: STATE_HELP[v.row.state] },
      stateLabel(v.row.state),
    ),
  sort: (v) => STATE_ORDER[v.row.state] ?? 3,
};

/** The allocation table's columns; times are shown relative to `origin`. */
export function allocationColumns(origin: number): ColumnSpec<AllocationView>[] {
  const unseen = (): Children => h('span', { class: 'ks-mem-unseen' }, 'before recording');
  const notFreed = (v: AllocationView): Children =>
    v.row.state === 'never_freed' ? h('span', { class: 'ks-mem-never' }, 'never freed') : dash();
  return [
    STATE_COLUMN,
    {
      key: 'size',
      label: 'Size',
      align: 'right',
      minWidth: 92,
      grow: 0.8,
      value: (v) => v.row.size_bytes,
      format: bytesFormat,
    },
    opColumn('alloc_op', 'Allocated by', (v: AllocationView) => v.allocOp, {
      tooltip: 'The operator the allocation happened in',
      minWidth: 170,
      grow: 2,
    }),
    opColumn('parent_op', 'Parent op', (v: AllocationView) => v.row.parent_op, {
      tooltip: 'The operator around it (useful when it is aten::empty)',
      minWidth: 150,
      grow: 1.6,
    }),
    timeColumn('alloc_us', 'Allocated at', origin, (v) => v.row.alloc_us, unseen),
    opColumn('free_op', 'Freed by', (v: AllocationView) => v.freeOp, {
      tooltip: 'The operator the free happened in',
      minWidth: 150,
      grow: 1.6,
    }),
    timeColumn('free_us', 'Freed at', origin, (v) => v.row.free_us, notFreed),
    {
      key: 'duration',
      label: 'Duration',
      tooltip: 'Time between the allocation and its free',
      align: 'right',
      minWidth: 92,
      value: (v) => v.row.duration_us,
      format: durationFormat,
    },
  ];
}

/** The numeric fields of an operator row. */
type OpKey = {
  [K in keyof MemoryOperatorRow]: MemoryOperatorRow[K] extends number ? K : never;
}[keyof MemoryOperatorRow];

/** A right-aligned number column of an operator row: a count or bytes. */
function numberColumn(
  kind: 'count' | 'bytes',
  key: OpKey,
  label: string,
  tooltip: string,
): ColumnSpec<MemoryOperatorRow> {
  const look = kind === 'count' ? { minWidth: 88, grow: 0.8 } : { minWidth: 100 };
  const format = kind === 'count' ? FORMAT.count : bytesFormat;
  return { key, label, tooltip, align: 'right', ...look, value: (r) => r[key], format };
}

/** The operator statistics table's columns. */
export const OPERATOR_COLUMNS: readonly ColumnSpec<MemoryOperatorRow>[] = [
  opColumn('name', 'Operator', (r: MemoryOperatorRow) => r.name, { minWidth: 220, grow: 3 }),
  numberColumn('count', 'calls', 'Calls', 'Calls of the operator overlapping the range'),
  numberColumn(
    'count',
    'allocation_count',
    'Allocations',
    'Allocations in the operator and the operators it calls',
  ),
  numberColumn(
    'bytes',
    'allocation_bytes',
    'Allocated',
    'Bytes allocated in the operator and the operators it calls',
  ),
  numberColumn(
    'count',
    'release_count',
    'Releases',
    'Frees in the operator and the operators it calls',
  ),
  numberColumn(
    'bytes',
    'release_bytes',
    'Released',
    'Bytes freed in the operator and the operators it calls',
  ),
  numberColumn(
    'bytes',
    'increase_bytes',
    'Size increase',
    'Allocated − released, with child operators',
  ),
  numberColumn(
    'bytes',
    'self_allocation_bytes',
    'Self allocated',
    'Bytes allocated by the operator itself',
  ),
  numberColumn(
    'bytes',
    'self_release_bytes',
    'Self released',
    'Bytes freed by the operator itself',
  ),
  numberColumn(
    'bytes',
    'self_increase_bytes',
    'Self size increase',
    'Allocated − released by the operator itself',
  ),
];
