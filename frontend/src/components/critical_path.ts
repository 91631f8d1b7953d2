// The critical path's kinds as the pages show them (a colour, a label, a stacked bar of
// time by kind, a legend) and the what-if's step-time sentence: one look on the Trace,
// Overview, Operators, Kernels and Distributed pages.

import { h } from './dom';
import { formatDuration, formatPercent } from './format';

/** The segment kinds of the `critical_path` routes, in the order bars stack them. */
export const PATH_KINDS = [
  'cpu',
  'kernel',
  'memcpy',
  'memset',
  'collective',
  'wait',
  'idle',
] as const;

export const PATH_KIND_LABEL: Readonly<Record<string, string>> = {
  cpu: 'CPU',
  kernel: 'Kernel',
  memcpy: 'Memcpy',
  memset: 'Memset',
  collective: 'Collective transfer',
  wait: 'Wait',
  idle: 'Gap / delay',
};

// Readable on both themes; the collective is the accent, as communication is elsewhere.
const PATH_KIND_COLOR: Readonly<Record<string, string>> = {
  cpu: '#5c6bc0',
  kernel: '#26a69a',
  memcpy: '#8d6e63',
  memset: '#bcaaa4',
  collective: '#ef6c00',
  wait: '#e53935',
  idle: '#9e9e9e',
};

export function pathKindColor(kind: string): string {
  return PATH_KIND_COLOR[kind] ?? '#757575';
}

export interface KindShare {
  kind: string;
  us: number;
  /** Of the total of `byKind`. */
  pct: number;
}

/** Time by kind in bar order (known kinds first, then the rest), without empty kinds. */
export function kindShares(byKind: Readonly<Record<string, number>>): KindShare[] {
  const total = Object.values(byKind).reduce((a, b) => a + Math.max(b, 0), 0);
  const known: readonly string[] = PATH_KINDS;
  const order = [...PATH_KINDS, ...Object.keys(byKind).filter((k) => !known.includes(k))];
  return order
    .filter((k) => (byKind[k] ?? 0) > 0)
    .map((kind) => {
      const us = byKind[kind] ?? 0;
      return { kind, us, pct: total > 0 ? (100 * us) / total : 0 };
    });
}

/**
 * A bar of time by kind. `scale` (0..1) is the bar's length of its box: bars of two
 * step times side by side are drawn to one scale.
 */
export function kindBar(
  byKind: Readonly<Record<string, number>>,
  testid: string,
  scale = 1,
): HTMLElement {
  const parts = kindShares(byKind).map((s) =>
    h('div', {
      class: 'ks-path-bar-part',
      dataset: { kind: s.kind },
      title: `${PATH_KIND_LABEL[s.kind] ?? s.kind}: ${formatDuration(s.us)} (${formatPercent(s.pct, 1)})`,
      style: `width:${s.pct.toFixed(3)}%;background:${pathKindColor(s.kind)}`,
    }),
  );
  const width = Math.max(0, Math.min(1, scale)) * 100;
  return h('div', { class: 'ks-path-bar', testid, style: `width:${width.toFixed(2)}%` }, ...parts);
}

export function kindLegend(kinds: readonly string[] = PATH_KINDS): HTMLElement {
  return h(
    'div',
    { class: 'ks-path-legend' },
    ...kinds.map((k) =>
      h(
        'span',
        { class: 'ks-path-legend-item' },
        h('span', { class: 'ks-path-swatch', style: `background:${pathKindColor(k)}` }),
        PATH_KIND_LABEL[k] ?? k,
      ),
    ),
  );
}

/** "43.9 ms → 28.7 ms (−34.5 %)": a what-if's mean step, recorded then predicted. */
export function stepChangeText(baselineUs: number, predictedUs: number): string {
  const pct = baselineUs > 0 ? (100 * (predictedUs - baselineUs)) / baselineUs : 0;
  const sign = pct > 0.05 ? '+' : pct < -0.05 ? '−' : '±';
  return `${formatDuration(baselineUs)} → ${formatDuration(predictedUs)} (${sign}${formatPercent(Math.abs(pct), 1)})`;
}

/** The factor as people say it: 0.5 is "2× faster", 2 is "2× slower". */
export function factorLabel(factor: number): string {
  if (factor === 1) return 'unchanged';
  if (factor === 0) return 'removed';
  const times = factor < 1 ? 1 / factor : factor;
  const text = Number.isInteger(Math.round(times * 100) / 100)
    ? String(Math.round(times))
    : times.toFixed(2).replace(/0+$/, '');
  return `${text}× ${factor < 1 ? 'faster' : 'slower'}`;
}

/** Time marks over a step of `stepUs`: 0 and multiples of a round interval (1, 2 or 5
 *  times a power of ten) giving 3 to 6 of them, none past the step. */
export function stepTicks(stepUs: number): number[] {
  if (!(stepUs > 0)) return [0];
  const raw = stepUs / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const every = [1, 2, 5, 10].map((m) => m * power).find((w) => w >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let t = 0; t <= stepUs * (1 + 1e-9); t += every) ticks.push(t);
  return ticks;
}
