// Time-axis ticks with readable units ("250 µs", "1.5 ms", "12 s"). When the labels would
// need many digits (deep zoom far into a long trace) the ticks are labelled relative to a
// round base shown once ("12.3 s +" then "+250 µs"), as trace viewers do. Pure.

/* eslint-disable @typescript-eslint/no-non-null-assertion -- array reads at indexes inside
   checked bounds (loops to length, binary searches) */

import type { Viewport } from './viewport';

export interface TimeUnit {
  name: 'ns' | 'µs' | 'ms' | 's';
  us: number;
}

const UNITS: readonly TimeUnit[] = [
  { name: 's', us: 1e6 },
  { name: 'ms', us: 1e3 },
  { name: 'µs', us: 1 },
  { name: 'ns', us: 1e-3 },
];

export interface Tick {
  /** Relative µs. */
  t: number;
  label: string;
}

export interface AxisTicks {
  step: number;
  ticks: Tick[];
  /** Relative µs the labels count from, or null when labels are absolute. */
  base: number | null;
  baseLabel: string | null;
}

/** The smallest 1, 2 or 5 × 10^k that is ≥ minStep. */
export function niceStep(minStep: number): number {
  if (!(minStep > 0) || !Number.isFinite(minStep)) return 1;
  const exp = Math.floor(Math.log10(minStep));
  for (let e = exp; e <= exp + 1; e++) {
    for (const m of [1, 2, 5]) {
      const step = m * 10 ** e;
      if (step >= minStep * (1 - 1e-9)) return step;
    }
  }
  return 10 ** (exp + 1);
}

/** The unit for ticks `step` µs apart: the step is at least a tenth of it. */
export function unitFor(step: number): TimeUnit {
  for (const unit of UNITS) if (step >= unit.us * 0.1 * (1 - 1e-9)) return unit;
  return UNITS[UNITS.length - 1]!;
}

function decimalsFor(step: number, unit: TimeUnit): number {
  const ratio = step / unit.us;
  return Math.max(0, Math.min(9, Math.ceil(-Math.log10(ratio) - 1e-9)));
}

/** `t` µs in `unit` with `decimals` digits: "1.5 ms". */
export function formatIn(t: number, unit: TimeUnit, decimals: number): string {
  let text = (t / unit.us).toFixed(decimals);
  if (/^-0(\.0*)?$/.test(text)) text = text.slice(1);
  return `${text} ${unit.name}`;
}

/** A time `t` with enough digits to tell apart times `resolution` µs apart. */
export function formatTimeAt(t: number, resolution: number): string {
  const abs = Math.abs(t);
  const unit =
    abs >= 1e6 ? UNITS[0] : abs >= 1e3 ? UNITS[1] : abs >= 1 || t === 0 ? UNITS[2] : UNITS[3];
  const u = unit!;
  return formatIn(t, u, decimalsFor(Math.max(resolution, 1e-3), u));
}

const MAX_INTEGER_DIGITS = 5;

/** Ticks for a viewport `widthPx` wide, at least `minGapPx` apart. */
export function axisTicks(vp: Viewport, widthPx: number, minGapPx = 90): AxisTicks {
  const span = vp.end - vp.start;
  const step = niceStep((span * minGapPx) / Math.max(1, widthPx));
  const unit = unitFor(step);
  const decimals = decimalsFor(step, unit);
  const first = Math.ceil(vp.start / step - 1e-9) * step;
  const times: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t = first + i * step;
    if (t > vp.end + step * 1e-9) break;
    times.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  }
  const biggest = Math.max(Math.abs(vp.start), Math.abs(vp.end)) / unit.us;
  if (biggest < 10 ** MAX_INTEGER_DIGITS) {
    return {
      step,
      base: null,
      baseLabel: null,
      ticks: times.map((t) => ({ t, label: formatIn(t, unit, decimals) })),
    };
  }
  const bigStep = 10 ** Math.ceil(Math.log10(step * 10) - 1e-9);
  const base = Math.floor(vp.start / bigStep + 1e-9) * bigStep;
  return {
    step,
    base,
    baseLabel: `${formatTimeAt(base, bigStep)} +`,
    ticks: times.map((t) => ({ t, label: `+${formatIn(t - base, unit, decimals)}` })),
  };
}

/** A duration for labels and tooltips: "850 ns", "12.5 µs", "3.20 ms", "1.25 s". */
export function formatSpan(us: number): string {
  const abs = Math.abs(us);
  if (abs === 0) return '0 µs';
  if (abs < 1) return `${trim((us * 1e3).toFixed(abs < 0.01 ? 2 : 0))} ns`;
  if (abs < 1e3) return `${trim(us.toFixed(abs >= 100 ? 1 : abs >= 10 ? 2 : 3))} µs`;
  if (abs < 1e6) return `${trim((us / 1e3).toFixed(3))} ms`;
  return `${trim((us / 1e6).toFixed(3))} s`;
}

function trim(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
