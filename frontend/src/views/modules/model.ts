// The Module page's pure parts: which rows of the module tree are on screen (the open
// nodes' children, siblings in the sort's order) and the links' URL states.

import type { ModuleRow } from '../../api/types';
import { compareValues, type SortValue } from '../../components/table_model';
import type { SortSpec } from '../../components/url_values';

export const SORT_KEYS = [
  'name',
  'calls',
  'host_self_us',
  'host_total_us',
  'device_self_us',
  'device_total_us',
] as const;

/** Rows by parent id (-1: the roots), each list in the server's order. */
export function childrenOf(rows: readonly ModuleRow[]): Map<number, ModuleRow[]> {
  const out = new Map<number, ModuleRow[]>();
  for (const row of rows) {
    const list = out.get(row.parent);
    if (list) list.push(row);
    else out.set(row.parent, [row]);
  }
  return out;
}

function sortValue(row: ModuleRow, key: string): SortValue {
  const value = (row as unknown as Record<string, unknown>)[key];
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}

/**
 * The rows shown: depth first from the roots, into the open rows only; siblings sorted by
 * `sort` (stable: ties keep the server's order, largest host total first), so a sort
 * orders each level of the tree and never tears a child from its parent.
 */
export function visibleRows(
  rows: readonly ModuleRow[],
  open: ReadonlySet<number>,
  sort: SortSpec | undefined,
): ModuleRow[] {
  const children = childrenOf(rows);
  const ordered = (list: readonly ModuleRow[]): ModuleRow[] => {
    if (!sort) return list.slice();
    return list
      .map((row, index) => ({ row, index, value: sortValue(row, sort.key) }))
      .sort((a, b) => compareValues(a.value, b.value, sort.dir) || a.index - b.index)
      .map((e) => e.row);
  };
  const out: ModuleRow[] = [];
  const walk = (parent: number): void => {
    for (const row of ordered(children.get(parent) ?? [])) {
      out.push(row);
      if (open.has(row.id)) walk(row.id);
    }
  };
  walk(-1);
  return out;
}

/** The ids of the rows that have children (what "Expand all" opens). */
export function parentIds(rows: readonly ModuleRow[]): Set<number> {
  return new Set(rows.filter((r) => r.parent >= 0).map((r) => r.parent));
}

/** What the page opens first: the rows above `depth` (the roots and their children). */
export function initialOpen(rows: readonly ModuleRow[], depth = 2): Set<number> {
  const parents = parentIds(rows);
  return new Set(rows.filter((r) => r.depth < depth && parents.has(r.id)).map((r) => r.id));
}

/** The operator with the most device time (then host time) directly in the module. */
export function topOp(row: ModuleRow): string | undefined {
  return row.ops[0]?.name;
}

/** The trace view's URL state on the module's first call (times as the trace's). */
export function traceState(row: ModuleRow): Record<string, string> {
  const end = row.first_end_us > row.first_start_us ? row.first_end_us : row.first_start_us + 1;
  return { view: 'trace', t0: String(row.first_start_us), t1: String(end) };
}

/** The Operators page's URL state searching for one operator name. */
export function operatorsState(name: string): Record<string, string> {
  return { view: 'operators', 'operators.search': name };
}
