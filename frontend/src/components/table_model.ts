// Pure parts of the virtual table: which rows are on screen, and sorting.

export interface Range {
  start: number;
  end: number;
}

/** Rows [start, end) to render for a viewport, with `overscan` extra rows each side. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  count: number,
  overscan = 8,
): Range {
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const last = Math.ceil((Math.max(0, scrollTop) + Math.max(0, viewportHeight)) / rowHeight);
  const start = Math.max(0, Math.min(count, first - overscan));
  const end = Math.max(start, Math.min(count, last + overscan));
  return { start, end };
}

export type SortDir = 'asc' | 'desc';
export type SortValue = number | string | null | undefined;

function missing(value: SortValue): boolean {
  return (
    value === null || value === undefined || (typeof value === 'number' && Number.isNaN(value))
  );
}

/** Compares two sort values; missing values always sort last. */
export function compareValues(a: SortValue, b: SortValue, dir: SortDir): number {
  const ma = missing(a);
  const mb = missing(b);
  if (ma || mb) return ma === mb ? 0 : ma ? 1 : -1;
  let result: number;
  if (typeof a === 'number' && typeof b === 'number') {
    result = a - b;
  } else {
    result = String(a).localeCompare(String(b), undefined, { numeric: true });
  }
  return dir === 'asc' ? result : -result;
}

/** A stable sort by key; returns a new array. */
export function sortRows<R>(rows: readonly R[], key: (row: R) => SortValue, dir: SortDir): R[] {
  return rows
    .map((row, index) => ({ row, index, value: key(row) }))
    .sort((x, y) => compareValues(x.value, y.value, dir) || x.index - y.index)
    .map((entry) => entry.row);
}

export interface ColumnWidth {
  key: string;
  minWidth: number;
}

export interface ColumnFit {
  /** Keys hidden until the user shows them (e.g. columns that mean nothing here). */
  hidden: ReadonlySet<string>;
  /** Keys hidden, in this order, while the columns' minimum widths exceed the width. */
  optional: readonly string[];
  /** The user's own show (true) / hide (false) choices; they win over both lists. */
  choice: ReadonlyMap<string, boolean>;
}

/**
 * The keys of the columns to show in `available` px: the table fits without scrolling
 * sideways when it can. `available` 0 (not laid out yet) hides no optional column.
 */
export function fitColumns(
  columns: readonly ColumnWidth[],
  fit: ColumnFit,
  available: number,
): Set<string> {
  const shown = columns.filter((c) => fit.choice.get(c.key) ?? !fit.hidden.has(c.key));
  let width = shown.reduce((sum, c) => sum + c.minWidth, 0);
  const keys = new Set(shown.map((c) => c.key));
  for (const key of fit.optional) {
    if (available <= 0 || width <= available) break;
    const column = shown.find((c) => c.key === key);
    if (!column || fit.choice.has(key)) continue;
    keys.delete(key);
    width -= column.minWidth;
  }
  return keys;
}
