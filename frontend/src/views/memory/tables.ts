// Columns of the Memory view's tables: allocations (alloc/free pairs) and operator
// statistics. Cells carry data-col / data-value (the API's raw number) for tests and CSV.

import type { MemoryOperatorRow } from '../../api/types';
import { h, type Children } from '../../components/dom';
import { DASH, formatBytes, formatCount, formatDuration } from '../../components/format';
import type { Column } from '../../components/table';
import { sortRows, type SortDir } from '../../components/table_model';
import {
  formatAbsTime,
  formatBytesExact,
  formatRelTime,
  STATE_HELP,
  stateLabel,
  type AllocationView,
} from './model';

const STATE_ORDER: Record<string, number> = { never_freed: 0, freed_unseen: 1, paired: 2 };

function attrs(col: string, value: number | string | null): Record<string, string> {
  return { 'data-col': col, 'data-value': value === null ? '' : String(value) };
}

function dash(): Children {
  return h('span', { class: 'ks-muted' }, DASH);
}

function opCell(name: string | null): Children {
  return name ? h('span', { class: 'ks-mem-op', title: name }, name) : dash();
}

function bytesCell(bytes: number): Children {
  return h(
    'span',
    { class: bytes === 0 ? 'ks-num ks-zero' : 'ks-num', title: formatBytesExact(bytes) },
    formatBytes(bytes),
  );
}

function timeCell(t: number | null, origin: number, missing: Children): Children {
  if (t === null) return missing;
  return h('span', { class: 'ks-num', title: formatAbsTime(t) }, formatRelTime(t - origin));
}

export function allocationColumns(origin: number): Column<AllocationView>[] {
  return [
    {
      key: 'state',
      label: 'State',
      title:
        'freed: both events seen; never freed: no free in the trace; allocated before recording: only the free is in the trace',
      minWidth: 112,
      grow: 0.9,
      cell: (v) =>
        h(
          'span',
          { class: `ks-mem-state ks-mem-state-${v.row.state}`, title: STATE_HELP[v.row.state] },
          stateLabel(v.row.state),
        ),
      sortValue: (v) => STATE_ORDER[v.row.state] ?? 3,
      cellAttrs: (v) => attrs('state', v.row.state),
    },
    {
      key: 'size',
      label: 'Size',
      align: 'right',
      minWidth: 92,
      grow: 0.8,
      cell: (v) => bytesCell(v.row.size_bytes),
      sortValue: (v) => v.row.size_bytes,
      cellAttrs: (v) => attrs('size', v.row.size_bytes),
    },
    {
      key: 'alloc_op',
      label: 'Allocated by',
      title: 'The operator the allocation happened in',
      minWidth: 170,
      grow: 2,
      cell: (v) => opCell(v.allocOp),
      sortValue: (v) => v.allocOp,
      cellAttrs: (v) => attrs('alloc_op', v.allocOp),
    },
    {
      key: 'parent_op',
      label: 'Parent op',
      title: 'The operator around it (useful when it is aten::empty)',
      minWidth: 150,
      grow: 1.6,
      cell: (v) => opCell(v.row.parent_op),
      sortValue: (v) => v.row.parent_op,
      cellAttrs: (v) => attrs('parent_op', v.row.parent_op),
    },
    {
      key: 'alloc_us',
      label: 'Allocated at',
      title: 'Time since the first memory event (hover for the trace time)',
      align: 'right',
      minWidth: 108,
      cell: (v) =>
        timeCell(v.row.alloc_us, origin, h('span', { class: 'ks-mem-unseen' }, 'before recording')),
      sortValue: (v) => v.row.alloc_us,
      cellAttrs: (v) => attrs('alloc_us', v.row.alloc_us),
    },
    {
      key: 'free_op',
      label: 'Freed by',
      title: 'The operator the free happened in',
      minWidth: 150,
      grow: 1.6,
      cell: (v) => opCell(v.freeOp),
      sortValue: (v) => v.freeOp,
      cellAttrs: (v) => attrs('free_op', v.freeOp),
    },
    {
      key: 'free_us',
      label: 'Freed at',
      title: 'Time since the first memory event (hover for the trace time)',
      align: 'right',
      minWidth: 108,
      cell: (v) =>
        timeCell(
          v.row.free_us,
          origin,
          v.row.state === 'never_freed'
            ? h('span', { class: 'ks-mem-never' }, 'never freed')
            : dash(),
        ),
      sortValue: (v) => v.row.free_us,
      cellAttrs: (v) => attrs('free_us', v.row.free_us),
    },
    {
      key: 'duration',
      label: 'Duration',
      title: 'Time between the allocation and its free',
      align: 'right',
      minWidth: 92,
      cell: (v) =>
        v.row.duration_us === null
          ? dash()
          : h('span', { class: 'ks-num' }, formatDuration(v.row.duration_us)),
      sortValue: (v) => v.row.duration_us,
      cellAttrs: (v) => attrs('duration', v.row.duration_us),
    },
  ];
}

/** The numeric fields of an operator row. */
type OpKey = {
  [K in keyof MemoryOperatorRow]: MemoryOperatorRow[K] extends number ? K : never;
}[keyof MemoryOperatorRow];

function countColumn(key: OpKey, label: string, title: string): Column<MemoryOperatorRow> {
  return {
    key,
    label,
    title,
    align: 'right',
    minWidth: 88,
    grow: 0.8,
    cell: (r) => h('span', { class: 'ks-num' }, formatCount(r[key])),
    sortValue: (r) => r[key],
    cellAttrs: (r) => attrs(key, r[key]),
  };
}

function bytesColumn(key: OpKey, label: string, title: string): Column<MemoryOperatorRow> {
  return {
    key,
    label,
    title,
    align: 'right',
    minWidth: 100,
    cell: (r) => bytesCell(r[key]),
    sortValue: (r) => r[key],
    cellAttrs: (r) => attrs(key, r[key]),
  };
}

export function operatorColumns(): Column<MemoryOperatorRow>[] {
  return [
    {
      key: 'name',
      label: 'Operator',
      minWidth: 220,
      grow: 3,
      cell: (r) => opCell(r.name),
      sortValue: (r) => r.name,
      cellAttrs: (r) => attrs('name', r.name),
    },
    countColumn('calls', 'Calls', 'Calls of the operator overlapping the range'),
    countColumn(
      'allocation_count',
      'Allocations',
      'Allocations in the operator and the operators it calls',
    ),
    bytesColumn(
      'allocation_bytes',
      'Allocated',
      'Bytes allocated in the operator and the operators it calls',
    ),
    countColumn('release_count', 'Releases', 'Frees in the operator and the operators it calls'),
    bytesColumn(
      'release_bytes',
      'Released',
      'Bytes freed in the operator and the operators it calls',
    ),
    bytesColumn('increase_bytes', 'Size increase', 'Allocated − released, with child operators'),
    bytesColumn(
      'self_allocation_bytes',
      'Self allocated',
      'Bytes allocated by the operator itself',
    ),
    bytesColumn('self_release_bytes', 'Self released', 'Bytes freed by the operator itself'),
    bytesColumn(
      'self_increase_bytes',
      'Self size increase',
      'Allocated − released by the operator itself',
    ),
  ];
}

/** The sort a VirtualTable shows (read from its header's aria-sort), if any. */
export function shownSort<R>(
  table: HTMLElement,
  columns: readonly Column<R>[],
): { column: Column<R>; dir: SortDir } | undefined {
  const headers = Array.from(table.querySelectorAll('.ks-thead [role="columnheader"]'));
  for (const [i, header] of headers.entries()) {
    const sort = header.getAttribute('aria-sort');
    const column = columns[i];
    if (column && (sort === 'ascending' || sort === 'descending')) {
      return { column, dir: sort === 'ascending' ? 'asc' : 'desc' };
    }
  }
  return undefined;
}

/** Rows in the order the table shows them (for the CSV export). */
export function inShownOrder<R>(
  rows: readonly R[],
  table: HTMLElement,
  columns: readonly Column<R>[],
): R[] {
  const sort = shownSort(table, columns);
  if (!sort?.column.sortValue) return rows.slice();
  return sortRows(rows, sort.column.sortValue, sort.dir);
}
