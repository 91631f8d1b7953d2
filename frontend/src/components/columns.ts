// Column definitions as data: a table's columns are one array of specs (key, label, value,
// format, sort, tooltip) that `toColumns` turns into the VirtualTable's columns. A spec
// names what a cell holds; the format says how it shows; sorting and the cells' test
// attributes follow from the value unless the spec says otherwise.

import { h, type Children } from './dom';
import { formatBytes, formatCount, formatDuration } from './format';
import type { Column } from './table';
import type { SortValue } from './table_model';

/** What a cell holds: the value a column sorts by and shows through its format. */
export type CellValue = string | number | boolean | readonly number[] | null | undefined;

/** How a cell shows its value. */
export type CellFormat = (value: CellValue) => Children;

export interface ColumnSpec<R> {
  key: string;
  label: string;
  /** Header tooltip. */
  tooltip?: string;
  /** A colour swatch shown before the label (e.g. a chart series colour). */
  swatch?: string;
  align?: 'left' | 'right';
  minWidth?: number;
  grow?: number;
  /** The cell's value: sorted by (unless `sort` says otherwise), shown through `format`. */
  value: (row: R) => CellValue;
  /** How the value shows (default: as text, "—" when missing). */
  format?: CellFormat;
  /** A cell that is more than its formatted value; it still sorts by `value`. */
  cell?: (row: R) => Children;
  /** false: the column does not sort; a function: it sorts by that instead of the value. */
  sort?: false | ((row: R) => SortValue);
  /** A test id for the cell (with the value as data-value); tables with `cellAttrs` ignore it. */
  testid?: (row: R) => string;
  /** A tooltip for the cell. */
  cellTooltip?: (row: R) => string;
}

/** A table's own attributes for every cell (e.g. data-col + data-value), by key and value. */
export type CellAttrs = (key: string, value: CellValue) => Record<string, string>;

/** Cell attributes of the table pages: the column key and the cell's value. */
export const colAttrs: CellAttrs = (key, value) => ({
  'data-col': key,
  'data-value': valueText(value),
});

/** The text of a value for data-value: arrays as JSON, missing as "". */
export function valueText(value: CellValue): string {
  if (value === null || value === undefined) return '';
  return Array.isArray(value) ? JSON.stringify(value) : String(value);
}

/** The sort value of a cell value: numbers and text as they are, yes/no as 1/0. */
export function sortValueOf(value: CellValue): SortValue {
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return null;
}

function numberOrNull(value: CellValue): number | null {
  return typeof value === 'number' ? value : null;
}

/** A number in tabular figures. */
export function num(text: string): HTMLElement {
  return h('span', { class: 'ks-num' }, text);
}

/** Number formats in tabular figures, for right-aligned columns. */
export function numberFormat(text: (value: number | null) => string): CellFormat {
  return (value) => num(text(numberOrNull(value)));
}

export const FORMAT = {
  text: (value: CellValue): Children =>
    value === null || value === undefined ? '—' : String(value),
  number: numberFormat((v) => (v === null ? '—' : String(v))),
  count: numberFormat(formatCount),
  duration: numberFormat(formatDuration),
  bytes: numberFormat(formatBytes),
} satisfies Record<string, CellFormat>;

function attrsOf<R>(spec: ColumnSpec<R>, cellAttrs: CellAttrs | undefined) {
  const { testid, cellTooltip } = spec;
  if (!cellAttrs && !testid && !cellTooltip) return undefined;
  return (row: R): Record<string, string> => {
    const value = spec.value(row);
    const attrs: Record<string, string> = cellAttrs
      ? cellAttrs(spec.key, value)
      : testid
        ? { 'data-testid': testid(row), 'data-value': valueText(value) }
        : {};
    if (cellTooltip) attrs.title = cellTooltip(row);
    return attrs;
  };
}

/** The VirtualTable columns of a list of specs. */
export function toColumns<R>(specs: readonly ColumnSpec<R>[], cellAttrs?: CellAttrs): Column<R>[] {
  return specs.map((spec) => {
    const format = spec.format ?? FORMAT.text;
    const column: Column<R> = {
      key: spec.key,
      label: spec.label,
      cell: spec.cell ?? ((row) => format(spec.value(row))),
    };
    if (spec.tooltip !== undefined) column.title = spec.tooltip;
    if (spec.swatch !== undefined) column.swatch = spec.swatch;
    if (spec.align !== undefined) column.align = spec.align;
    if (spec.minWidth !== undefined) column.minWidth = spec.minWidth;
    if (spec.grow !== undefined) column.grow = spec.grow;
    if (spec.sort !== false) {
      column.sortValue = spec.sort ?? ((row) => sortValueOf(spec.value(row)));
    }
    const attrs = attrsOf(spec, cellAttrs);
    if (attrs) column.cellAttrs = attrs;
    return column;
  });
}
