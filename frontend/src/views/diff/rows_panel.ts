// A section of the Diff page with the operators or the kernels of both sides: a status
// filter (changed, added, removed, all), a search, a sortable table (TablePanel) and a CSV
// export of the rows as shown. Its look lives in the page's state (the URL).

import type { RowDiffBase } from '../../api/types';
import { colAttrs, type ColumnSpec } from '../../components/columns';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { h } from '../../components/dom';
import { selectField, toolButton, type SearchField } from '../../components/table_tools';
import * as kit from '../page_kit';
import { TablePanel } from '../table_panel';
import { hiddenAtFirst, tableCsv } from './columns';
import { STATUS_LABEL, STATUSES, statusCounts, withStatus } from './model';
import type { TableName, TableState } from './state';

export interface RowsPanelOptions<R> {
  table: TableName;
  title: string;
  intro: string;
  state: TableState;
  /** The state changed: write it to the URL. */
  save: () => void;
  searchTexts: (row: R) => readonly string[];
  /** The CSV file's name parts (the table's name comes first). */
  csvParts: readonly string[];
  /** Controls before the status filter (e.g. the operators' grouping). */
  controls?: readonly HTMLElement[];
}

export class RowsPanel<R extends RowDiffBase> {
  readonly element: HTMLElement;
  readonly chrome: kit.TableChrome;
  private readonly table: TablePanel<R>;
  private readonly statusSel: ReturnType<typeof selectField>;
  private readonly search: SearchField;
  private specs: readonly ColumnSpec<R>[] = [];
  private all: readonly R[] = [];
  private shown: R[] = [];

  constructor(private readonly opts: RowsPanelOptions<R>) {
    const { table, state } = opts;
    const prefix = `diff-${table}`;
    this.chrome = kit.tableChrome(prefix);
    this.table = new TablePanel<R>({
      testid: `${prefix}-table`,
      caption: opts.title,
      optional: [],
      rowAttrs: (row) => ({ 'data-name': row.name, 'data-status': row.status }),
      searchTexts: opts.searchTexts,
      cellAttrs: colAttrs,
      count: this.chrome.count,
      onSort: (sort) => {
        state.sort = sort;
        opts.save();
      },
    });
    this.statusSel = selectField('Status', `${prefix}-status`, [], state.status, (v) => {
      state.status = STATUSES.find((s) => s === v) ?? 'all';
      opts.save();
      this.shown = withStatus(this.all, state.status);
      this.table.filter(this.shown, state.search);
    });
    this.search = this.table.searchBox(
      `${prefix}-search`,
      'Filter by name; space-separated terms all match',
      state,
      opts.save,
      () => this.shown,
    );
    this.element = kit.section(
      { anchor: table, testid: `diff-${table}`, title: opts.title, intro: opts.intro },
      h(
        'div',
        { class: 'ks-toolbar' },
        ...(opts.controls ?? []),
        this.statusSel.el,
        this.search.el,
        this.chrome.count,
        this.chrome.busyLabel,
        toolButton(
          'Export CSV',
          `${prefix}-export-csv`,
          () => this.exportCsv(),
          'Download the table as shown (status filter, search and sort applied) as CSV',
        ),
      ),
      this.chrome.errorBox,
      this.table.element,
    );
  }

  /** Shows these rows with these columns (a new grouping brings both). */
  show(specs: readonly ColumnSpec<R>[], rows: readonly R[]): void {
    const { state } = this.opts;
    this.specs = specs;
    this.all = rows;
    this.renderStatusOptions();
    this.shown = withStatus(rows, state.status);
    state.sort = this.table.build(specs, this.shown, {
      sort: state.sort,
      search: state.search,
      emptyText: rows.length ? 'No row matches the filter.' : 'Nothing on either side.',
      hidden: hiddenAtFirst(specs),
    });
  }

  /** The status choices with their counts ("Changed (12)"). */
  private renderStatusOptions(): void {
    const counts = statusCounts(this.all);
    const select = this.statusSel.select;
    select.replaceChildren(
      ...STATUSES.map((s) =>
        h('option', { attrs: { value: s } }, `${STATUS_LABEL[s]} (${counts[s]})`),
      ),
    );
    select.value = this.opts.state.status;
  }

  private exportCsv(): void {
    const csv = tableCsv(this.specs, this.table.shownRows());
    const parts = [this.opts.table, ...this.opts.csvParts, this.opts.state.status];
    downloadCsv(csvFileName(parts), toCsv(csv.header, csv.rows));
  }

  dispose(): void {
    this.search.dispose();
    this.table.destroy();
  }
}
