// Pure transforms from the `distributed` response to what the Distributed page shows.
// No DOM here: unit-tested in model.test.ts.

import type {
  CollectiveStats,
  Device,
  DistributedRank,
  DistributedRankError,
  DistributedRankStep,
  DistributedResponse,
  DistributedStep,
  StepWindow,
  Straggler,
  StragglerFactor,
} from '../../api/types';
import { formatBytes, formatDuration, formatPercent, share } from '../../components/format';

/** The view's keys in TensorBoard's URL (p.kinetoscope.<key>, see hash_params.ts). */
export const URL_KEYS = {
  /** The selected job step's name; absent: all steps (totals). */
  step: 'distributed.step',
  /** Sort of the per-rank table, "key:asc|desc". */
  rankSort: 'distributed.sort',
  /** Sort of the collectives table. */
  collectiveSort: 'distributed.csort',
  /** Sort of the stragglers table. */
  stragglerSort: 'distributed.ssort',
  /** Sort of the communication groups table. */
  groupSort: 'distributed.gsort',
  /** Scope of the collectives table: a rank number; absent: the whole job. */
  rank: 'distributed.rank',
} as const;

/**
 * The trace view's URL state for a window: the shell's keys (run, worker, span,
 * view=trace) plus the trace view's own t0/t1 (µs, times as in the worker's file, as the
 * API's step windows and the `trace` route's `worker=` mode).
 */
export const TRACE_VIEW = 'trace';
export const TRACE_KEYS = { t0: 't0', t1: 't1' } as const;

/** Beyond this many ranks the charts switch to compact heat strips. */
export const HEAT_STRIP_MIN_RANKS = 33;

// ----- time parts ----------------------------------------------------------------------

export const PARTS = ['computation', 'overlap', 'communication', 'other'] as const;
export type Part = (typeof PARTS)[number];

export const PART_LABEL: Record<Part, string> = {
  computation: 'Computation',
  overlap: 'Overlap',
  communication: 'Communication',
  other: 'Other',
};

export const PART_HELP: Record<Part, string> = {
  computation: 'Computing while no collective runs',
  overlap: 'Computing while a collective runs (communication hidden by computation)',
  communication: 'Collectives running with nothing to compute (not overlapped)',
  other: 'Neither computing nor communicating (data loading, host gaps, idle)',
};

/** Tableau 10 colours, as the Overview's categories (communication is the same red). */
export const PART_COLOR: Record<Part, string> = {
  computation: '#4e79a7',
  overlap: '#59a14f',
  communication: '#e15759',
  other: '#9c9c9c',
};

export const SYNC_PARTS = ['sync_wait', 'transfer'] as const;
export type SyncPart = (typeof SYNC_PARTS)[number];

export const SYNC_LABEL: Record<SyncPart, string> = {
  sync_wait: 'Synchronizing (wait)',
  transfer: 'Transfer',
};

export const SYNC_HELP: Record<SyncPart, string> = {
  sync_wait: 'Time in collectives waiting for the last rank to arrive',
  transfer: 'The rest of the collectives’ time: moving data',
};

export const SYNC_COLOR: Record<SyncPart, string> = {
  sync_wait: '#f28e2b',
  transfer: '#b07aa1',
};

/** A rank's numbers for all steps (its totals) or one step. */
export interface RankValues {
  step_time: number;
  computation: number;
  overlap: number;
  communication: number;
  other: number;
  sync_wait: number;
  transfer: number;
}

export type ValueKey = keyof RankValues;

// ----- steps -----------------------------------------------------------------------------

export interface StepOption {
  /** "" for all steps, else the job step's name (the URL value). */
  value: string;
  label: string;
}

export function stepOptions(view: DistributedResponse): StepOption[] {
  const seen = new Set<string>();
  const options: StepOption[] = [{ value: '', label: 'All steps (total)' }];
  for (const step of view.steps) {
    if (seen.has(step.name)) continue;
    seen.add(step.name);
    const ranks =
      step.ranks === view.ranks.length ? '' : ` · ${step.ranks} of ${view.ranks.length} ranks`;
    options.push({ value: step.name, label: `${step.name}${ranks}` });
  }
  return options;
}

/** The job step named `name` (the first of that name), or undefined. */
export function findJobStep(view: DistributedResponse, name: string): DistributedStep | undefined {
  return view.steps.find((s) => s.name === name);
}

/**
 * A rank's own step for a job step: the same step number (ProfilerStep#N), else for
 * unnumbered steps the same position among the rank's steps, as the server matches them.
 */
export function rankStep(
  rank: DistributedRank,
  view: DistributedResponse,
  step: DistributedStep,
): DistributedRankStep | undefined {
  if (step.number !== null) return rank.steps.find((s) => s.number === step.number);
  const position = view.steps.filter((s) => s.number === null).indexOf(step);
  return position >= 0 ? rank.steps[position] : undefined;
}

/** A rank's values for all steps (step = undefined) or one job step; null when it lacks it. */
export function rankValues(
  rank: DistributedRank,
  view: DistributedResponse,
  step: DistributedStep | undefined,
): RankValues | null {
  if (!step) {
    return {
      step_time: rank.step_time_us,
      computation: rank.computation_us,
      overlap: rank.overlap_us,
      communication: rank.communication_us,
      other: rank.other_us,
      sync_wait: rank.sync_wait_us,
      transfer: rank.transfer_us,
    };
  }
  const own = rankStep(rank, view, step);
  if (!own) return null;
  return {
    step_time: own.duration_us,
    computation: own.computation_us,
    overlap: own.overlap_us,
    communication: own.communication_us,
    other: own.other_us,
    sync_wait: own.sync_wait_us,
    transfer: own.transfer_us,
  };
}

/** The API field behind a value, for a rank total or a rank step (for tests and titles). */
export function apiField(key: ValueKey, perStep: boolean): string {
  if (key === 'step_time') return perStep ? 'duration_us' : 'step_time_us';
  return `${key}_us`;
}

// ----- per-rank rows ---------------------------------------------------------------------

export interface RankRow {
  rank: number;
  worker: string;
  host: string | null;
  rankSource: string;
  stepCount: number;
  values: RankValues | null;
  /** Steps in which this rank was the straggler, and by how much in total. */
  stepsLate: number;
  lateBy: number;
  unmatched: number;
  partial: boolean;
}

export function rankRows(view: DistributedResponse, step: DistributedStep | undefined): RankRow[] {
  const late = new Map(view.stragglers.map((s) => [s.rank, s]));
  return view.ranks.map((rank) => {
    let stepsLate = late.get(rank.rank)?.steps_late ?? 0;
    let lateBy = late.get(rank.rank)?.late_by_us ?? 0;
    if (step) {
      const isLate = step.straggler?.rank === rank.rank;
      stepsLate = isLate ? 1 : 0;
      lateBy = isLate && step.straggler ? step.straggler.late_by_us : 0;
    }
    return {
      rank: rank.rank,
      worker: rank.worker,
      host: rank.host,
      rankSource: rank.rank_source,
      stepCount: rank.step_count,
      values: rankValues(rank, view, step),
      stepsLate,
      lateBy,
      unmatched: rank.unmatched_collectives,
      partial: rank.partial,
    };
  });
}

/** The share of a part in a row's step time, in percent. */
export function rowShare(row: RankRow, key: ValueKey): number | null {
  if (!row.values) return null;
  return share(row.values[key], row.values.step_time);
}

/** The share of synchronizing in a row's collective time, in percent. */
export function waitShare(values: RankValues | null): number | null {
  if (!values) return null;
  return share(values.sync_wait, values.sync_wait + values.transfer);
}

export interface SeriesData<K extends string> {
  /** One label per rank ("0", "1", ...). */
  labels: string[];
  series: { key: K; data: (number | null)[] }[];
}

/** Stacked-bar data per rank for some value keys (null where the rank lacks the step). */
export function seriesByRank<K extends ValueKey>(
  rows: readonly RankRow[],
  keys: readonly K[],
): SeriesData<K> {
  return {
    labels: rows.map((r) => String(r.rank)),
    series: keys.map((key) => ({ key, data: rows.map((r) => r.values?.[key] ?? null) })),
  };
}

// ----- job summary -----------------------------------------------------------------------

export interface JobSummary {
  ranksFound: number;
  worldSize: number | null;
  /** "2 of 128", or just "2". */
  ranksText: string;
  missingRanks: number;
  backend: string;
  mode: string;
  processGroups: number;
  steps: number;
  /** Median over ranks of the total step time. */
  medianStepTime: number | null;
  /** Communication not overlapped, over all ranks' step time, in percent. */
  communicationShare: number | null;
  /** Synchronizing over all ranks' collective time, in percent. */
  waitShare: number | null;
  broken: number;
}

export function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const hi = sorted[mid] ?? 0;
  return sorted.length % 2 ? hi : ((sorted[mid - 1] ?? 0) + hi) / 2;
}

const MODE_LABEL: Record<string, string> = {
  gpu: 'GPU',
  cpu: 'CPU only',
  mixed: 'GPU and CPU ranks',
  none: 'No ranks',
};

export function jobSummary(view: DistributedResponse): JobSummary {
  const ranks = view.ranks;
  const sum = (f: (r: DistributedRank) => number): number => ranks.reduce((a, r) => a + f(r), 0);
  const stepTime = sum((r) => r.step_time_us);
  const found = view.ranks_found;
  const world = view.world_size;
  return {
    ranksFound: found,
    worldSize: world,
    ranksText: world !== null && world > found ? `${found} of ${world}` : String(found),
    missingRanks: world !== null ? Math.max(0, world - found) : 0,
    backend: view.backend ?? 'unknown',
    mode: MODE_LABEL[view.mode] ?? view.mode,
    processGroups: view.process_groups.length,
    steps: view.steps.length,
    medianStepTime: median(ranks.map((r) => r.step_time_us)),
    communicationShare: share(
      sum((r) => r.communication_us),
      stepTime,
    ),
    waitShare: share(
      sum((r) => r.sync_wait_us),
      sum((r) => r.sync_wait_us + r.transfer_us),
    ),
    broken: view.errors.length,
  };
}

/** Rank lists as ranges: [0,1,2,3,7,9,10] -> "0–3, 7, 9–10"; long lists are cut. */
export function formatRanks(ranks: readonly number[] | null, maxParts = 8): string {
  if (!ranks?.length) return '—';
  const sorted = Array.from(new Set(ranks)).sort((a, b) => a - b);
  const parts: string[] = [];
  let start = sorted[0] ?? 0;
  let prev = start;
  const flush = (): void => {
    parts.push(start === prev ? String(start) : `${start}–${prev}`);
  };
  for (const r of sorted.slice(1)) {
    if (r === prev + 1) {
      prev = r;
      continue;
    }
    flush();
    start = prev = r;
  }
  flush();
  if (parts.length <= maxParts) return parts.join(', ');
  return `${parts.slice(0, maxParts).join(', ')}, … (${sorted.length} ranks)`;
}

/** Warnings of the job, then each rank's own (prefixed with the rank). */
export function allWarnings(view: DistributedResponse): string[] {
  const out = view.warnings.slice();
  for (const rank of view.ranks) {
    if (rank.partial) out.push(`rank ${rank.rank} (${rank.worker}): the trace file was cut short`);
    for (const w of rank.warnings) out.push(`rank ${rank.rank} (${rank.worker}): ${w}`);
  }
  return out;
}

export interface BrokenRank {
  worker: string;
  span: string;
  message: string;
  fields: [string, string][];
}

export function brokenRanks(errors: readonly DistributedRankError[]): BrokenRank[] {
  return errors.map((e) => {
    const fields: [string, string][] = [];
    if (e.file) fields.push(['File', e.file]);
    if (e.kind) fields.push(['Kind', e.kind]);
    if (e.offset !== null && e.offset !== undefined) fields.push(['Byte offset', String(e.offset)]);
    return { worker: e.worker, span: e.span, message: e.message ?? 'unknown error', fields };
  });
}

// ----- collectives -----------------------------------------------------------------------

export interface CollectiveRow extends CollectiveStats {
  /** Synchronizing over the collective's time, in percent. */
  wait_pct: number | null;
}

/** The job's collectives (scope undefined) or one rank's; [] for an unknown rank. */
export function collectiveRows(
  view: DistributedResponse,
  rank: number | undefined,
): CollectiveRow[] {
  const source =
    rank === undefined ? view.collectives : view.ranks.find((r) => r.rank === rank)?.collectives;
  return (source ?? []).map((c) => ({ ...c, wait_pct: share(c.sync_wait_us, c.total_us) }));
}

/** A rank number from the URL, kept only when the job has that rank. */
export function parseRank(
  view: DistributedResponse,
  value: string | undefined,
): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const rank = Number(value);
  return view.ranks.some((r) => r.rank === rank) ? rank : undefined;
}

// ----- stragglers --------------------------------------------------------------------------

export const CAUSE_LABEL: Record<string, string> = {
  computation: 'Computation',
  dataloader: 'Data loading',
  host_gap: 'Host gaps',
  communication: 'Communication',
  arrived_late: 'Entered the step late',
  unknown: 'Unknown',
};

export const CAUSE_HELP: Record<string, string> = {
  computation: 'It computed longer than the other ranks',
  dataloader: 'It spent longer in the DataLoader than the other ranks',
  host_gap: 'Its host had longer gaps with nothing running than the other ranks',
  communication: 'Its collectives transferred longer than the other ranks’',
  arrived_late: 'Its step started after the other ranks’: the delay comes from before the step',
  unknown: 'Nothing measured accounts for half of the lateness',
};

export const FACTORS: readonly StragglerFactor[] = [
  'computation',
  'dataloader',
  'host_gap',
  'communication',
];

export function causeLabel(cause: string): string {
  return CAUSE_LABEL[cause] ?? cause.replace(/_/g, ' ');
}

/** "+3.40 ms" / "−18 µs": a signed excess. */
export function formatSigned(us: number): string {
  if (us === 0) return '0 µs';
  return `${us > 0 ? '+' : '−'}${formatDuration(Math.abs(us))}`;
}

/** Every factor's excess over the other ranks' median, largest first. */
export function excessParts(straggler: Straggler): string[] {
  return FACTORS.filter((f) => typeof straggler.excess_us[f] === 'number')
    .map((f) => [f, straggler.excess_us[f] ?? 0] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([f, v]) => `${causeLabel(f)} ${formatSigned(v)}`);
}

/** What is known and what is not about a straggler's lateness, one line each. */
export function lateness(straggler: Straggler): string[] {
  const lines = [
    `Entered the step ${formatDuration(straggler.arrived_late_us)} late` +
      (straggler.entry_before_window ? ' (its first profiled step: why is not in the trace)' : ''),
    `Lost ${formatDuration(straggler.in_step_late_us)} inside the step`,
  ];
  if (straggler.unexplained_us > 0) {
    lines.push(`Not explained: ${formatDuration(straggler.unexplained_us)}`);
  }
  return lines;
}

export interface StragglerRow {
  step: string;
  number: number | null;
  ranks: number;
  median: number;
  max: number;
  /** The late rank, or null when fewer than two ranks have the step. */
  straggler: Straggler | null;
}

export function stragglerRows(view: DistributedResponse): StragglerRow[] {
  return view.steps.map((s) => ({
    step: s.name,
    number: s.number,
    ranks: s.ranks,
    median: s.median_duration_us,
    max: s.max_duration_us,
    straggler: s.straggler,
  }));
}

/** The URL state that opens the trace view on a straggler's step window. */
export function traceLinkState(run: string, window: StepWindow): Record<string, string> {
  return {
    run,
    worker: window.worker,
    span: window.span,
    view: TRACE_VIEW,
    [TRACE_KEYS.t0]: String(window.start_us),
    [TRACE_KEYS.t1]: String(window.end_us),
  };
}

export interface LateRank {
  rank: number;
  worker: string;
  text: string;
}

/** The ranks late most often (the API sorts them by total lateness), as short lines. */
export function lateRanks(view: DistributedResponse, limit = 8): LateRank[] {
  return view.stragglers.slice(0, limit).map((s) => ({
    rank: s.rank,
    worker: s.worker,
    text: `late in ${s.steps_late} step${s.steps_late === 1 ? '' : 's'}, ${formatDuration(s.late_by_us)} in total`,
  }));
}

// ----- GPUs ----------------------------------------------------------------------------------

export interface GpuRow {
  /** Unique per row: "<rank>-<device id>". */
  id: string;
  rank: number;
  worker: string;
  device: Device;
}

export function gpuRows(view: DistributedResponse): GpuRow[] {
  return view.ranks.flatMap((r) =>
    r.devices.map((device) => ({
      id: `${r.rank}-${device.id}`,
      rank: r.rank,
      worker: r.worker,
      device,
    })),
  );
}

export function deviceMemory(device: Device): string {
  return device.memory_bytes === null ? '—' : formatBytes(device.memory_bytes);
}

export function pct(value: number | null): string {
  return formatPercent(value);
}

// ----- loading -----------------------------------------------------------------------------

export interface RankProgress {
  done: number;
  total: number;
  /** 0..100, or null when the total is unknown. */
  percent: number | null;
  text: string;
}

export function rankProgress(done: number, total: number): RankProgress {
  const percent = total > 0 ? Math.max(0, Math.min(100, (done / total) * 100)) : null;
  const text =
    total > 0 ? `Summarized ${done} of ${total} rank${total === 1 ? '' : 's'}` : 'Starting…';
  return { done, total, percent, text };
}
