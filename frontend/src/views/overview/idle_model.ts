// Pure transforms from the `gpu_idle` route to what the Overview's "Why is the GPU idle?"
// section shows: the three idle classes with their colours and explanations, per-step rows
// and chart series per device, and the longest idle intervals and launch delays as rows
// with the trace view's window to link to. Durations stay the route's nanoseconds; the
// page divides by 1000 only to format them.

import type {
  DeviceIdle,
  GpuIdleView,
  IdleBreakdown,
  IdleInterval,
  LaunchOutlier,
  StreamIdle,
} from '../../api/types';
import { formatDuration } from '../../components/format';

export const IDLE_CLASSES = ['host_wait', 'kernel_wait', 'other'] as const;
export type IdleClass = (typeof IDLE_CLASSES)[number];

/** A part of step time: busy, or one idle class. */
export type StepPart = IdleClass | 'busy';

export const IDLE_LABEL: Record<IdleClass, string> = {
  host_wait: 'Host wait',
  kernel_wait: 'Kernel wait',
  other: 'Other idle',
};

export const PART_LABEL: Record<StepPart, string> = { busy: 'Busy', ...IDLE_LABEL };

/** Tableau 10, as the step-time categories; busy is the Kernel category's blue. */
export const IDLE_COLOR: Record<StepPart, string> = {
  busy: '#4e79a7',
  host_wait: '#e15759',
  kernel_wait: '#f28e2b',
  other: '#9c9c9c',
};

/** Why a gap has its class, in one line (the kernel-wait threshold comes from the route). */
export function idleHelp(cls: IdleClass, thresholdNs: number, word = 'GPU'): string {
  switch (cls) {
    case 'host_wait':
      return `The CPU had not launched the next kernel yet: the ${word} waited for the host (Python, data loading, launch overhead).`;
    case 'kernel_wait':
      return `A short gap (under ${formatDuration(thresholdNs / 1000)}) between back-to-back kernels already queued: the device's own launch overhead.`;
    case 'other':
      return `The next work was already queued, yet the ${word} waited longer: a blocking sync, a memcpy elsewhere, or no more work in the step.`;
  }
}

const CAUSE_LABEL: Record<string, string> = {
  launched_late: 'launched late',
  queued_short_gap: 'short gap, work queued',
  blocking_sync: 'blocking sync',
  queued_long_gap: 'long gap, work queued',
  no_launch_call: 'no launch call',
  no_next_activity: 'no work after it',
};

export function causeLabel(cause: string): string {
  return CAUSE_LABEL[cause] ?? cause.replace(/_/g, ' ');
}

/** Nanoseconds of one part (busy or a class) in a breakdown. */
export function classNs(b: IdleBreakdown, part: StepPart): number {
  return b[`${part}_ns`];
}

/** `ns` as a percentage of the breakdown's step time (null: no step time). */
export function stepPercent(ns: number, b: IdleBreakdown): number | null {
  return b.step_ns > 0 ? (ns / b.step_ns) * 100 : null;
}

/** The route's share of step time of one class (0..1, or null), as a percentage. */
export function classPercent(b: IdleBreakdown, cls: IdleClass | 'idle'): number | null {
  const value = b[`${cls}_share`];
  return value === null ? null : value * 100;
}

export interface IdleStepRow {
  kind: 'step' | 'total';
  /** The step's name ("ProfilerStep#5"), "total" for the footer. */
  name: string;
  breakdown: IdleBreakdown;
}

/** One row per step of a device (in the route's step order). */
export function idleStepRows(view: GpuIdleView, device: DeviceIdle): IdleStepRow[] {
  return device.per_step.map((breakdown, i) => ({
    kind: 'step',
    name: view.steps[i]?.name ?? `step ${i + 1}`,
    breakdown,
  }));
}

export function idleTotalRow(breakdown: IdleBreakdown): IdleStepRow {
  return { kind: 'total', name: 'total', breakdown };
}

/** The short axis label of a step: its number ("ProfilerStep#5" → "5"), else its name. */
export function shortStepName(name: string): string {
  return /#(\d+)$/.exec(name)?.[1] ?? name;
}

export interface IdleSeries {
  key: StepPart;
  /** Per step: percent of the step's time. */
  data: number[];
  /** Per step: nanoseconds (for the tooltip). */
  ns: number[];
}

/** The stacked bars of a device: busy and each idle class, as percent of step time (they
 *  add up to 100 for a step with time). */
export function idleSeries(device: DeviceIdle): IdleSeries[] {
  const keys: StepPart[] = ['busy', ...IDLE_CLASSES];
  return keys.map((key) => {
    const parts = device.per_step.map((b) => {
      const ns = classNs(b, key);
      return { ns, pct: stepPercent(ns, b) ?? 0 };
    });
    return { key, ns: parts.map((p) => p.ns), data: parts.map((p) => p.pct) };
  });
}

/** The trace view's window (the trace's µs) around a range: the range in the middle half,
 *  so what came before and after shows too. */
export function traceWindow(
  startUs: number,
  endUs: number,
  minPadUs = 1,
): { t0: string; t1: string } {
  const pad = Math.max((endUs - startUs) / 2, minPadUs);
  const round = (us: number): string => String(Math.round(us * 1000) / 1000);
  return { t0: round(startUs - pad), t1: round(endUs + pad) };
}

export interface IntervalRow extends IdleInterval {
  /** 1-based rank, longest first. */
  rank: number;
  stepName: string;
}

/** The longest idle intervals, as the route orders them, at most `limit`. */
export function intervalRows(view: GpuIdleView, limit: number): IntervalRow[] {
  return view.top_intervals.slice(0, limit).map((interval, i) => ({
    ...interval,
    rank: i + 1,
    stepName: view.steps[interval.step]?.name ?? String(interval.step),
  }));
}

/** The launches that took longest to reach the GPU, longest first, at most `limit`. */
export function outlierRows(view: GpuIdleView, limit: number): LaunchOutlier[] {
  const outliers = view.launch_delay?.outliers ?? [];
  return outliers
    .slice()
    .sort((a, b) => b.delay_ns - a.delay_ns || a.start_us - b.start_us)
    .slice(0, limit);
}

/** "GPU 0 stream 7", "XPU 0 stream 3" (stream unknown: "GPU 0"); `device`: its short label. */
export function laneLabel(device: string, stream: number | null): string {
  return stream === null ? device : `${device} stream ${stream}`;
}

/** A device id's short label as the view names it ("XPU 0"); "device N" if not listed. */
export function deviceNamer(view: GpuIdleView): (device: number) => string {
  const names = new Map(view.devices.map((d) => [d.device, d.short_label]));
  return (device) => names.get(device) ?? `device ${device}`;
}

/** One line per device: the largest idle class and its share of the step time. */
export function idleHeadline(device: DeviceIdle, word = 'GPU'): string {
  const total = device.total;
  const idle = classPercent(total, 'idle');
  if (idle === null) return 'No step time on this device.';
  const top = IDLE_CLASSES.slice().sort((a, b) => classNs(total, b) - classNs(total, a))[0];
  if (!top || classNs(total, top) === 0) return `The ${word} was never idle inside the steps.`;
  return `Idle ${idle.toFixed(2)} % of step time; mostly ${IDLE_LABEL[top].toLowerCase()} (${(classPercent(total, top) ?? 0).toFixed(2)} %).`;
}

/** A stream's queue: the share of step time it was empty, in percent (null: no step time). */
export function queueEmptyPercent(stream: StreamIdle): number | null {
  return stepPercent(stream.queue.empty_ns, stream.total);
}
