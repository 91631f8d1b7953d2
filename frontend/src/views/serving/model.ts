// The Serving page's pure part: phase labels and colours, the strip's geometry (where an
// iteration is drawn, which one is under the pointer), the trace view window of an
// iteration, the page's headline numbers and the per-phase table's rows.

import type { Iteration, PhaseStats, ServingView } from '../../api/types';
import { DASH, formatCount, formatDuration, formatPercent, isNum } from '../../components/format';

export const PHASE_ORDER = ['prefill', 'decode', 'mixed', 'idle', 'unknown'] as const;

export const PHASE_LABEL: Readonly<Record<string, string>> = {
  prefill: 'Prefill',
  decode: 'Decode',
  mixed: 'Mixed',
  idle: 'Idle',
  unknown: 'Unknown',
};

/** Colour-blind-friendly (Tableau 10), readable on light and dark backgrounds. */
export const PHASE_COLOR: Readonly<Record<string, string>> = {
  prefill: '#f28e2b',
  decode: '#4e79a7',
  mixed: '#b07aa1',
  idle: '#bab0ac',
  unknown: '#9c9c9c',
};

/** The kernel taxonomy's classes in the breakdown's order, with their colours. */
export const CLASS_ORDER = ['gemm', 'attention', 'conv', 'communication', 'other'] as const;
export const CLASS_COLOR: Readonly<Record<string, string>> = {
  gemm: '#4e79a7',
  attention: '#59a14f',
  conv: '#76b7b2',
  communication: '#e15759',
  other: '#9c9c9c',
};

export function phaseLabel(phase: string): string {
  return PHASE_LABEL[phase] ?? phase;
}

function phaseRank(phase: string): number {
  const i = (PHASE_ORDER as readonly string[]).indexOf(phase);
  return i < 0 ? PHASE_ORDER.length : i;
}

export function phaseColor(phase: string): string {
  return PHASE_COLOR[phase] ?? PHASE_COLOR.unknown ?? '#9c9c9c';
}

/** The phases the view has, in PHASE_ORDER (any other after them). */
export function phasesOf(view: ServingView): string[] {
  return Object.keys(view.phases).sort((a, b) => phaseRank(a) - phaseRank(b));
}

export interface StripBox {
  index: number;
  /** Pixels from the strip's left, and width (at least `minWidth`): the whole iteration. */
  x: number;
  w: number;
  phase: string;
  /** The engine's marker on the host: from x, this wide. */
  hostW: number;
  /** The GPU work it launched (null: none), and its busy share of that span (0..1). */
  gpu: { x: number; w: number; busy: number } | null;
}

/** Where each iteration is drawn on a strip `width` px wide over the view's window: x by
 *  start, width by `dur_us`, at least `minWidth` px so a short decode step stays visible;
 *  inside it the host marker and the GPU work's span. */
export function stripBoxes(view: ServingView, width: number, minWidth = 1): StripBox[] {
  const [lo, hi] = view.window_us;
  if (lo === undefined || hi === undefined || width <= 0) return [];
  const span = Math.max(hi - lo, 1e-9);
  const px = (us: number): number => (us / span) * width;
  return view.iterations.map((it) => {
    const x = px(it.start_us - lo);
    const w = Math.max(minWidth, px(it.dur_us));
    const { gpu_start_us: g0, gpu_end_us: g1 } = it;
    const gpu =
      g0 === null || g1 === null
        ? null
        : {
            x: px(g0 - lo),
            w: Math.max(minWidth, px(g1 - g0)),
            busy: g1 > g0 ? Math.min(1, it.gpu_busy_us / (g1 - g0)) : 1,
          };
    return {
      index: it.index,
      x,
      w,
      phase: it.phase,
      hostW: Math.max(minWidth, px(it.host_dur_us)),
      gpu,
    };
  });
}

/** The iteration under x: the box holding it, else the nearest within `slop` px; -1. */
export function boxAt(boxes: readonly StripBox[], x: number, slop = 4): number {
  let best = -1;
  let bestDistance = Infinity;
  for (const box of boxes) {
    const distance = x < box.x ? box.x - x : x > box.x + box.w ? x - box.x - box.w : 0;
    if (distance < bestDistance || (distance === 0 && bestDistance === 0)) {
      best = box.index;
      bestDistance = distance;
    }
  }
  return bestDistance <= slop ? best : -1;
}

/** The trace view's window around an iteration (host start to its GPU work's end), with
 *  a quarter of its length on each side, as `t0`/`t1` state values. */
export function iterationWindow(it: Iteration): { t0: string; t1: string } {
  const start = Math.min(it.start_us, it.gpu_start_us ?? it.start_us);
  const end = Math.max(it.start_us + it.dur_us, it.gpu_end_us ?? it.start_us);
  const pad = Math.max((end - start) / 4, 1);
  const round = (us: number): string => String(Math.round(us * 1000) / 1000);
  return { t0: round(start - pad), t1: round(end + pad) };
}

/** The tooltip lines of an iteration. */
export function iterationLines(it: Iteration, origin: number): string[] {
  const lines = [
    `Iteration ${it.index} · ${phaseLabel(it.phase)}`,
    `at ${formatDuration(it.start_us - origin)}, ${formatDuration(it.dur_us)} long`,
    `GPU busy ${formatDuration(it.gpu_busy_us)}`,
  ];
  if (isNum(it.tokens)) {
    const from = it.counts_from === 'op shapes' ? ' (inferred from op shapes)' : '';
    lines.push(`${formatCount(it.tokens)} tokens, ${formatCount(it.requests)} requests${from}`);
  }
  lines.push(it.phase_from);
  return lines;
}

export interface PhaseRow {
  phase: string;
  stats: PhaseStats;
  /** prefill: the first-token estimate; decode: per output token; else null. */
  estimate: number | null;
  /** The share of each class in the phase's kernel time (0..1), in CLASS_ORDER. */
  classShares: { cls: string; share: number; us: number }[];
}

export function phaseRows(view: ServingView): PhaseRow[] {
  return Object.entries(view.phases)
    .sort(([a], [b]) => phaseRank(a) - phaseRank(b))
    .map(([phase, stats]) => phaseRow(phase, stats));
}

function phaseRow(phase: string, stats: PhaseStats): PhaseRow {
  const total = stats.kernel_us;
  return {
    phase,
    stats,
    estimate: stats.first_token_us.value_us ?? stats.per_output_token_us.value_us,
    classShares: CLASS_ORDER.map((cls) => {
      const us = stats.classes_us[cls] ?? 0;
      return { cls, us, share: total > 0 ? us / total : 0 };
    }),
  };
}

/** The headline tiles: (label, value, detail, testid). */
export function headline(view: ServingView): [string, string, string, string][] {
  const out: [string, string, string, string][] = [
    [
      'Iterations',
      formatCount(view.iteration_count),
      `from ${view.engine ?? 'the engine'}'s ${(view.source ?? '').replace(/_/g, ' ')}`,
      'serving-count',
    ],
  ];
  const dur = view.iterations.reduce((sum, it) => sum + it.dur_us, 0);
  const busy = view.iterations.reduce((sum, it) => sum + it.gpu_busy_us, 0);
  if (dur > 0) {
    out.push([
      'GPU busy',
      formatPercent((100 * busy) / dur, 1),
      'of the iterations’ time',
      'serving-busy',
    ]);
  }
  const prefill = view.phases.prefill?.first_token_us.value_us;
  const decode = view.phases.decode?.per_output_token_us.value_us;
  if (isNum(prefill))
    out.push([
      'First token',
      formatDuration(prefill),
      'median prefill iteration',
      'serving-first-token',
    ]);
  if (isNum(decode))
    out.push([
      'Per output token',
      formatDuration(decode),
      'median decode iteration',
      'serving-per-token',
    ]);
  const rate = view.phases.decode?.tokens_per_s;
  if (isNum(rate))
    out.push([
      'Decode tokens/s',
      formatCount(Math.round(rate)),
      'over decode iterations',
      'serving-rate',
    ]);
  if (view.rank !== null && (view.world_size ?? 1) > 1) {
    out.push([
      'Rank',
      `${view.rank} of ${view.world_size ?? DASH}`,
      'tensor-parallel: each rank is a worker',
      'serving-rank',
    ]);
  }
  return out;
}
