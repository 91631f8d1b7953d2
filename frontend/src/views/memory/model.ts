// Pure transforms of the Memory view: time and byte formatting, range math, the step
// curve, device choice, table rows, search texts and CSV. Unit-tested in model.test.ts.

import type {
  AllocationRow,
  MemoryCurveResponse,
  MemoryDevice,
  MemoryOperatorRow,
} from '../../api/types';
import type { CsvValue } from '../../components/csv';
import { DASH, formatBytes, formatCount, isNum, trimZeros } from '../../components/format';

// ----- time -------------------------------------------------------------------------

/**
 * A time relative to the trace start, to the microsecond: "0 µs", "12.5 µs",
 * "12.345 ms", "4.321123 s".
 */
export function formatRelTime(us: number | null | undefined): string {
  if (!isNum(us)) return DASH;
  const abs = Math.abs(us);
  if (abs < 1000) return `${trimZeros(us.toFixed(3))} µs`;
  if (abs < 1e6) return `${(us / 1e3).toFixed(3)} ms`;
  return `${(us / 1e6).toFixed(6)} s`;
}

/** A trace timestamp as the trace writes it: "1419247337276.476 µs". */
export function formatAbsTime(us: number | null | undefined): string {
  if (!isNum(us)) return DASH;
  return `${trimZeros(us.toFixed(3))} µs`;
}

/** Readable and exact: "96.61 MiB (101,305,344 B)"; just "512 B" below 1 KiB. */
export function formatBytesExact(bytes: number | null | undefined): string {
  if (!isNum(bytes)) return DASH;
  if (Math.abs(bytes) < 1024) return formatBytes(bytes);
  return `${formatBytes(bytes)} (${formatCount(bytes)} B)`;
}

/** Axis labels for bytes: "0", "512 B", "1.5 MiB", "96 MiB" (trailing zeros dropped). */
export function formatBytesAxis(bytes: number | null | undefined): string {
  if (!isNum(bytes)) return '';
  if (bytes === 0) return '0';
  const text = formatBytes(bytes);
  const [num = '', unit = ''] = text.split(' ');
  return `${trimZeros(num)} ${unit}`;
}

/**
 * A y axis for bytes with ticks on round binary sizes (0, 2, 4, 6, 8 MiB rather than
 * 0, 1.91, 3.81 MiB): the step is 1, 2, 2.5 or 5 × 10^k of the largest unit under `max`,
 * aiming at about `ticks` intervals. null when there is nothing to scale.
 */
export function bytesAxis(max: number, ticks = 5): { max: number; interval: number } | null {
  if (!isNum(max) || max <= 0) return null;
  let unit = 1;
  while (max / unit >= 1024 && unit < 1024 ** 4) unit *= 1024;
  const raw = max / unit / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const interval = step * unit;
  return { max: Math.ceil(max / interval - 1e-9) * interval, interval };
}

// ----- ranges -----------------------------------------------------------------------

/** A closed time range in the trace's own microseconds. */
export interface TimeRange {
  start_us: number;
  end_us: number;
}

export function sameRange(a: TimeRange | null, b: TimeRange | null): boolean {
  if (a === null || b === null) return a === b;
  return a.start_us === b.start_us && a.end_us === b.end_us;
}

/** Microseconds rounded to the nanosecond (what the trace itself resolves). */
export function roundUs(us: number): number {
  return Math.round(us * 1000) / 1000;
}

/**
 * The range a drag selected: ordered, clamped to `bounds`, rounded to the nanosecond;
 * null when nothing is left or it is narrower than `minSpan` µs.
 */
export function selectRange(
  a: number,
  b: number,
  bounds: TimeRange | null,
  minSpan = 0.001,
): TimeRange | null {
  if (!isNum(a) || !isNum(b)) return null;
  let lo = Math.min(a, b);
  let hi = Math.max(a, b);
  if (bounds) {
    lo = Math.max(lo, bounds.start_us);
    hi = Math.min(hi, bounds.end_us);
  }
  lo = roundUs(lo);
  hi = roundUs(hi);
  if (!(hi - lo >= minSpan)) return null;
  return { start_us: lo, end_us: hi };
}

/** A range from URL values; null unless both are numbers and start < end. */
export function parseRange(start: string | undefined, end: string | undefined): TimeRange | null {
  if (start === undefined || end === undefined || start.trim() === '' || end.trim() === '') {
    return null;
  }
  const s = Number(start);
  const e = Number(end);
  if (!isNum(s) || !isNum(e) || !(s < e)) return null;
  return { start_us: s, end_us: e };
}

/** The range as query / URL values (strings; the API takes the trace's µs). */
export function rangeParams(range: TimeRange | null): {
  start_us: string | undefined;
  end_us: string | undefined;
} {
  if (!range) return { start_us: undefined, end_us: undefined };
  return { start_us: String(range.start_us), end_us: String(range.end_us) };
}

/** "12.345 ms – 45.678 ms (33.333 ms)" relative to `origin`. */
export function rangeLabel(range: TimeRange | null, origin: number): string {
  if (!range) return 'Whole trace';
  const span = range.end_us - range.start_us;
  return `${formatRelTime(range.start_us - origin)} – ${formatRelTime(range.end_us - origin)} (${formatRelTime(span)})`;
}

/** The plot width to ask the curve for: whole px, 1–20000 (the API's bounds). */
export function curveWidth(px: number): number {
  if (!isNum(px)) return 1;
  return Math.max(1, Math.min(20000, Math.round(px)));
}

// ----- the step curve ---------------------------------------------------------------

/** Index of the point whose value holds at time x (the last one at or before x); -1 before the first. */
export function stepIndex(t: readonly number[], x: number): number {
  let lo = 0;
  let hi = t.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((t[mid] ?? Infinity) <= x) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

export interface CurvePoint {
  /** Relative to the origin. */
  x: number;
  y: number;
}

export interface CurveSeries {
  allocated: [number, number][];
  reserved: [number, number][] | null;
  /** x extent (relative µs). */
  min: number;
  max: number;
  /** The largest allocated value drawn. */
  peak: number;
}

/** The curve as chart data relative to `origin`, with its x extent. */
export function curveSeries(
  curve: MemoryCurveResponse,
  origin: number,
  range: TimeRange | null,
): CurveSeries {
  const allocated: [number, number][] = [];
  const reserved: [number, number][] | null = curve.reserved_bytes ? [] : null;
  let peak = Number.NEGATIVE_INFINITY;
  curve.t_us.forEach((t, i) => {
    const a = curve.allocated_bytes[i] ?? 0;
    allocated.push([t - origin, a]);
    if (a > peak) peak = a;
    const r = curve.reserved_bytes?.[i];
    if (reserved && r !== undefined) reserved.push([t - origin, r]);
  });
  // Unzoomed, the axis starts at the origin (t = 0, the first memory event of any device),
  // as its title says, even when this device's first event comes later.
  let min = range ? range.start_us - origin : Math.min(0, (curve.t_us[0] ?? origin) - origin);
  let max = range ? range.end_us - origin : (curve.t_us.at(-1) ?? origin) - origin;
  if (!(max > min)) {
    min -= 1;
    max += 1;
  }
  return { allocated, reserved, min, max, peak: allocated.length ? peak : 0 };
}

/** Where to mark the peak: at its time, or at the range start when it was carried in. */
export function peakX(device: MemoryDevice, range: TimeRange | null): number | null {
  const t = device.peak_allocated_us;
  if (!isNum(t)) return null;
  if (range && t < range.start_us) return range.start_us;
  return t;
}

// ----- devices ----------------------------------------------------------------------

/** The device to show: the wanted one if the trace has it, else the default, else the first. */
export function chooseDevice(
  devices: readonly MemoryDevice[],
  wanted: string | null | undefined,
  fallback: string | null | undefined,
): string | null {
  const names = devices.map((d) => d.device);
  if (wanted && names.includes(wanted)) return wanted;
  if (fallback && names.includes(fallback)) return fallback;
  return names[0] ?? null;
}

/**
 * The device an anchor names. "device-<id>" is how the Overview links a GPU (its device
 * id); "device-<name>" (e.g. "device-CPU", "device-GPU1") names a device directly.
 */
export function deviceForAnchor(
  anchor: string,
  devices: readonly MemoryDevice[],
): string | undefined {
  if (!anchor.startsWith('device-')) return undefined;
  const rest = anchor.slice('device-'.length);
  const byName = devices.find((d) => d.device === rest || d.device.toLowerCase() === rest);
  if (byName) return byName.device;
  if (!/^\d+$/.test(rest)) return undefined;
  const id = Number(rest);
  const accelerators = devices.filter((d) => d.device_type !== 0 && d.device_id === id);
  return (accelerators.find((d) => d.device.startsWith('GPU')) ?? accelerators[0])?.device;
}

/** "CPU", "GPU0 · 79.18 GiB" for the selector. */
export function deviceLabel(device: MemoryDevice): string {
  const total = device.total_memory_bytes;
  return total ? `${device.label} · ${formatBytes(total)}` : device.label;
}

// ----- allocation rows --------------------------------------------------------------

export interface AllocationView {
  /** Position in the order the server sent (the row's key on the page). */
  key: number;
  row: AllocationRow;
  /** The op that allocated; null for a free of memory allocated before the recording. */
  allocOp: string | null;
  /** The op the free happened in. */
  freeOp: string | null;
}

export function allocationViews(rows: readonly AllocationRow[], first = 0): AllocationView[] {
  return rows.map((row, i) => ({
    key: first + i,
    row,
    allocOp: row.state === 'freed_unseen' ? null : row.op,
    freeOp: row.state === 'freed_unseen' ? (row.free_op ?? row.op) : row.free_op,
  }));
}

export const STATE_LABEL: Record<string, string> = {
  paired: 'freed',
  never_freed: 'never freed',
  freed_unseen: 'allocated before recording',
};

export const STATE_HELP: Record<string, string> = {
  paired: 'Allocated and freed; both events are in the trace',
  never_freed: 'No free of this allocation is in the trace (a leak, or freed after the recording)',
  freed_unseen: 'A free of memory allocated before the recording started',
};

export function stateLabel(state: string): string {
  return STATE_LABEL[state] ?? state.replace(/_/g, ' ');
}

/** What the allocation table's search matches in a row (components/filter.ts). */
export function allocationText(view: AllocationView): string[] {
  const r = view.row;
  return [view.allocOp ?? '', r.parent_op ?? '', view.freeOp ?? '', stateLabel(r.state), r.state];
}

/** What the operator table's search matches in a row. */
export function operatorText(row: MemoryOperatorRow): string[] {
  return [row.name];
}

// ----- CSV --------------------------------------------------------------------------

const rel = (t: number | null, origin: number): number | null =>
  t === null ? null : roundUs(t - origin);

export const ALLOCATION_CSV_HEADER = [
  'device',
  'state',
  'size_bytes',
  'allocated_by',
  'parent_op',
  'freed_by',
  'alloc_us',
  'free_us',
  'alloc_rel_us',
  'free_rel_us',
  'duration_us',
];

export function allocationCsvRows(views: readonly AllocationView[], origin: number): CsvValue[][] {
  return views.map(({ row, allocOp, freeOp }) => [
    row.device,
    row.state,
    row.size_bytes,
    allocOp,
    row.parent_op,
    freeOp,
    row.alloc_us,
    row.free_us,
    rel(row.alloc_us, origin),
    rel(row.free_us, origin),
    row.duration_us,
  ]);
}

export const OPERATOR_CSV_HEADER = [
  'device',
  'operator',
  'calls',
  'allocation_count',
  'allocation_bytes',
  'release_count',
  'release_bytes',
  'increase_bytes',
  'self_allocation_count',
  'self_allocation_bytes',
  'self_release_count',
  'self_release_bytes',
  'self_increase_bytes',
];

export function operatorCsvRows(rows: readonly MemoryOperatorRow[]): CsvValue[][] {
  return rows.map((r) => [
    r.device,
    r.name,
    r.calls,
    r.allocation_count,
    r.allocation_bytes,
    r.release_count,
    r.release_bytes,
    r.increase_bytes,
    r.self_allocation_count,
    r.self_allocation_bytes,
    r.self_release_count,
    r.self_release_bytes,
    r.self_increase_bytes,
  ]);
}

/** "1–1,000 of 12,345" for a pager. */
export function pageLabel(offset: number, count: number, total: number): string {
  if (total === 0 || count === 0) return `0 of ${formatCount(total)}`;
  return `${formatCount(offset + 1)}–${formatCount(offset + count)} of ${formatCount(total)}`;
}
