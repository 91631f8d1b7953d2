// The operator table's columns as data (components/columns.ts). Every cell carries
// data-col and data-value for the end-to-end tests.

import type { OperatorGroupBy, OperatorRow } from '../../api/types';
import { FORMAT, type ColumnSpec } from '../../components/columns';
import { h } from '../../components/dom';
import { formatCount, formatDuration, formatPercent } from '../../components/format';
import { capturedAtColumn } from '../../components/captured_column';
import { yesNo } from '../../components/table_tools';
import {
  AVG_OF,
  isReplayed,
  METRIC_HELP,
  METRIC_LABEL,
  REPLAYED_HELP,
  shapeParam,
  shapeText,
  tensorCoreShare,
  type TimeMetric,
} from './model';
import { rooflineColumns, ROOFLINE_NARROW_HIDES } from '../../components/roofline_columns';

function durationColumn(metric: TimeMetric, total: number): ColumnSpec<OperatorRow> {
  return {
    key: metric,
    label: METRIC_LABEL[metric].replace(' time', ''),
    tooltip: `${METRIC_HELP[metric]}. Click to sort.`,
    align: 'right',
    minWidth: 112,
    value: (row) => row[metric],
    cell: (row) =>
      h(
        'span',
        { class: row[metric] === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
        h('span', { class: 'ks-num' }, formatDuration(row[metric])),
        total > 0
          ? h('span', { class: 'ks-pct' }, formatPercent((row[metric] / total) * 100, 1))
          : null,
      ),
    cellTooltip: (row) =>
      `${formatDuration(row[metric])} in ${formatCount(row.calls)} calls; ${formatDuration(row[AVG_OF[metric]])} per call`,
  };
}

/** Sums of the self times: the share shown under a self time. Total times overlap (a
 * parent's total holds its children's), so they get no share. */
function shareBases(rows: readonly OperatorRow[]): Record<TimeMetric, number> {
  const sum = { device_self_us: 0, device_total_us: 0, host_self_us: 0, host_total_us: 0 };
  for (const r of rows) {
    sum.device_self_us += r.device_self_us;
    sum.host_self_us += r.host_self_us;
  }
  return sum;
}

const NAME: ColumnSpec<OperatorRow> = {
  key: 'name',
  label: 'Name',
  minWidth: 240,
  grow: 3,
  value: (row) => row.name,
  cell: (row) =>
    h(
      'span',
      { title: row.name },
      row.name,
      isReplayed(row)
        ? h(
            'span',
            {
              class: 'ks-badge ks-replayed',
              testid: 'op-replayed',
              title: `replayed: ${REPLAYED_HELP}`,
            },
            'replayed',
          )
        : null,
    ),
};

const INPUT_SHAPE: ColumnSpec<OperatorRow> = {
  key: 'input_shape',
  label: 'Input shape',
  minWidth: 200,
  grow: 2.2,
  value: (row) => shapeParam(row.input_shape),
  cell: (row) => {
    const text = shapeText(row.input_shape);
    return h('span', { class: 'ks-mono', title: text }, text);
  },
  sort: (row) => shapeText(row.input_shape),
};

const CALLS: ColumnSpec<OperatorRow> = {
  key: 'calls',
  label: 'Calls',
  align: 'right',
  minWidth: 80,
  value: (row) => row.calls,
  format: FORMAT.count,
  cellTooltip: (row) =>
    isReplayed(row)
      ? `${formatCount(row.calls)} host calls in this span; ` +
        `${formatDuration(row.replayed_us)} of its device time replayed from a graph it captured`
      : `${formatCount(row.calls)} calls`,
};

const TC_ELIGIBLE: ColumnSpec<OperatorRow> = {
  key: 'tensor_core_eligible',
  label: 'TC eligible',
  tooltip:
    'Tensor-core eligible: a conv/matmul-family operator, or one that launched a tensor-core kernel (itself or its children). Click to sort.',
  minWidth: 92,
  value: (row) => row.tensor_core_eligible,
  cell: (row) => yesNo(row.tensor_core_eligible),
};

const TC_SELF: ColumnSpec<OperatorRow> = {
  key: 'tensor_core_pct',
  label: 'TC self %',
  tooltip: 'Share of the device self time spent in tensor-core kernels. Click to sort.',
  align: 'right',
  minWidth: 86,
  value: (row) => tensorCoreShare(row, 'self'),
  cell: (row) => {
    const pct = tensorCoreShare(row, 'self');
    return h('span', { class: pct ? 'ks-num' : 'ks-num ks-zero' }, formatPercent(pct, 1));
  },
};

function callStackColumn(openStack: (row: OperatorRow) => void): ColumnSpec<OperatorRow> {
  return {
    key: 'call_stack',
    label: 'Call stack',
    minWidth: 92,
    value: (row) => row.has_call_stack,
    cell: (row) =>
      row.has_call_stack
        ? h(
            'button',
            {
              class: 'ks-btn ks-btn-small',
              testid: 'op-stack-button',
              title: `Show the call stacks of ${row.name}`,
              attrs: { type: 'button' },
              on: { click: () => openStack(row) },
            },
            'View',
          )
        : h('span', { class: 'ks-no' }, '—'),
  };
}

// Ops whose replayed kernels were captured in a profiled capture: where (its first frame).
const CAPTURED_AT = capturedAtColumn<OperatorRow>(
  (row) => (row.captured_at ? [row.captured_at] : []),
  'op-captured-link',
);

/** Columns the operator table drops first, in order, when it is too narrow (1280 px). */
export const NARROW_HIDES = [
  ...ROOFLINE_NARROW_HIDES,
  'host_total_us',
  'device_total_us',
  'tensor_core_pct',
  'call_stack',
];

/** The columns for a grouping; device-time columns only when the trace has device time. */
export function operatorColumns(
  groupBy: OperatorGroupBy,
  device: boolean,
  rows: readonly OperatorRow[],
  openStack: (row: OperatorRow) => void,
): ColumnSpec<OperatorRow>[] {
  const sums = shareBases(rows);
  const metrics: TimeMetric[] = device
    ? ['device_self_us', 'device_total_us', 'host_self_us', 'host_total_us']
    : ['host_self_us', 'host_total_us'];
  return [
    NAME,
    ...(groupBy === 'shape' ? [INPUT_SHAPE] : []),
    CALLS,
    ...metrics.map((m) => durationColumn(m, sums[m])),
    ...(rows.some((r) => r.captured_at) ? [CAPTURED_AT] : []),
    TC_ELIGIBLE,
    ...(device ? [TC_SELF, ...rooflineColumns<OperatorRow>()] : []),
    callStackColumn(openStack),
  ];
}
