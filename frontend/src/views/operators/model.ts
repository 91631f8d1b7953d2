// Pure transforms from the `operators` / `callstacks` responses to what the Operator page
// shows: columns, pies, search texts, CSV rows, the call-stack request of a row.

import type {
  CallStacksParams,
  JsonValue,
  OperatorGroupBy,
  OperatorRow,
  OperatorsResponse,
} from '../../api/types';
import type { CsvCell } from '../../components/csv';
import { share } from '../../components/format';
import { topN, type Slice } from '../../components/topn';

export const GROUP_BYS: readonly OperatorGroupBy[] = ['name', 'shape'];

export const GROUP_LABEL: Record<OperatorGroupBy, string> = {
  name: 'Operator',
  shape: 'Operator + input shape',
};

export type TimeMetric = 'device_self_us' | 'device_total_us' | 'host_self_us' | 'host_total_us';

export const METRIC_LABEL: Record<TimeMetric, string> = {
  device_self_us: 'Device self time',
  device_total_us: 'Device total time',
  host_self_us: 'Host self time',
  host_total_us: 'Host total time',
};

export const METRIC_HELP: Record<TimeMetric, string> = {
  device_self_us: 'GPU time (kernels, memcpy, memset) launched by the operator itself',
  device_total_us: 'GPU time launched by the operator and the operators it called',
  host_self_us: 'CPU time in the operator, not counting the operators it called',
  host_total_us: 'CPU time from the operator’s start to its end',
};

export type AvgMetric =
  'device_self_avg_us' | 'device_total_avg_us' | 'host_self_avg_us' | 'host_total_avg_us';

export const AVG_OF: Record<TimeMetric, AvgMetric> = {
  device_self_us: 'device_self_avg_us',
  device_total_us: 'device_total_avg_us',
  host_self_us: 'host_self_avg_us',
  host_total_us: 'host_total_avg_us',
};

/** Pies of the page: device time (self or total) and host time (self or total). */
export type DeviceMetric = 'device_self_us' | 'device_total_us';
export type HostMetric = 'host_self_us' | 'host_total_us';
export const DEVICE_METRICS: readonly DeviceMetric[] = ['device_self_us', 'device_total_us'];
export const HOST_METRICS: readonly HostMetric[] = ['host_self_us', 'host_total_us'];

export const TOP_N = 10;

/** What a replayed row is (a row with `replayed_us`; docs/http_api.md operators). */
export const REPLAYED_HELP =
  'device time of kernels replayed from a CUDA/HIP graph captured by this op; no host calls in this span';

/** Whether the row holds kernels replayed from a graph the op captured. */
export function isReplayed(row: OperatorRow): boolean {
  return row.replayed_us > 0;
}

/** Whether the trace has device time: else the device columns and pie are left out. */
export function hasDeviceTime(ops: OperatorsResponse): boolean {
  return ops.kernel_view_absent_reason === null || ops.device_self_us > 0;
}

/** An input shape as text: "[[32, 256, 56, 56], [256], []]"; "—" when not recorded. */
export function shapeText(shape: JsonValue | undefined): string {
  if (shape === null || shape === undefined) return '—';
  return JSON.stringify(shape).replace(/,/g, ', ');
}

/** The `input_shape` request parameter of a row: its shape as compact JSON. */
export function shapeParam(shape: JsonValue | undefined): string {
  return JSON.stringify(shape ?? null);
}

/** A row's identity: its name, and its input shape when grouped by shape. */
export function rowId(row: OperatorRow, groupBy: OperatorGroupBy): string {
  return groupBy === 'shape' ? `${row.name}\u0000${shapeParam(row.input_shape)}` : row.name;
}

export function findRow(
  rows: readonly OperatorRow[],
  groupBy: OperatorGroupBy,
  name: string,
  shape: string | undefined,
): OperatorRow | undefined {
  return rows.find(
    (r) =>
      r.name === name && (groupBy !== 'shape' || shapeParam(r.input_shape) === (shape ?? 'null')),
  );
}

/** The `callstacks` parameters of a row. */
export function callStackParams(row: OperatorRow, groupBy: OperatorGroupBy): CallStacksParams {
  return groupBy === 'shape'
    ? { name: row.name, input_shape: shapeParam(row.input_shape) }
    : { name: row.name };
}

export function searchTexts(row: OperatorRow, groupBy: OperatorGroupBy): string[] {
  return groupBy === 'shape' ? [row.name, shapeText(row.input_shape)] : [row.name];
}

/** Top operators (by name, whatever the grouping) by one time, with "Other". */
export function operatorPie(rows: readonly OperatorRow[], metric: TimeMetric, n = TOP_N): Slice[] {
  return topN(
    rows,
    (r) => r.name,
    (r) => r[metric],
    n,
    'Other operators',
  );
}

/** Share of the device time (self or total) spent in tensor-core kernels, in percent. */
export function tensorCoreShare(row: OperatorRow, which: 'self' | 'total'): number | null {
  return which === 'self'
    ? share(row.tensor_core_self_us, row.device_self_us)
    : share(row.tensor_core_total_us, row.device_total_us);
}

/** CSV header and rows of the table as shown (grouping, filter and sort applied). */
export function operatorCsv(
  rows: readonly OperatorRow[],
  groupBy: OperatorGroupBy,
  device: boolean,
): { header: string[]; rows: CsvCell[][] } {
  const header = ['Name'];
  if (groupBy === 'shape') header.push('Input Shape');
  header.push('Calls');
  if (device) {
    header.push(
      'Device Self Duration (us)',
      'Device Self Avg (us)',
      'Device Total Duration (us)',
      'Device Total Avg (us)',
    );
  }
  header.push(
    'Host Self Duration (us)',
    'Host Self Avg (us)',
    'Host Total Duration (us)',
    'Host Total Avg (us)',
    'Tensor Cores Eligible',
  );
  if (device) header.push('Tensor Cores Self (us)', 'Tensor Cores Total (us)');
  header.push('Has Call Stack');
  const out = rows.map((r) => {
    const cells: CsvCell[] = [r.name];
    if (groupBy === 'shape') cells.push(r.input_shape == null ? '' : shapeParam(r.input_shape));
    cells.push(r.calls);
    if (device) {
      cells.push(r.device_self_us, r.device_self_avg_us, r.device_total_us, r.device_total_avg_us);
    }
    cells.push(
      r.host_self_us,
      r.host_self_avg_us,
      r.host_total_us,
      r.host_total_avg_us,
      r.tensor_core_eligible,
    );
    if (device) cells.push(r.tensor_core_self_us, r.tensor_core_total_us);
    cells.push(r.has_call_stack);
    return cells;
  });
  return { header, rows: out };
}

export function callStackSourceLabel(source: string | null): string {
  if (source === 'call_stack_arg') return 'the trace’s “Call stack” args';
  if (source === 'python_function') return 'Python function events (with_stack=True)';
  return 'none recorded';
}
