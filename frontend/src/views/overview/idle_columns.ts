// The tables of the Overview's "Why is the GPU idle?" section as column specs: per step
// (busy and the three idle classes, time and share of the step), per stream (idle share
// and queue length), the longest idle intervals and the longest launch delays, with
// links into the trace view. Cells carry the route's raw numbers as data-value.

import type { IdleBreakdown, LaunchOutlier, StreamIdle } from '../../api/types';
import { FORMAT, num, type ColumnSpec } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { formatDuration, formatPercent } from '../../components/format';
import {
  causeLabel,
  classNs,
  classPercent,
  IDLE_CLASSES,
  IDLE_COLOR,
  IDLE_LABEL,
  laneLabel,
  queueEmptyPercent,
  stepPercent,
  type IdleClass,
  type IdleStepRow,
  type IntervalRow,
} from './idle_model';

/** A link into the trace view (built by the page: it knows the URL). */
export type TraceLink = (startUs: number, endUs: number, title: string) => Children;

const nsDuration = (ns: number): string => formatDuration(ns / 1000);

/** A right-aligned duration column over nanoseconds (the value: the route's ns). */
function nsColumn<R>(
  key: string,
  label: string,
  ns: (row: R) => number,
  more: Partial<ColumnSpec<R>> = {},
): ColumnSpec<R> {
  return {
    key,
    label,
    align: 'right',
    minWidth: 96,
    value: ns,
    cell: (row) => num(nsDuration(ns(row))),
    ...more,
  };
}

/** Where an interval or launch happened: "GPU 0 stream 7", "XPU 0 stream 3". */
const laneOf =
  (deviceName: (device: number) => string) =>
  (row: { device: number; stream: number | null }): string =>
    laneLabel(deviceName(row.device), row.stream);

/** The column of links into the trace view. */
function traceColumn<R>(start: (row: R) => number, cell: (row: R) => Children): ColumnSpec<R> {
  return { key: 'trace', label: 'Trace', minWidth: 64, grow: 0, sort: false, value: start, cell };
}

/** Time and share of the step, stacked as in the step-time breakdown table. */
function timeAndShare(ns: number, pct: number | null): Children {
  return h(
    'span',
    { class: ns === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
    h('span', { class: 'ks-num' }, nsDuration(ns)),
    pct === null ? null : h('span', { class: 'ks-pct' }, formatPercent(pct)),
  );
}

/** A right-aligned column of a time with its share of the step (the value: the ns). */
function shareColumn<R>(
  key: string,
  label: string,
  ns: (row: R) => number,
  pct: (row: R) => number | null,
  more: Partial<ColumnSpec<R>> = {},
): ColumnSpec<R> {
  return {
    key,
    label,
    align: 'right',
    minWidth: 100,
    value: ns,
    cell: (row) => timeAndShare(ns(row), pct(row)),
    ...more,
  };
}

function classColumn(cls: IdleClass, help: string): ColumnSpec<IdleStepRow> {
  return shareColumn(
    `${cls}_ns`,
    IDLE_LABEL[cls],
    (row) => classNs(row.breakdown, cls),
    (row) => classPercent(row.breakdown, cls),
    { swatch: IDLE_COLOR[cls], tooltip: help, minWidth: 104 },
  );
}

/** Columns of the per-step table of a device. */
export function stepColumns(
  help: (cls: IdleClass) => string,
  word = 'GPU',
): ColumnSpec<IdleStepRow>[] {
  const b = (row: IdleStepRow): IdleBreakdown => row.breakdown;
  return [
    {
      key: 'step',
      label: 'Step',
      minWidth: 130,
      grow: 1.3,
      value: (row) => row.name,
      cell: (row) => (row.kind === 'total' ? h('strong', null, 'All steps') : row.name),
      sort: false,
    },
    nsColumn('step_ns', 'Step time', (row) => b(row).step_ns, { minWidth: 90 }),
    shareColumn(
      'busy_ns',
      'Busy',
      (row) => b(row).busy_ns,
      (row) => stepPercent(b(row).busy_ns, b(row)),
      { swatch: IDLE_COLOR.busy, tooltip: `Time the ${word} ran kernels, copies or fills` },
    ),
    ...IDLE_CLASSES.map((cls) => classColumn(cls, help(cls))),
    shareColumn(
      'idle_ns',
      'Idle',
      (row) => b(row).idle_ns,
      (row) => classPercent(b(row), 'idle'),
      { tooltip: 'All idle time inside the step: the three classes together' },
    ),
  ];
}

/** Columns of the per-stream table (idle time of the stream alone, and its queue). */
export function streamColumns(): ColumnSpec<StreamIdle>[] {
  return [
    {
      key: 'stream',
      label: 'Stream',
      minWidth: 80,
      value: (row) => row.stream,
      format: (v) => (v === null || v === undefined ? 'unknown' : String(v)),
    },
    shareColumn(
      'idle_ns',
      'Idle',
      (row) => row.total.idle_ns,
      (row) => classPercent(row.total, 'idle'),
      { tooltip: 'Time inside the steps this stream ran nothing' },
    ),
    {
      key: 'max_length',
      label: 'Longest queue',
      tooltip: 'Most activities launched but not finished at once',
      align: 'right',
      minWidth: 110,
      value: (row) => row.queue.max_length,
      format: FORMAT.count,
    },
    nsColumn('time_at_max_ns', 'Time at longest', (row) => row.queue.time_at_max_ns, {
      minWidth: 110,
    }),
    shareColumn('empty_ns', 'Queue empty', (row) => row.queue.empty_ns, queueEmptyPercent, {
      tooltip: 'Time inside the steps nothing was queued on this stream',
      minWidth: 110,
    }),
  ];
}

function classCell(cls: string): Children {
  const known = (IDLE_CLASSES as readonly string[]).includes(cls);
  const color = known ? IDLE_COLOR[cls as IdleClass] : IDLE_COLOR.other;
  return h(
    'span',
    { class: 'ks-idle-class-cell' },
    h('span', { class: 'ks-swatch', style: `background: ${color}` }),
    known ? IDLE_LABEL[cls as IdleClass] : cls,
  );
}

/** Columns of the longest idle intervals. */
export function intervalColumns(
  link: TraceLink,
  deviceName: (device: number) => string,
): ColumnSpec<IntervalRow>[] {
  return [
    { key: 'rank', label: '#', align: 'right', minWidth: 40, grow: 0, value: (r) => r.rank },
    {
      key: 'idle_class',
      label: 'Class',
      minWidth: 110,
      grow: 0,
      value: (r) => r.idle_class,
      cell: (r) => classCell(r.idle_class),
    },
    nsColumn('duration_ns', 'Idle', (r) => r.duration_ns, { minWidth: 84, grow: 0 }),
    {
      key: 'cause',
      label: 'Cause',
      minWidth: 168,
      grow: 0,
      value: (r) => r.cause,
      format: (v) => causeLabel(String(v)),
    },
    { key: 'step', label: 'Step', minWidth: 136, grow: 0, value: (r) => r.stepName },
    {
      key: 'lane',
      label: 'Next on',
      tooltip: 'The stream of the activity that ended the idle time',
      minWidth: 136,
      grow: 0,
      value: laneOf(deviceName),
    },
    {
      key: 'next_name',
      label: 'Next activity',
      tooltip: 'The kernel, copy or fill that ended the idle time',
      minWidth: 200,
      grow: 3,
      value: (r) => r.next_name,
      cellTooltip: (r) => r.next_name ?? '',
    },
    traceColumn(
      (r) => r.start_us,
      (r) => link(r.start_us, r.end_us, 'The idle interval in the trace view'),
    ),
  ];
}

/** Columns of the launches that took longest to reach the device. */
export function outlierColumns(
  link: TraceLink,
  deviceName: (device: number) => string,
): ColumnSpec<LaunchOutlier>[] {
  return [
    {
      key: 'name',
      label: 'Kernel',
      minWidth: 220,
      grow: 3,
      value: (r) => r.name,
      cellTooltip: (r) => r.name,
    },
    nsColumn('delay_ns', 'Launch delay', (r) => r.delay_ns, {
      tooltip: 'From the start of the launch call to the start of the kernel',
    }),
    nsColumn('launch_call_ns', 'Launch call', (r) => r.launch_call_ns, {
      tooltip: 'How long the launch call itself took on the host',
    }),
    {
      key: 'launch_name',
      label: 'Launched by',
      minWidth: 150,
      grow: 0,
      value: (r) => r.launch_name,
    },
    { key: 'lane', label: 'Where', minWidth: 136, grow: 0, value: laneOf(deviceName) },
    traceColumn(
      (r) => r.launch_start_us,
      (r) =>
        link(r.launch_start_us, r.start_us, 'The launch call and its kernel in the trace view'),
    ),
  ];
}
