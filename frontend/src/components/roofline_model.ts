// The roofline chart's data, pure: one dot per row with known work (intensity and achieved
// TFLOP/s both above 0, as log axes need), and per data type of those dots the roof of the
// trace's first known GPU: the memory slope up to the ridge, then the compute peak. Dots
// of no known data type get the memory roof alone (it holds whatever the type). The axes
// span whole decades around the dots that hold the time: a row far below all others that
// took almost none of it (a 3 µs op at 1e-5 TFLOP/s) is left off rather than squeezing
// every other dot into the top of the chart (the note counts it; the table has it).

import type { Roof, RooflineFields } from '../api/types';

export interface RoofPoint {
  name: string;
  intensity: number;
  tflops: number;
  timeUs: number;
  pct: number | null;
  bound: string | null;
  dtype: string | null;
  /** What bounds the kernel's occupancy (a kernel row's `occupancy_limited_by`). */
  limitedBy: string | null;
}

export interface RoofLine {
  /** The data type whose compute peak caps it; null: the memory roof alone. */
  dtype: string | null;
  peakTflops: number | null;
  ridge: number | null; // FLOP/byte where the memory slope meets the peak
  points: [number, number][];
}

/** Log axes' bounds (powers of ten). */
export interface RoofAxes {
  xMin: number;
  xMax: number;
  yMin: number;
  yMax: number;
}

/** A dot may sit below the chart when it takes less than this share of the dots' time
 *  and more than SPAN_DECADES below the highest dot. */
export const HIDDEN_SHARE = 0.01;
export const SPAN_DECADES = 5;

export interface RooflineData {
  points: RoofPoint[];
  lines: RoofLine[];
  device: string | null;
  /** How the device matched its peaks entry: exact name, model family, or unnamed. */
  match: string | null;
  memoryGbps: number | null;
  /** Rows with work that cannot sit on log axes (no FLOPs: copies, embedding). */
  offChart: number;
  axes: RoofAxes | null;
  /** Dots outside the axes (each under HIDDEN_SHARE of the time). */
  hidden: number;
}

/** The chart's dots and roofs from rows with roofline fields; `time` is the row's time. */
export function rooflineData<R extends RooflineFields & { name: string }>(
  rows: readonly R[],
  roofs: readonly Roof[],
  time: (row: R) => number,
): RooflineData {
  const points: RoofPoint[] = [];
  let offChart = 0;
  for (const row of rows) {
    if (row.tflops === null && row.gbps === null) continue;
    const { intensity, tflops } = row;
    if (intensity === null || tflops === null || intensity <= 0 || tflops <= 0) {
      offChart += 1;
      continue;
    }
    points.push({
      name: row.name,
      intensity,
      tflops,
      timeUs: time(row),
      pct: row.pct_of_peak,
      bound: row.bound,
      dtype: row.dtype,
      limitedBy: occupancyLimit(row),
    });
  }
  const roof = roofs[0];
  const memory = roof?.memory_gbps ?? null;
  // The peaks of the dots' data types: the chart shows each roof's ridge and flat top.
  const peaks = points.map((p) => (p.dtype ? roof?.tflops[p.dtype] : null) ?? 0);
  const peak = Math.max(0, ...peaks);
  const axes = axesOf(points, peak, memory && peak ? (peak * 1000) / memory : 0);
  const lines = roof && memory && axes ? roofLines(points, roof, memory, axes) : [];
  const inside = (p: RoofPoint): boolean =>
    axes !== null && p.intensity >= axes.xMin && p.tflops >= axes.yMin && p.intensity <= axes.xMax;
  return {
    points,
    lines,
    device: roof?.device ?? null,
    match: roof?.match ?? null,
    memoryGbps: memory,
    offChart,
    axes,
    hidden: points.filter((p) => !inside(p)).length,
  };
}

/** A kernel row's occupancy limit; null for other rows (operators) and where unknown. */
function occupancyLimit(row: object): string | null {
  const limit = (row as { occupancy_limited_by?: unknown }).occupancy_limited_by;
  return typeof limit === 'string' ? limit : null;
}

const decadeBelow = (v: number): number => 10 ** Math.floor(Math.log10(v));
const decadeAbove = (v: number): number => 10 ** Math.ceil(Math.log10(v));

/** Whole decades around the dots, up to the highest peak; the bottom leaves out the dots
 *  that take under HIDDEN_SHARE of the time and sit more than SPAN_DECADES below the
 *  highest dot. */
function axesOf(points: readonly RoofPoint[], peak: number, ridge: number): RoofAxes | null {
  if (!points.length) return null;
  const total = points.reduce((sum, p) => sum + Math.max(p.timeUs, 0), 0);
  const top = Math.max(...points.map((p) => p.tflops));
  const floor = top / 10 ** SPAN_DECADES;
  const kept = points.filter(
    (p) => p.tflops >= floor || total <= 0 || p.timeUs >= HIDDEN_SHARE * total,
  );
  const xs = kept.map((p) => p.intensity);
  return {
    xMin: decadeBelow(Math.min(...xs) / 2),
    xMax: decadeAbove(Math.max(...xs, ridge) * 2),
    yMin: decadeBelow(Math.min(...kept.map((p) => p.tflops)) / 2),
    yMax: decadeAbove(Math.max(top, peak) * 1.5),
  };
}

/** A roof per data type of the dots (its peak known); the memory roof alone when none is. */
function roofLines(
  points: readonly RoofPoint[],
  roof: Roof,
  memory: number,
  axes: RoofAxes,
): RoofLine[] {
  // The slope starts where it enters the chart: at the left edge, or at the bottom.
  const lo = Math.max(axes.xMin, (axes.yMin * 1000) / memory);
  const lines: RoofLine[] = [];
  const dtypes = [...new Set(points.map((p) => p.dtype).filter((d) => d !== null))];
  for (const dtype of dtypes.sort()) {
    const peak = roof.tflops[dtype];
    if (!peak) continue;
    const ridge = (peak * 1000) / memory;
    lines.push({
      dtype,
      peakTflops: peak,
      ridge,
      points: [
        [lo, (memory * lo) / 1000],
        [ridge, peak],
        [Math.max(axes.xMax, ridge * 4), peak],
      ],
    });
  }
  if (lines.length) return lines;
  const hi = Math.min(axes.xMax, (axes.yMax * 1000) / memory);
  return [
    {
      dtype: null,
      peakTflops: null,
      ridge: null,
      points: [
        [lo, (memory * lo) / 1000],
        [hi, (memory * hi) / 1000],
      ],
    },
  ];
}

/** Dot sizes by time: area ∝ time, 6 to 40 px across. */
export function dotSize(timeUs: number, maxUs: number): number {
  if (maxUs <= 0) return 6;
  return 6 + 34 * Math.sqrt(Math.max(timeUs, 0) / maxUs);
}
