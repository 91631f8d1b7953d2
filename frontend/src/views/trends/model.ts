// The Trends page's pure parts: the per-run series its charts draw, the change rows its
// table shows, and the state of the link that opens the Diff of a change's run against
// the run before it.

import type { TrendChange, TrendRun, TrendView } from '../../api/types';
import { CATEGORY_LABEL } from '../../components/categories';
import { formatBytes } from '../../components/format';

export interface RunSeries {
  /** The runs' names, in trace start order (the x axis). */
  runs: string[];
  /** Median step time per run, µs (null: no steps, or the run failed). */
  stepUs: (number | null)[];
  /** The highest memory device peak per run, bytes (null: no memory events). */
  peakBytes: (number | null)[];
  /** Indices of the runs where a step or memory-peak change was first seen. */
  stepMarks: number[];
  peakMarks: number[];
  /** Each run's workload (index into `workloads`; null: the run failed). */
  workloadOf: (number | null)[];
  /** Each workload's label. */
  workloads: string[];
}

function highestPeak(run: TrendRun): number | null {
  const peaks = Object.values(run.memory_peak_bytes);
  return peaks.length ? Math.max(...peaks) : null;
}

export function runSeries(view: TrendView): RunSeries {
  const runs = view.runs.map((r) => r.run);
  const at = (metric: string): number[] => {
    const changes = [...view.regressions, ...view.improvements];
    const named = changes.filter((c) => c.metric === metric).map((c) => runs.indexOf(c.first_run));
    return [...new Set(named)].filter((i) => i >= 0).sort((a, b) => a - b);
  };
  return {
    runs,
    stepUs: view.runs.map((r) => r.step_median_us),
    peakBytes: view.runs.map(highestPeak),
    stepMarks: at('step'),
    peakMarks: at('memory_peak'),
    workloadOf: view.runs.map((r) => r.workload),
    workloads: view.workloads.map((w) => w.label),
  };
}

export interface ChangeRow {
  kind: 'regression' | 'improvement';
  metric: string;
  name: string;
  first_run: string;
  change_pct: number | null;
  baseline: number;
  value: number;
  unit: string;
  diff_base_run: string | null;
  diff_target_run: string;
  confirmed: boolean;
}

/** Regressions first, then improvements; each by run order, then by the size of the change. */
export function changeRows(view: TrendView): ChangeRow[] {
  const order = new Map(view.runs.map((r, i) => [r.run, i]));
  const rows = (changes: TrendChange[], kind: ChangeRow['kind']): ChangeRow[] =>
    changes
      .map((c) => ({ kind, ...c }))
      .sort(
        (a, b) =>
          (order.get(a.first_run) ?? 0) - (order.get(b.first_run) ?? 0) ||
          Math.abs(b.change_pct ?? Infinity) - Math.abs(a.change_pct ?? Infinity),
      );
  return [...rows(view.regressions, 'regression'), ...rows(view.improvements, 'improvement')];
}

/** The URL state that opens the Diff page of a change: base = the run before (its first
 *  worker), target = the change's run (its first worker); null for the first run. */
export function diffLinkState(
  row: ChangeRow,
  view: TrendView,
): Record<string, string | undefined> | null {
  if (row.diff_base_run === null) return null;
  const worker = (name: string): string | undefined =>
    view.runs.find((r) => r.run === name)?.workers[0];
  const baseWorker = worker(row.diff_base_run);
  const targetWorker = worker(row.diff_target_run);
  if (baseWorker === undefined || targetWorker === undefined) return null;
  return {
    view: 'diff',
    run: row.diff_base_run,
    worker: baseWorker,
    span: view.span,
    target_run: row.diff_target_run,
    target_worker: targetWorker,
    target_span: view.span,
  };
}

const METRIC_LABEL: Record<string, string> = {
  step: 'Step time',
  phase: 'Phase',
  op: 'Operator',
  kernel: 'Kernel',
  collective: 'Collective',
  memory_peak: 'Memory peak',
};

/** A change's metric in words ("Memory peak", not `memory_peak`). */
export function metricLabel(metric: string): string {
  return METRIC_LABEL[metric] ?? metric;
}

/** A change's name in words: a phase by its label on the Overview ("CPU Exec", not
 *  `cpu_exec`); a memory device as the route names it ("GPU0"); others as they are. */
export function changeName(row: Pick<ChangeRow, 'metric' | 'name'>): string {
  const labels: Partial<Record<string, string>> = CATEGORY_LABEL;
  return row.metric === 'phase' ? (labels[row.name] ?? row.name) : row.name;
}

/** "+12.3 %", "−4.0 %", or "new" (it was 0 before). */
export function changeText(pct: number | null): string {
  if (pct === null) return 'new';
  const sign = pct > 0 ? '+' : pct < 0 ? '−' : '';
  return `${sign}${Math.abs(pct).toFixed(1)} %`;
}

/** What the rule was, in words, for the page's intro. */
export function ruleText(view: TrendView): string {
  const r = view.rule;
  const against =
    r.mode === 'baseline' && r.baseline_run !== null
      ? `Every run is compared with run ${r.baseline_run}`
      : `Each run is compared with the median of the ${r.window} runs before it`;
  return `${against} of the same workload. A change is named when it exceeds max(${r.floor_pct} %, ${r.spread_k} × the baseline's MAD, ${r.envelope_k} × the largest excursion seen without a change, ${r.min_step_pct} % of the step; for a memory peak ${formatBytes(r.min_memory_bytes)}) and the next run stays beyond it, once, at its first run ("?": the last run, not yet confirmed).`;
}
