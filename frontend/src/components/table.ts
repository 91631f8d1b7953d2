// A small virtualized table: only the rows in view (plus some overscan) are in the DOM,
// so 10k+ rows scroll smoothly. Fixed row height; columns share one CSS grid template.
// Tables with `optional` or `hidden` columns fit their width (fitColumns) and get a
// "Columns" menu; a hidden column's cells stay in the DOM, undisplayed.

import { ColumnChooser } from './column_chooser';
import { h, replaceChildren, type Children } from './dom';
import { fitColumns, sortRows, visibleRange, type SortDir, type SortValue } from './table_model';

export interface Column<R> {
  key: string;
  label: string;
  /** A colour swatch shown before the label (e.g. a chart series colour). */
  swatch?: string;
  /** Header tooltip. */
  title?: string;
  align?: 'left' | 'right';
  /** Narrowest width in px (default 96); the table scrolls sideways below the sum. */
  minWidth?: number;
  /** Share of the extra width (default 1). */
  grow?: number;
  cell: (row: R) => Children;
  sortValue?: (row: R) => SortValue;
  cellAttrs?: (row: R) => Record<string, string>;
}

export interface TableOptions<R> {
  columns: Column<R>[];
  rows: readonly R[];
  /** Rows pinned under the body (e.g. an Average row); never sorted or virtualized. */
  footer?: readonly R[];
  rowHeight?: number;
  maxHeight?: number;
  testid?: string;
  rowAttrs?: (row: R) => Record<string, string>;
  footerAttrs?: (row: R) => Record<string, string>;
  sort?: { key: string; dir: SortDir };
  emptyText?: string;
  caption?: string;
  /** Column keys hidden, in this order, while the table is too narrow for them. */
  optional?: readonly string[];
  /** Column keys hidden until the user shows them. */
  hidden?: readonly string[];
  /** The user's show/hide choices; pass one Map to keep them when the table is rebuilt. */
  columnChoice?: Map<string, boolean>;
}

const OVERSCAN = 8;

export class VirtualTable<R> {
  readonly element: HTMLElement;
  private readonly opts: TableOptions<R>;
  private readonly rowHeight: number;
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly windowEl: HTMLElement;
  private readonly header: HTMLElement;
  private readonly footerEl: HTMLElement;
  private rows: R[] = [];
  private sorted: R[] = [];
  private sort: { key: string; dir: SortDir } | undefined;
  private rendered = { start: -1, end: -1 };
  private frame = 0;
  private readonly resizeObserver: ResizeObserver | undefined;
  private readonly grid: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly chooser: ColumnChooser | undefined;
  private readonly choice: Map<string, boolean>;
  private shown = new Set<string>();

  constructor(opts: TableOptions<R>) {
    this.opts = opts;
    this.rowHeight = opts.rowHeight ?? 36;
    this.sort = opts.sort;
    this.choice = opts.columnChoice ?? new Map<string, boolean>();

    this.header = h('div', { class: 'ks-tr ks-thead', role: 'row' });
    this.spacer = h('div', { class: 'ks-tspacer' });
    this.windowEl = h('div', { class: 'ks-twindow', role: 'rowgroup' });
    this.viewport = h(
      'div',
      {
        class: 'ks-tviewport',
        style: `max-height:${opts.maxHeight ?? 480}px`,
        dataset: { rowHeight: String(this.rowHeight) },
        on: { scroll: () => this.schedule() },
      },
      this.spacer,
      this.windowEl,
    );
    this.footerEl = h('div', { class: 'ks-tfoot', role: 'rowgroup' });
    this.grid = h(
      'div',
      { class: 'ks-table', role: 'table', attrs: { 'aria-label': opts.caption } },
      this.header,
      this.viewport,
      this.footerEl,
    );
    const choosable = (opts.optional?.length ?? 0) + (opts.hidden?.length ?? 0) > 0;
    const testid = choosable ? undefined : opts.testid;
    this.scroller = h('div', { class: 'ks-table-scroll', testid }, this.grid);
    if (choosable) {
      this.chooser = new ColumnChooser(
        opts.columns,
        (key, shown) => {
          this.choice.set(key, shown);
          this.layout(true);
        },
        opts.testid,
      );
      this.element = h(
        'div',
        { class: 'ks-table-block', testid: opts.testid },
        h('div', { class: 'ks-table-bar' }, this.chooser.element),
        this.scroller,
      );
    } else {
      this.element = this.scroller;
    }

    if (typeof ResizeObserver !== 'undefined') {
      this.resizeObserver = new ResizeObserver(() => {
        this.layout(false);
        this.rendered = { start: -1, end: -1 };
        this.schedule();
      });
      this.resizeObserver.observe(this.viewport);
      this.resizeObserver.observe(this.scroller);
    }
    this.layout(true);
    this.setRows(opts.rows);
  }

  /** Picks the columns that fit (or the user chose); redraws when they changed. */
  private layout(force: boolean): void {
    const columns = this.opts.columns.map((c) => ({ key: c.key, minWidth: c.minWidth ?? 96 }));
    const fit = {
      hidden: new Set(this.opts.hidden ?? []),
      optional: this.opts.optional ?? [],
      choice: this.choice,
    };
    const shown = fitColumns(columns, fit, this.scroller.clientWidth);
    const same = shown.size === this.shown.size && [...shown].every((k) => this.shown.has(k));
    if (same && !force) return;
    this.shown = shown;
    const visible = this.opts.columns.filter((c) => shown.has(c.key));
    const template = visible.map((c) => `minmax(${c.minWidth ?? 96}px, ${c.grow ?? 1}fr)`);
    const minWidth = visible.reduce((sum, c) => sum + (c.minWidth ?? 96), 0);
    this.grid.setAttribute(
      'style',
      `--ks-cols:${template.join(' ')};--ks-row-h:${this.rowHeight}px;min-width:${minWidth}px`,
    );
    this.chooser?.update(shown);
    this.rendered = { start: -1, end: -1 };
    this.renderHeader();
    this.renderFooter();
    this.renderBody();
  }

  setRows(rows: readonly R[]): void {
    this.rows = rows.slice();
    this.applySort();
  }

  destroy(): void {
    cancelAnimationFrame(this.frame);
    this.resizeObserver?.disconnect();
    this.element.remove();
  }

  private applySort(): void {
    const sort = this.sort;
    const column = sort && this.opts.columns.find((c) => c.key === sort.key);
    this.sorted =
      sort && column?.sortValue ? sortRows(this.rows, column.sortValue, sort.dir) : this.rows;
    this.spacer.style.height = `${this.sorted.length * this.rowHeight}px`;
    this.rendered = { start: -1, end: -1 };
    this.renderHeader();
    this.renderBody();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderBody();
    });
  }

  private renderHeader(): void {
    const cells = this.opts.columns.map((column) => {
      const active = this.sort?.key === column.key;
      const sortable = Boolean(column.sortValue);
      const arrow = active ? (this.sort?.dir === 'asc' ? ' ▲' : ' ▼') : '';
      return h(
        'div',
        {
          class: `ks-th${column.align === 'right' ? ' ks-right' : ''}${sortable ? ' ks-sortable' : ''}${this.offClass(column)}`,
          role: 'columnheader',
          title: column.title ?? (sortable ? `Sort by ${column.label}` : undefined),
          attrs: {
            'aria-sort': active
              ? this.sort?.dir === 'asc'
                ? 'ascending'
                : 'descending'
              : undefined,
            tabindex: sortable ? 0 : undefined,
          },
          on: sortable
            ? {
                click: () => this.toggleSort(column.key),
                keydown: (event) => {
                  if (event.key === 'Enter' || event.key === ' ') {
                    event.preventDefault();
                    this.toggleSort(column.key);
                  }
                },
              }
            : undefined,
        },
        ...swatchedLabel(column.label, column.swatch),
        arrow,
      );
    });
    replaceChildren(this.header, cells);
  }

  /** Cells of hidden columns stay in the row (their data-col values too), undisplayed. */
  private offClass(column: Column<R>): string {
    return this.shown.has(column.key) ? '' : ' ks-col-off';
  }

  private toggleSort(key: string): void {
    if (this.sort?.key === key) {
      this.sort = { key, dir: this.sort.dir === 'asc' ? 'desc' : 'asc' };
    } else {
      this.sort = { key, dir: 'desc' };
    }
    this.applySort();
  }

  private buildRow(row: R, attrs: Record<string, string> | undefined, extra: string): HTMLElement {
    const rowEl = h('div', { class: `ks-tr${extra}`, role: 'row' });
    if (attrs) for (const [k, v] of Object.entries(attrs)) rowEl.setAttribute(k, v);
    for (const column of this.opts.columns) {
      const cell = h(
        'div',
        {
          class: `ks-td${column.align === 'right' ? ' ks-right' : ''}${this.offClass(column)}`,
          role: 'cell',
        },
        column.cell(row),
      );
      const cellAttrs = column.cellAttrs?.(row);
      if (cellAttrs) for (const [k, v] of Object.entries(cellAttrs)) cell.setAttribute(k, v);
      rowEl.appendChild(cell);
    }
    return rowEl;
  }

  private renderBody(): void {
    const count = this.sorted.length;
    if (count === 0) {
      replaceChildren(
        this.windowEl,
        h('div', { class: 'ks-tempty' }, this.opts.emptyText ?? 'No rows'),
      );
      this.rendered = { start: 0, end: 0 };
      return;
    }
    const height = this.viewport.clientHeight || (this.opts.maxHeight ?? 480);
    const range = visibleRange(this.viewport.scrollTop, height, this.rowHeight, count, OVERSCAN);
    if (range.start === this.rendered.start && range.end === this.rendered.end) return;
    this.rendered = range;
    const rows: HTMLElement[] = [];
    for (let i = range.start; i < range.end; i++) {
      const row = this.sorted[i];
      if (row === undefined) continue;
      rows.push(this.buildRow(row, this.opts.rowAttrs?.(row), i % 2 ? ' ks-odd' : ''));
    }
    this.windowEl.style.transform = `translateY(${range.start * this.rowHeight}px)`;
    replaceChildren(this.windowEl, rows);
  }

  private renderFooter(): void {
    const footer = this.opts.footer ?? [];
    replaceChildren(
      this.footerEl,
      footer.map((row) => this.buildRow(row, this.opts.footerAttrs?.(row), ' ks-tfoot-row')),
    );
    this.footerEl.hidden = footer.length === 0;
  }
}

/** A header's label after its colour swatch; the swatch is kept with the label's first
 *  word (a wrapped header must not leave it alone above "DataLoader"). */
function swatchedLabel(label: string, swatch: string | undefined): (HTMLElement | string)[] {
  if (!swatch) return [label];
  const [first = '', ...rest] = label.split(' ');
  const dot = h('span', { class: 'ks-swatch', style: `background:${swatch}` });
  const head = h('span', { class: 'ks-nowrap' }, dot, first);
  return rest.length ? [head, ` ${rest.join(' ')}`] : [head];
}
