// The Diff page's tables as column specs (components/columns.ts): the side-by-side tables
// (metric, base, target, delta, delta %) and the operator and kernel tables, where each
// compared number is three columns (base, target, delta) and the main one a fourth (%).
// Every cell carries data-col and data-value for the end-to-end tests.

import type { Compared, KernelDiff, OperatorDiff, RowDiffBase } from '../../api/types';
import { num, type ColumnSpec } from '../../components/columns';
import type { CsvCell } from '../../components/csv';
import { h, type Children } from '../../components/dom';
import {
  COUNT,
  formatDelta,
  formatDeltaPct,
  formatValue,
  shapeText,
  STATUS_LABEL,
  TIME,
  tone,
  toneClass,
  type CompareRow,
  type Metric,
} from './model';

/** A delta in its tone's colour. */
function toned(text: string, c: Compared, metric: Metric): HTMLElement {
  return h('span', { class: `ks-num ${toneClass(tone(c, metric.better))}` }, text);
}

function numeric<R>(
  key: string,
  label: string,
  value: (row: R) => number | null,
  cell: (row: R) => HTMLElement,
  tooltip: string,
): ColumnSpec<R> {
  return { key, label, tooltip, align: 'right', minWidth: 92, value, cell };
}

/** The four columns of a compared number: base, target, delta, delta %. */
function comparedColumns<R>(
  key: string,
  label: string,
  get: (row: R) => Compared,
  metric: (row: R) => Metric,
  withPct: boolean,
): ColumnSpec<R>[] {
  const specs: ColumnSpec<R>[] = [
    numeric(
      `${key}.base`,
      `${label} base`,
      (r) => get(r).base,
      (r) => num(formatValue(get(r).base, metric(r).unit)),
      `${label} on the base side`,
    ),
    numeric(
      `${key}.target`,
      `${label} target`,
      (r) => get(r).target,
      (r) => num(formatValue(get(r).target, metric(r).unit)),
      `${label} on the target side`,
    ),
    numeric(
      `${key}.delta`,
      `${label} Δ`,
      (r) => get(r).delta,
      (r) => toned(formatDelta(get(r), metric(r).unit), get(r), metric(r)),
      `Target minus base (green: better, red: worse)`,
    ),
  ];
  if (withPct) {
    specs.push(
      numeric(
        `${key}.delta_pct`,
        `${label} Δ %`,
        (r) => get(r).delta_pct,
        (r) => toned(formatDeltaPct(get(r)), get(r), metric(r)),
        'The change relative to the base (unknown when the base is 0)',
      ),
    );
  }
  return specs;
}

// ----- side-by-side tables -----

export function compareColumns(grouped: boolean): ColumnSpec<CompareRow>[] {
  const group: ColumnSpec<CompareRow> = {
    key: 'group',
    label: 'Of',
    minWidth: 140,
    grow: 1.5,
    value: (r) => r.group,
  };
  const label: ColumnSpec<CompareRow> = {
    key: 'metric',
    label: 'Metric',
    minWidth: 200,
    grow: 2,
    value: (r) => r.label,
  };
  const values = comparedColumns<CompareRow>(
    'value',
    'Value',
    (r) => r.value,
    (r) => r.metric,
    true,
  ).map((spec) => ({ ...spec, label: spec.label.replace('Value ', '') }));
  return [...(grouped ? [group] : []), label, ...values];
}

// ----- operator and kernel tables -----

function nameColumn<R extends RowDiffBase>(label: string): ColumnSpec<R> {
  return {
    key: 'name',
    label,
    minWidth: 260,
    grow: 3,
    value: (r) => r.name,
    cell: (r) => h('span', { class: 'ks-mono', title: r.name }, r.name),
  };
}

function statusColumn<R extends RowDiffBase>(): ColumnSpec<R> {
  return {
    key: 'status',
    label: 'Status',
    tooltip: 'Added: only in the target; removed: only in the base',
    minWidth: 90,
    value: (r) => r.status,
    cell: (r) => h('span', { class: `ks-diff-status-${r.status}` }, STATUS_LABEL[r.status]),
  };
}

/** Links from a row to each side's trace view, searching for its name. */
export type RowLinks<R> = (row: R) => Children;

function openColumn<R extends RowDiffBase>(links: RowLinks<R>): ColumnSpec<R> {
  return {
    key: 'open',
    label: 'Open',
    tooltip: "Each side's trace view, searching for this name (where that side ran it)",
    minWidth: 150,
    value: () => null,
    cell: links,
    sort: false,
  };
}

const OPERATOR_TIMES = [
  ['host_self_us', 'Host self'],
  ['host_total_us', 'Host total'],
  ['device_self_us', 'Device self'],
  ['device_total_us', 'Device total'],
] as const;

/** The operator table: name (and input shape), status, calls, host and device times;
 *  the % column only for the metric the route sorts by. */
export function operatorColumns(
  byShape: boolean,
  mainMetric: string,
  links?: RowLinks<OperatorDiff>,
): ColumnSpec<OperatorDiff>[] {
  const shape: ColumnSpec<OperatorDiff> = {
    key: 'input_shape',
    label: 'Input shape',
    minWidth: 160,
    grow: 1.5,
    value: (r) => shapeText(r.input_shape),
  };
  return [
    nameColumn<OperatorDiff>('Operator'),
    ...(byShape ? [shape] : []),
    statusColumn<OperatorDiff>(),
    ...comparedColumns<OperatorDiff>(
      'calls',
      'Calls',
      (r) => r.calls,
      () => COUNT,
      false,
    ),
    ...OPERATOR_TIMES.flatMap(([key, label]) =>
      comparedColumns<OperatorDiff>(
        key,
        label,
        (r) => r[key],
        () => TIME,
        key === mainMetric,
      ),
    ),
    ...(links ? [openColumn(links)] : []),
  ];
}

/** The kernel table's compared numbers: key, label, metric, whether it has a % column. */
const KERNEL_NUMBERS = [
  ['calls', 'Calls', COUNT, false],
  ['total_us', 'Total', TIME, true],
  ['mean_us', 'Mean', TIME, false],
] as const;

export function kernelColumns(links?: RowLinks<KernelDiff>): ColumnSpec<KernelDiff>[] {
  return [
    nameColumn<KernelDiff>('Kernel'),
    statusColumn<KernelDiff>(),
    ...KERNEL_NUMBERS.flatMap(([key, label, metric, withPct]) =>
      comparedColumns<KernelDiff>(
        key,
        label,
        (r) => r[key],
        () => metric,
        withPct,
      ),
    ),
    ...(links ? [openColumn(links)] : []),
  ];
}

/** Columns hidden until shown (the Columns menu): the totals' base and target values. */
export function hiddenAtFirst<R>(specs: readonly ColumnSpec<R>[]): string[] {
  return specs
    .map((s) => s.key)
    .filter((k) => k.includes('total') && (k.endsWith('.base') || k.endsWith('.target')));
}

/** Every sortable key of a table, for the sort kept in the URL. */
export function sortKeys<R>(specs: readonly ColumnSpec<R>[]): string[] {
  return specs.filter((s) => s.sort !== false).map((s) => s.key);
}

/** A table as CSV: the column labels, then each row's values (unknown as empty). */
export function tableCsv<R>(
  specs: readonly ColumnSpec<R>[],
  rows: readonly R[],
): { header: string[]; rows: CsvCell[][] } {
  specs = specs.filter((s) => s.key !== 'open'); // links, not data
  return {
    header: specs.map((s) => s.label),
    rows: rows.map((r) =>
      specs.map((s) => {
        const v = s.value(r);
        return typeof v === 'object' && v !== null ? JSON.stringify(v) : v;
      }),
    ),
  };
}
