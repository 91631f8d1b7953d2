// The Diff page's pure part: how one compared number (`Compared`: base, target, delta,
// delta %) reads, whether its change is better or worse, and the rows of the page's
// side-by-side tables. A null is unknown (that side has no such data): it shows "—",
// never 0, and is neither better nor worse.

import type {
  BreakdownDiff,
  CollectiveDiff,
  Compared,
  DiffView,
  GpuDiff,
  MemoryDiff,
  RowDiffBase,
  ServingPhaseDiff,
} from '../../api/types';
import { CATEGORY_LABEL } from '../../components/categories';
import {
  DASH,
  formatBytes,
  formatCount,
  formatDuration,
  isNum,
  trimZeros,
} from '../../components/format';

/** How a number shows: its unit decides both the value's and the delta's text. */
export type Unit = 'us' | 'pct' | 'count' | 'bytes' | 'gbps';

/** Which way a change is good: less time is better, more GPU utilization is better. */
export type Better = 'lower' | 'higher' | 'neutral';

export type Tone = 'better' | 'worse' | 'same' | 'unknown' | 'neutral';

export interface Metric {
  unit: Unit;
  better: Better;
}

export const TIME: Metric = { unit: 'us', better: 'lower' };
export const COUNT: Metric = { unit: 'count', better: 'neutral' };
export const SHARE: Metric = { unit: 'pct', better: 'neutral' };
export const RATE_PCT: Metric = { unit: 'pct', better: 'higher' };
export const BYTES: Metric = { unit: 'bytes', better: 'lower' };
export const BANDWIDTH: Metric = { unit: 'gbps', better: 'higher' };
export const THROUGHPUT: Metric = { unit: 'count', better: 'higher' };

/** A value in its unit: "1.20 ms", "33.40 %", "1,024", "1.00 MiB", "12.5 GB/s"; "—" unknown. */
export function formatValue(value: number | null, unit: Unit): string {
  if (!isNum(value)) return DASH;
  switch (unit) {
    case 'us':
      return formatDuration(value);
    case 'pct':
      return `${value.toFixed(2)} %`;
    case 'count':
      return Number.isInteger(value) ? formatCount(value) : trimZeros(value.toFixed(2));
    case 'bytes':
      return formatBytes(value);
    case 'gbps':
      return `${trimZeros(value.toFixed(2))} GB/s`;
  }
}

/** "+" before a positive number's text ("-" is already there for a negative one). */
function signed(value: number, text: string): string {
  return value > 0 ? `+${text}` : text;
}

/** The delta with its sign, in the unit (a change of a percentage is in points, "pp"). */
export function formatDelta(c: Compared, unit: Unit): string {
  const d = c.delta;
  if (!isNum(d)) return DASH;
  if (unit === 'pct') return signed(d, `${d.toFixed(2)} pp`);
  return signed(d, formatValue(d, unit));
}

/** The relative change with its sign: "+12.3 %", "-98.0 %"; "—" when unknown (base 0). */
export function formatDeltaPct(c: Compared): string {
  const p = c.delta_pct;
  if (!isNum(p)) return DASH;
  return signed(p, `${p.toFixed(1)} %`);
}

/** Better, worse or the same, by the delta's sign and which way is good. */
export function tone(c: Compared, better: Better): Tone {
  const d = c.delta;
  if (!isNum(d)) return 'unknown';
  if (d === 0) return 'same';
  if (better === 'neutral') return 'neutral';
  return d < 0 === (better === 'lower') ? 'better' : 'worse';
}

/** The CSS class of a tone (styles.css: green better, red worse). */
export function toneClass(t: Tone): string {
  return `ks-diff-${t}`;
}

/** One line of a side-by-side table. */
export interface CompareRow {
  /** Stable key for tests: "average_step_us", "breakdown.kernel", "gpu0.utilization_pct". */
  key: string;
  label: string;
  /** The group the line belongs to (a device, a collective), or "". */
  group: string;
  metric: Metric;
  value: Compared;
}

function row(key: string, label: string, metric: Metric, value: Compared, group = ''): CompareRow {
  return { key, label, group, metric, value };
}

export function stepRows(view: DiffView): CompareRow[] {
  return [
    row('step_count', 'Steps', COUNT, view.steps.step_count),
    row('average_step_us', 'Average step time', TIME, view.steps.average_step_us),
  ];
}

const PART_LABEL: Partial<Record<string, string>> = CATEGORY_LABEL;

function partLabel(part: string): string {
  return PART_LABEL[part] ?? part;
}

/** Per part of the step: average time per step, then its share of the step. */
export function breakdownRows(parts: readonly BreakdownDiff[]): CompareRow[] {
  return parts.flatMap((p) => [
    row(`breakdown.${p.part}`, `${partLabel(p.part)} time per step`, TIME, p.average_us),
    row(`breakdown.${p.part}.share`, `${partLabel(p.part)} share of the step`, SHARE, p.share_pct),
  ]);
}

function gpuName(g: GpuDiff): string {
  const names = g.base_name === g.target_name ? [g.base_name] : [g.base_name, g.target_name];
  const known = names.filter((n): n is string => n !== null);
  return `${g.short_label}${known.length ? ` (${known.join(' → ')})` : ''}`;
}

/** What the compared devices are called ("GPU", "MTIA", "XPU"): the word of their short
 *  labels ("MTIA 17" → "MTIA"), "device" when they differ or none is given. */
export function deviceWordOf(gpus: readonly GpuDiff[]): string {
  const words = new Set(gpus.map((g) => g.short_label.split(' / ')[0]?.replace(/ \d+$/, '') ?? ''));
  const [only] = [...words];
  return words.size === 1 && only ? only : 'device';
}

export function gpuRows(gpus: readonly GpuDiff[]): CompareRow[] {
  const word = deviceWordOf(gpus);
  return gpus.flatMap((g) => {
    const name = gpuName(g);
    const key = `gpu${g.id}`;
    return [
      row(`${key}.utilization_pct`, `${word} utilization`, RATE_PCT, g.utilization_pct, name),
      row(`${key}.sm_efficiency_pct`, 'SM efficiency', RATE_PCT, g.sm_efficiency_pct, name),
      row(
        `${key}.achieved_occupancy_pct`,
        'Achieved occupancy',
        RATE_PCT,
        g.achieved_occupancy_pct,
        name,
      ),
      row(`${key}.tensor_core_pct`, 'Matrix-core share', RATE_PCT, g.tensor_core_pct, name),
      row(`${key}.kernel_time_us`, 'Kernel time', TIME, g.kernel_time_us, name),
    ];
  });
}

export function memoryRows(devices: readonly MemoryDiff[]): CompareRow[] {
  return devices.flatMap((m) => [
    row(`${m.device}.peak_allocated`, 'Peak allocated', BYTES, m.peak_allocated_bytes, m.device),
    row(`${m.device}.peak_reserved`, 'Peak reserved', BYTES, m.peak_reserved_bytes, m.device),
  ]);
}

export function communicationRows(collectives: readonly CollectiveDiff[]): CompareRow[] {
  return collectives.flatMap((c) => [
    row(`${c.name}.calls`, 'Calls', COUNT, c.calls, c.name),
    row(`${c.name}.bytes`, 'Bytes', { unit: 'bytes', better: 'neutral' }, c.bytes, c.name),
    row(`${c.name}.total_us`, 'Total time', TIME, c.total_us, c.name),
    row(`${c.name}.avg_us`, 'Mean time', TIME, c.avg_us, c.name),
    row(`${c.name}.algbw_gbps`, 'Algorithm bandwidth', BANDWIDTH, c.algbw_gbps, c.name),
    row(`${c.name}.busbw_gbps`, 'Bus bandwidth', BANDWIDTH, c.busbw_gbps, c.name),
  ]);
}

const SERVING_PHASE: Partial<Record<string, string>> = {
  prefill: 'Prefill',
  decode: 'Decode',
  mixed: 'Mixed',
  idle: 'Idle',
  unknown: 'Unknown',
};

/** Per serving phase: iterations, median and p90 iteration time, GPU busy, tokens/s, the
 *  per-token estimate, and kernel time per iteration by taxonomy class. */
export function servingRows(phases: readonly ServingPhaseDiff[]): CompareRow[] {
  return phases.flatMap((p) => {
    const group = SERVING_PHASE[p.phase] ?? p.phase;
    const key = `serving.${p.phase}`;
    const estimate = p.phase === 'prefill' ? 'First token' : 'Per output token';
    return [
      row(`${key}.iterations`, 'Iterations', COUNT, p.iterations, group),
      row(`${key}.median_us`, 'Median iteration', TIME, p.median_us, group),
      row(`${key}.p90_us`, 'p90 iteration', TIME, p.p90_us, group),
      row(`${key}.gpu_busy_median_us`, 'GPU busy (median)', TIME, p.gpu_busy_median_us, group),
      row(`${key}.tokens_per_s`, 'Tokens/s', THROUGHPUT, p.tokens_per_s, group),
      row(`${key}.per_token_us`, `${estimate} (estimate)`, TIME, p.per_token_us, group),
      ...Object.entries(p.classes_per_iteration_us)
        .filter(([, c]) => Boolean(c.base) || Boolean(c.target))
        .map(([cls, c]) => row(`${key}.${cls}`, `${cls} per iteration`, TIME, c, group)),
    ];
  });
}

// ----- operator and kernel rows -----

export const STATUSES = ['all', 'changed', 'added', 'removed'] as const;
export type StatusFilter = (typeof STATUSES)[number];

/** The words for a row's status and for the status filter. */
export const STATUS_LABEL: Record<StatusFilter | RowDiffBase['status'], string> = {
  all: 'All',
  changed: 'Changed',
  added: 'Added',
  removed: 'Removed',
  same: 'Same',
};

/** The rows a status filter keeps ("all" keeps the unchanged ones too). */
export function withStatus<R extends RowDiffBase>(rows: readonly R[], filter: StatusFilter): R[] {
  return filter === 'all' ? rows.slice() : rows.filter((r) => r.status === filter);
}

/** How many rows have each status, for the filter's labels. */
export function statusCounts(rows: readonly RowDiffBase[]): Record<StatusFilter, number> {
  const counts: Record<StatusFilter, number> = {
    all: rows.length,
    changed: 0,
    added: 0,
    removed: 0,
  };
  for (const r of rows) if (r.status !== 'same') counts[r.status] += 1;
  return counts;
}

/** An input shape as the operators page shows it: JSON, or "" when there is none. */
export function shapeText(shape: unknown): string {
  return shape === null || shape === undefined ? '' : JSON.stringify(shape);
}

/** One bar of the top-changes chart: a delta of time (µs), better when negative. */
export interface ChangeBar {
  label: string;
  /** "operator · device_self_us" or "kernel · total_us". */
  detail: string;
  delta: number;
  base: number | null;
  target: number | null;
  tone: Tone;
}

/** The top changes, largest first, as bars (the route already sorts and caps them). */
export function changeBars(view: DiffView): ChangeBar[] {
  return view.top_changes.map((c) => {
    const shape = shapeText(c.input_shape);
    return {
      label: shape ? `${c.name} ${shape}` : c.name,
      detail: `${c.kind} · ${c.metric}`,
      delta: c.delta,
      base: c.base,
      target: c.target,
      tone: tone({ base: c.base, target: c.target, delta: c.delta, delta_pct: null }, 'lower'),
    };
  });
}
