// Top-N aggregation for pie charts: the largest N groups and one "Other" slice for the rest.

export interface Slice {
  name: string;
  value: number;
  /** Share of the sum of all positive values, in percent. */
  percent: number;
  /** How many groups the slice holds (1, or the number folded into "Other"). */
  count: number;
  other: boolean;
}

/**
 * Sums `value` per `key` over rows (non-positive and non-finite values are dropped),
 * keeps the `n` largest groups (ties by name) and folds the rest into one "Other" slice.
 */
export function topN<R>(
  rows: readonly R[],
  key: (row: R) => string,
  value: (row: R) => number,
  n: number,
  otherLabel = 'Other',
): Slice[] {
  const sums = new Map<string, number>();
  for (const row of rows) {
    const v = value(row);
    if (!Number.isFinite(v) || v <= 0) continue;
    const k = key(row);
    sums.set(k, (sums.get(k) ?? 0) + v);
  }
  const groups = [...sums.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const total = groups.reduce((sum, [, v]) => sum + v, 0);
  if (total <= 0) return [];
  const pct = (v: number): number => (v / total) * 100;
  const keep = Math.max(0, Math.floor(n));
  // Folding a single group into "Other" would hide its name for nothing.
  const shown = groups.length <= keep + 1 ? groups : groups.slice(0, keep);
  const slices: Slice[] = shown.map(([name, v]) => ({
    name,
    value: v,
    percent: pct(v),
    count: 1,
    other: false,
  }));
  const rest = groups.slice(shown.length);
  if (rest.length) {
    const v = rest.reduce((sum, [, x]) => sum + x, 0);
    slices.push({
      name: `${otherLabel} (${rest.length})`,
      value: v,
      percent: pct(v),
      count: rest.length,
      other: true,
    });
  }
  return slices;
}
