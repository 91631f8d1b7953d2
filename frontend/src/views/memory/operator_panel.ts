// The Memory page's operator statistics: per operator, memory allocated and released in
// the range, with its search, what the table holds and its CSV export.

import type { MemoryOperatorRow } from '../../api/types';
import { formatCount } from '../../components/format';
import { operatorText } from './model';
import { SearchableTable } from './searchable_table';
import { OPERATOR_COLUMNS } from './tables';

export class OperatorPanel extends SearchableTable<MemoryOperatorRow> {
  /** The bar and the table. */
  readonly parts: HTMLElement[];

  constructor(onCsv: (rows: readonly MemoryOperatorRow[]) => void) {
    super('op', {
      testid: 'memory-op-table',
      caption: 'Operator memory statistics',
      optional: ['release_count', 'self_release_bytes', 'allocation_count', 'release_bytes'],
      rowAttrs: (r) => ({ 'data-key': r.name }),
      searchTexts: operatorText,
    });
    this.table.build(OPERATOR_COLUMNS, [], {
      sort: { key: 'self_increase_bytes', dir: 'desc' },
      search: '',
      emptyText: 'No operator allocated or freed memory in this range.',
    });
    this.parts = [this.bar('Search operators', onCsv), this.table.element];
  }

  setRows(rows: readonly MemoryOperatorRow[]): void {
    this.rows = rows;
    this.show();
  }

  protected show(): void {
    this.table.filter(this.rows, this.query);
    const shown = this.table.shownCount();
    const total = this.rows.length;
    this.info.textContent = this.query.trim()
      ? `${formatCount(shown)} of ${formatCount(total)} operators match`
      : `${formatCount(total)} operator${total === 1 ? '' : 's'} allocated or freed memory`;
    this.info.dataset.total = String(total);
    this.info.dataset.shown = String(shown);
  }
}
