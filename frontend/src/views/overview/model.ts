// Pure transforms from the `overview` response to what the page shows.

import {
  CATEGORIES,
  type Breakdown,
  type Category,
  type Device,
  type DroppedStep,
  type OverviewResponse,
  type RecommendationEvidence,
  type Step,
} from '../../api/types';
import {
  formatBytes,
  formatDuration,
  formatMetric,
  formatPercent,
  share,
} from '../../components/format';

export interface BreakdownRow {
  kind: 'step' | 'average';
  /** Step name as the API gives it ("ProfilerStep#5"); "average" for the Average row. */
  name: string;
  number: number | null;
  /** Step time: duration_us (or average_step_us). */
  total: number;
  values: Breakdown;
}

export function stepRow(step: Step): BreakdownRow {
  return {
    kind: 'step',
    name: step.name,
    number: step.number,
    total: step.duration_us,
    values: step.breakdown_us,
  };
}

export function averageRow(ov: OverviewResponse): BreakdownRow {
  return {
    kind: 'average',
    name: 'average',
    number: null,
    total: ov.average_step_us,
    values: ov.average_breakdown_us,
  };
}

/** Share of a category in a row's step time, in percent. */
export function rowShare(row: BreakdownRow, category: Category): number | null {
  return share(row.values[category], row.total);
}

/** Short x-axis label of a step: its number when known, else its name. */
export function stepLabel(step: Step): string {
  return step.number === null ? step.name : String(step.number);
}

export interface StackedSeries {
  labels: string[];
  names: string[];
  /** Each step's step time (µs), for the tooltip. */
  totals: number[];
  series: { category: Category; data: number[] }[];
}

/** Categories only a GPU spends time in (the CLI's GPU_PARTS). */
export const GPU_CATEGORIES: readonly Category[] = [
  'kernel',
  'memcpy',
  'memset',
  'communication',
  'runtime',
];

/** The categories worth a series and a column: all of them, except on a trace with no GPU
 * activity, where the GPU categories that are 0 in every step are left out (five all-zero
 * columns told a CPU-only user nothing). The CLI's step table uses the same rule. */
export function shownCategories(ov: Pick<OverviewResponse, 'devices' | 'steps'>): Category[] {
  if (ov.devices.length) return [...CATEGORIES];
  return CATEGORIES.filter(
    (c) => !GPU_CATEGORIES.includes(c) || ov.steps.some((s) => s.breakdown_us[c] !== 0),
  );
}

export function stackedSeries(
  steps: readonly Step[],
  categories: readonly Category[] = CATEGORIES,
): StackedSeries {
  return {
    labels: steps.map(stepLabel),
    names: steps.map((s) => s.name),
    totals: steps.map((s) => s.duration_us),
    series: categories.map((category) => ({
      category,
      data: steps.map((s) => s.breakdown_us[category]),
    })),
  };
}

/** The step chart's tooltip title: the step's name and its step time. */
export function stepTooltipTitle(data: StackedSeries, index: number): string {
  const name = data.names[index] ?? data.labels[index] ?? '';
  const total = data.totals[index];
  return total === undefined ? name : `${name} · ${formatDuration(total)}`;
}

export interface Slice {
  category: Category;
  value: number;
  percent: number;
}

/** Non-zero categories of a breakdown with their share of its sum, largest first. */
export function pieSlices(breakdown: Breakdown): Slice[] {
  const total = CATEGORIES.reduce((sum, c) => sum + Math.max(0, breakdown[c]), 0);
  return CATEGORIES.filter((c) => breakdown[c] > 0)
    .map((category) => ({
      category,
      value: breakdown[category],
      percent: total > 0 ? (breakdown[category] / total) * 100 : 0,
    }))
    .sort((a, b) => b.value - a.value);
}

/** The category taking the most time of the average step. */
export function topCategory(ov: OverviewResponse): Slice | undefined {
  const total = ov.average_step_us;
  const slices = pieSlices(ov.average_breakdown_us);
  const top = slices[0];
  if (!top) return undefined;
  return { ...top, percent: share(top.value, total) ?? top.percent };
}

const MAX_LISTED_STEPS = 6;

/** Readable parts of a recommendation's evidence: steps, time, share vs threshold. */
export function evidenceParts(evidence: RecommendationEvidence | null | undefined): string[] {
  if (!evidence) return [];
  const parts: string[] = [];
  if (typeof evidence.value === 'number') {
    const metric = evidence.metric;
    let text = `${metric?.endsWith('_pct') ? 'Share' : 'Value'}: ${formatMetric(metric, evidence.value)}`;
    if (typeof evidence.threshold === 'number') {
      text += ` (threshold ${formatMetric(metric, evidence.threshold)})`;
    }
    parts.push(text);
  }
  if (typeof evidence.time_us === 'number') {
    // The Distributed view's time is per rank (`time_scope`), beside per-rank times.
    const scope = typeof evidence.time_scope === 'string' ? ` (${evidence.time_scope})` : '';
    parts.push(`Time${scope}: ${formatDuration(evidence.time_us)}`);
  }
  const steps = evidence.steps ?? [];
  if (steps.length) {
    const shown = steps.slice(0, MAX_LISTED_STEPS).join(', ');
    const more =
      steps.length > MAX_LISTED_STEPS ? ` and ${steps.length - MAX_LISTED_STEPS} more` : '';
    parts.push(`Steps: ${shown}${more}`);
  }
  return parts;
}

/** One line per dropped step: "ProfilerStep#9: reason". */
export function droppedLines(dropped: readonly DroppedStep[]): string[] {
  return dropped.map((d, i) => {
    const name = typeof d.name === 'string' && d.name ? d.name : `step ${i + 1}`;
    const reason = typeof d.reason === 'string' && d.reason ? d.reason : 'incomplete';
    return `${name}: ${reason}`;
  });
}

/** What the trace's devices are called ("GPU", "MTIA", "XPU", "accelerator"): the
 * overview's `device_word`, which is "CPU" for a trace with no device activity. */
export function deviceWord(ov: { device_word: string }): string {
  return ov.device_word === 'CPU' ? 'GPU' : ov.device_word;
}

/** "1 GPU", "2 GPUs", "1 MTIA", "3 accelerators". */
export function deviceCount(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** Label/value pairs of a device summary card ("—" for what the trace cannot tell);
 * `word`: what the devices are called ("GPU", "MTIA", ...). */
export function deviceFields(device: Device, word = 'GPU'): [string, string][] {
  return [
    ['Memory', formatBytes(device.memory_bytes)],
    ['Compute capability', device.compute_capability ?? '—'],
    [`${word} utilization`, formatPercent(device.utilization_pct)],
    ['Est. SM efficiency', formatPercent(device.sm_efficiency_pct)],
    ['Est. achieved occupancy', formatPercent(device.achieved_occupancy_pct)],
    [`Kernel time using ${device.matrix_core_name}`, formatPercent(device.tensor_core_pct)],
    ...matrixCoreUnknown(device),
  ];
}

/** The kernel time whose matrix-core use the taxonomy cannot tell, when there is some. */
function matrixCoreUnknown(device: Device): [string, string][] {
  const unknown = device.matrix_core_unknown_pct;
  if (unknown === null || unknown < 0.05) return [];
  return [['Kernel time of unknown kind', formatPercent(unknown)]];
}

export function severityRank(severity: string): number {
  return severity === 'critical' ? 0 : severity === 'warning' ? 1 : 2;
}
