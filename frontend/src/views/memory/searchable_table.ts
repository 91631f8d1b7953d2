// What the Memory page's two tables share: a TablePanel of the page's look, the bar above
// it (search box, what the table holds, Export CSV of the rows as shown) and the search.

import { colAttrs } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { TablePanel, type TablePanelOptions } from '../table_panel';
import { button, searchBox } from './widgets';

/** A table's own options; the page's cell attributes and sizes are added. */
export type MemoryTableOptions<R> = Pick<
  TablePanelOptions<R>,
  'testid' | 'caption' | 'optional' | 'rowAttrs' | 'searchTexts'
>;

export abstract class SearchableTable<R> {
  protected rows: readonly R[] = [];
  protected query = '';
  protected readonly table: TablePanel<R>;
  /** What the table holds (its text is the subclass's). */
  protected readonly info: HTMLElement;

  constructor(
    private readonly prefix: string,
    options: MemoryTableOptions<R>,
  ) {
    this.table = new TablePanel<R>({
      ...options,
      cellAttrs: colAttrs,
      maxHeight: 420,
      rowHeight: 32,
    });
    this.info = h('span', { class: 'ks-muted ks-small', testid: `memory-${prefix}-info` });
  }

  dispose(): void {
    this.table.destroy();
  }

  /** Shows the rows that match the search, and says what the table holds. */
  protected abstract show(): void;

  /**
   * The bar above the table: the search box (`memory-<prefix>-search`), the info, `more`,
   * then Export CSV (`memory-<prefix>-csv`) of the rows as shown.
   */
  protected bar(
    placeholder: string,
    onCsv: (rows: readonly R[]) => void,
    ...more: Children[]
  ): HTMLElement {
    const search = searchBox(`memory-${this.prefix}-search`, placeholder, (q) => {
      this.query = q;
      this.show();
    });
    return h(
      'div',
      { class: 'ks-mem-table-bar' },
      search,
      this.info,
      ...more,
      button(`memory-${this.prefix}-csv`, 'Export CSV', 'Download the rows shown as CSV', () =>
        onCsv(this.table.shownRows()),
      ),
    );
  }
}
