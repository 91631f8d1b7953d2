// The Memory page's allocation table: the alloc/free pairs of the range with their search,
// what the table holds, its CSV export, and, when the server caps the rows, the pager
// over memory_events pages in a server order.

import type { MemoryEventsSort, MemoryResponse } from '../../api/types';
import type { ColumnSpec } from '../../components/columns';
import { h, replaceChildren } from '../../components/dom';
import { formatCount } from '../../components/format';
import { allocationText, allocationViews, pageLabel, type AllocationView } from './model';
import { allocationColumns } from './tables';
import { SearchableTable } from './searchable_table';
import { button } from './widgets';

/** Rows per memory_events page when the view's allocation table is capped. */
export const PAGE_SIZE = 1000;

const EVENT_SORTS: [MemoryEventsSort, string][] = [
  ['size', 'Largest first'],
  ['alloc', 'Allocation time'],
  ['free', 'Release time'],
  ['duration', 'Longest held first'],
];

/** The table sort that shows a memory_events order (a stable sort keeps the server's ties). */
const SORT_COLUMN: Record<MemoryEventsSort, { key: string; dir: 'asc' | 'desc' }> = {
  size: { key: 'size', dir: 'desc' },
  alloc: { key: 'alloc_us', dir: 'asc' },
  free: { key: 'free_us', dir: 'asc' },
  duration: { key: 'duration', dir: 'desc' },
};

/** Where the allocation table stands in the server's memory_events pages. */
export interface Paging {
  sort: MemoryEventsSort;
  offset: number;
  total: number;
}

/** The counts of the memory answer the table's texts speak of, and whether a range is shown. */
export interface AllocationContext {
  mem: Pick<MemoryResponse, 'never_freed' | 'freed_unseen' | 'no_address_events'>;
  ranged: boolean;
}

export interface AllocationHooks {
  /** The user asked for another page or server order. */
  onPage: (paging: Paging) => void;
  onCsv: (rows: readonly AllocationView[]) => void;
  /** What the table's texts speak of, as the page stands now. */
  context: () => AllocationContext;
}

export class AllocationPanel extends SearchableTable<AllocationView> {
  /** The bar, the table and the note shown when it is empty. */
  readonly parts: HTMLElement[];
  /** The server's pages, null while the memory answer holds every row. */
  paging: Paging | null = null;
  private readonly columns: readonly ColumnSpec<AllocationView>[];
  /** The server order the table's sort shows (see SORT_COLUMN). */
  private order: MemoryEventsSort = 'size';
  private readonly pager = h('span', { class: 'ks-mem-pager', testid: 'memory-alloc-pager' });
  private readonly empty = h('p', { class: 'ks-muted ks-note', testid: 'memory-alloc-empty' });

  constructor(
    origin: number,
    private readonly hooks: AllocationHooks,
  ) {
    super('alloc', {
      testid: 'memory-alloc-table',
      caption: 'Allocations',
      optional: ['parent_op', 'duration'],
      rowAttrs: (v) => ({ 'data-key': String(v.key), 'data-state': v.row.state }),
      searchTexts: allocationText,
    });
    this.columns = allocationColumns(origin);
    this.build('size');
    this.empty.hidden = true;
    const bar = this.bar('Search operators or state', hooks.onCsv, this.pager);
    this.parts = [bar, this.table.element, this.empty];
  }

  /** The rows of a memory answer or a memory_events page (`paging` null: all rows). */
  setRows(
    rows: MemoryResponse['allocation_table']['rows'],
    offset: number,
    paging: Paging | null,
  ): void {
    this.paging = paging;
    this.rows = allocationViews(rows, offset);
    this.show();
    this.renderPager();
  }

  /** A new table sorted the way the server's order `order` shows. */
  private build(order: MemoryEventsSort): void {
    this.order = order;
    this.table.build(this.columns, this.rows, {
      sort: SORT_COLUMN[order],
      search: this.query,
      emptyText: 'No rows',
    });
  }

  protected show(): void {
    // A page in another server order starts sorted the same way (stable: the server's order).
    const order = this.paging?.sort ?? 'size';
    if (order !== this.order) this.build(order);
    else this.table.filter(this.rows, this.query);
    const shown = this.table.shownCount();
    const { mem, ranged } = this.hooks.context();
    this.empty.hidden = shown > 0;
    this.empty.textContent =
      this.rows.length > 0
        ? 'No rows match the search.'
        : mem.no_address_events > 0
          ? `No allocation can be paired with its free: the ${formatCount(mem.no_address_events)} memory events of this trace have no address (PyTorch < 1.10). The curve and the operator statistics still count them.`
          : `No allocations or frees in ${ranged ? 'this range' : 'this trace'}.`;
    const total = this.paging ? this.paging.total : this.rows.length;
    const parts = [
      this.query.trim()
        ? `${formatCount(shown)} of ${formatCount(this.rows.length)} rows match`
        : `${formatCount(total)} allocation${total === 1 ? '' : 's'} in ${ranged ? 'the range' : 'the trace'}`,
      `${formatCount(mem.never_freed)} never freed`,
      `${formatCount(mem.freed_unseen)} allocated before recording`,
    ];
    this.info.textContent = parts.join(' · ');
    this.info.dataset.total = String(total);
    this.info.dataset.shown = String(shown);
  }

  private renderPager(): void {
    const paging = this.paging;
    this.pager.hidden = !paging;
    if (!paging) {
      replaceChildren(this.pager, null);
      return;
    }
    const turn = (offset: number) => () => this.hooks.onPage({ ...paging, offset });
    const prev = button(
      'memory-alloc-prev',
      '‹',
      'Previous page',
      turn(Math.max(0, paging.offset - PAGE_SIZE)),
    );
    const next = button('memory-alloc-next', '›', 'Next page', turn(paging.offset + PAGE_SIZE));
    prev.disabled = paging.offset === 0;
    next.disabled = paging.offset + PAGE_SIZE >= paging.total;
    replaceChildren(
      this.pager,
      h(
        'span',
        {
          class: 'ks-muted ks-small',
          title: 'The server sorts all rows; a header click sorts this page',
        },
        'Order',
      ),
      this.orderSelect(paging),
      prev,
      h(
        'span',
        { class: 'ks-small', testid: 'memory-alloc-page' },
        pageLabel(paging.offset, this.rows.length, paging.total),
      ),
      next,
    );
  }

  /** The server order's picker; another order starts at the first page. */
  private orderSelect(paging: Paging): HTMLSelectElement {
    const order = h('select', {
      class: 'ks-select ks-mem-order',
      testid: 'memory-alloc-order',
      attrs: { 'aria-label': 'Server order' },
      on: {
        change: () =>
          this.hooks.onPage({ ...paging, sort: order.value as MemoryEventsSort, offset: 0 }),
      },
    });
    replaceChildren(
      order,
      EVENT_SORTS.map(([value, label]) =>
        h('option', { attrs: { value, selected: value === paging.sort } }, label),
      ),
    );
    order.value = paging.sort;
    return order;
  }
}
