// The roofline chart's data, pure: one dot per row with known work (intensity and achieved
// TFLOP/s both above 0, as log axes need), and per data type of those dots the roof of the
// trace's first known GPU: the memory slope up to the ridge, then the compute peak.

import type { Roof, RooflineFields } from '../api/types';

export interface RoofPoint {
  name: string;
  intensity: number;
  tflops: number;
  timeUs: number;
  pct: number | null;
  bound: string | null;
  dtype: string | null;
}

export interface RoofLine {
  dtype: string;
  peakTflops: number;
  ridge: number; // FLOP/byte where the memory slope meets the peak
  points: [number, number][];
}

export interface RooflineData {
  points: RoofPoint[];
  lines: RoofLine[];
  device: string | null;
  /** How the device matched its peaks entry: exact name, model family, or unnamed. */
  match: string | null;
  memoryGbps: number | null;
  /** Rows with work that cannot sit on log axes (no FLOPs: copies, embedding). */
  offChart: number;
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
    });
  }
  const roof = roofs[0];
  const memory = roof?.memory_gbps ?? null;
  const lines: RoofLine[] = [];
  if (roof && memory && points.length) {
    const xs = points.map((p) => p.intensity);
    const lo = Math.min(...xs, 0.01) / 2;
    const dtypes = [...new Set(points.map((p) => p.dtype).filter((d) => d !== null))];
    for (const dtype of dtypes.sort()) {
      const peak = roof.tflops[dtype];
      if (!peak) continue;
      const ridge = (peak * 1000) / memory;
      const hi = Math.max(...xs, ridge) * 4;
      lines.push({
        dtype,
        peakTflops: peak,
        ridge,
        points: [
          [lo, (memory * lo) / 1000],
          [ridge, peak],
          [hi, peak],
        ],
      });
    }
  }
  return {
    points,
    lines,
    device: roof?.device ?? null,
    match: roof?.match ?? null,
    memoryGbps: memory,
    offChart,
  };
}

/** Dot sizes by time: area ∝ time, 6 to 40 px across. */
export function dotSize(timeUs: number, maxUs: number): number {
  if (maxUs <= 0) return 6;
  return 6 + 34 * Math.sqrt(Math.max(timeUs, 0) / maxUs);
}
