// Pure geometry and colours of the heat strip (components/heat_strip.ts).

export interface ColumnLayout {
  /** Width of one column in CSS pixels. */
  cell: number;
  /** Width of all columns. */
  width: number;
}

/**
 * Column width for `count` columns in `available` pixels: as wide as fits, between
 * `minCell` (then the strip scrolls sideways) and `maxCell`.
 */
export function layoutColumns(
  count: number,
  available: number,
  minCell = 3,
  maxCell = 28,
): ColumnLayout {
  if (count <= 0) return { cell: maxCell, width: 0 };
  const fit = Math.floor(Math.max(0, available) / count);
  const cell = Math.max(minCell, Math.min(maxCell, fit));
  return { cell, width: cell * count };
}

const NICE = [1, 2, 5];

/** Label every k-th column so that labels are at least `minGap` pixels apart (k = 1, 2, 5, 10, ...). */
export function tickEvery(cell: number, minGap = 36): number {
  if (cell <= 0) return 1;
  for (let scale = 1; scale < 1e9; scale *= 10) {
    for (const n of NICE) {
      const k = n * scale;
      if (k * cell >= minGap) return k;
    }
  }
  return 1;
}

/** The column under x (pixels from the strip's left), or -1 outside. */
export function columnAt(x: number, cell: number, count: number): number {
  if (cell <= 0 || x < 0) return -1;
  const index = Math.floor(x / cell);
  return index < count ? index : -1;
}

/** The largest finite value (0 when none). */
export function rowMax(values: readonly (number | null)[]): number {
  let max = 0;
  for (const v of values) if (typeof v === 'number' && Number.isFinite(v) && v > max) max = v;
  return max;
}

/**
 * Opacity of a cell: 0 for nothing, else from 0.12 (a trace of it) to 1 (the row's
 * largest value); null when the value is missing.
 */
export function intensity(value: number | null, max: number): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  if (value <= 0 || max <= 0) return 0;
  return 0.12 + 0.88 * Math.min(1, value / max);
}

/** "#4e79a7" + 0.5 -> "rgba(78,121,167,0.5)". */
export function rgba(hex: string, alpha: number): string {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex.trim());
  if (!m) return hex;
  const [r, g, b] = [m[1], m[2], m[3]].map((x) => parseInt(x ?? '0', 16));
  return `rgba(${r},${g},${b},${Math.round(alpha * 1000) / 1000})`;
}
