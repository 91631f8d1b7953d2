// The table of a table page (Operators, Kernels, Memory): its columns from specs, the search
// filter and its search box, the sort (reported for the URL), the row count, the column
// choices kept across rebuilds, and the rows as shown (filtered and sorted) for the CSV
// export.

import { toColumns, type CellAttrs, type ColumnSpec } from '../components/columns';
import { h, replaceChildren } from '../components/dom';
import { filterRows } from '../components/filter';
import { VirtualTable, type Column } from '../components/table';
import { sortRows } from '../components/table_model';
import { onSortChange, searchField, type SearchField } from '../components/table_tools';
import type { SortSpec } from '../components/url_values';
import { showRowCount } from './page_kit';

export interface TablePanelOptions<R> {
  testid: string;
  caption: string;
  /** Column keys dropped first, in order, when the table is too narrow. */
  optional: readonly string[];
  rowAttrs: (row: R) => Record<string, string>;
  /** What the search matches in a row. */
  searchTexts: (row: R) => readonly string[];
  cellAttrs: CellAttrs;
  /** The row-count element the panel keeps up to date (page_kit's table chrome), if any. */
  count?: HTMLElement;
  /** The user sorted (or unsorted) the table. */
  onSort?: (sort: SortSpec | undefined) => void;
  /** The table's height limit in px (default 560). */
  maxHeight?: number;
  /** Row height in px (default: the table's). */
  rowHeight?: number;
}

export class TablePanel<R> {
  /** Where the table goes in the page. */
  readonly element = h('div', { class: 'ks-table-host' });
  private table: VirtualTable<R> | undefined;
  private columns: Column<R>[] = [];
  private filtered: R[] = [];
  private sort: SortSpec | undefined;
  private readonly columnChoice = new Map<string, boolean>();

  constructor(private readonly opts: TablePanelOptions<R>) {}

  /**
   * A new table for these columns and rows. A sort on a column that is gone is dropped:
   * returns the sort in force.
   */
  build(
    specs: readonly ColumnSpec<R>[],
    rows: readonly R[],
    look: { sort: SortSpec | undefined; search: string; emptyText: string; hidden?: string[] },
  ): SortSpec | undefined {
    this.table?.destroy();
    this.columns = toColumns(specs, this.opts.cellAttrs);
    const sort = look.sort;
    this.sort = sort && this.columns.some((c) => c.key === sort.key) ? sort : undefined;
    this.filtered = filterRows(rows, look.search, this.opts.searchTexts);
    const table = new VirtualTable<R>({
      columns: this.columns,
      rows: this.filtered,
      rowAttrs: this.opts.rowAttrs,
      testid: this.opts.testid,
      caption: this.opts.caption,
      emptyText: look.emptyText,
      maxHeight: this.opts.maxHeight ?? 560,
      ...(this.opts.rowHeight ? { rowHeight: this.opts.rowHeight } : {}),
      optional: this.opts.optional,
      ...(look.hidden ? { hidden: look.hidden } : {}),
      columnChoice: this.columnChoice,
      ...(this.sort ? { sort: this.sort } : {}),
    });
    onSortChange(table, this.columns, (next) => {
      this.sort = next;
      this.opts.onSort?.(next);
    });
    this.table = table;
    replaceChildren(this.element, table.element);
    this.filter(rows, look.search);
    return this.sort;
  }

  /** Shows the rows that match the search (of these rows, or of the current ones). */
  filter(rows: readonly R[], search: string): void {
    this.filtered = filterRows(rows, search, this.opts.searchTexts);
    this.table?.setRows(this.filtered);
    if (this.opts.count) showRowCount(this.opts.count, this.filtered.length, rows.length);
  }

  /** How many rows match the search. */
  shownCount(): number {
    return this.filtered.length;
  }

  /** The search box over this table: the text typed goes to `state.search` (then `save`)
   *  and filters the page's current rows. */
  searchBox(
    testid: string,
    placeholder: string,
    state: { search: string },
    save: () => void,
    rows: () => readonly R[],
  ): SearchField {
    return searchField('Search', testid, placeholder, state.search, (v) => {
      state.search = v;
      save();
      this.filter(rows(), v);
    });
  }

  /** Redraws the rows (their attributes changed, e.g. the selected row). */
  refresh(): void {
    this.table?.setRows(this.filtered);
  }

  /** The rows as the table shows them: filtered and sorted. */
  shownRows(): R[] {
    const sort = this.sort;
    const column = sort && this.columns.find((c) => c.key === sort.key);
    return sort && column?.sortValue
      ? sortRows(this.filtered, column.sortValue, sort.dir)
      : this.filtered;
  }

  destroy(): void {
    this.table?.destroy();
  }
}
