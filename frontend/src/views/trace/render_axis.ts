// Canvas drawing of the time axis: the step bands (one per profiler step, named), the
// ticks and their labels, and the selected area across both.

/* eslint-disable @typescript-eslint/no-non-null-assertion -- array reads at indexes inside
   checked bounds (loops to length) */

import type { AxisTicks } from './axis';
import { fitText, FONT, textWidth, type Palette } from './render_style';
import type { Viewport } from './viewport';

export const AXIS_TICKS_H = 22;
export const AXIS_STEPS_H = 18;

export interface StepMark {
  start: number;
  end: number;
  name: string;
}

/** What the axis draws on, and where times fall on it. */
interface AxisDraw {
  ctx: CanvasRenderingContext2D;
  width: number;
  height: number;
  vp: Viewport;
  palette: Palette;
  /** The x of a time (relative µs). */
  x: (t: number) => number;
}

function drawStepBands(a: AxisDraw, steps: readonly StepMark[]): void {
  const { ctx, vp, palette } = a;
  const y = AXIS_TICKS_H;
  const h = a.height - AXIS_TICKS_H - 1;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    if (s.end < vp.start || s.start > vp.end) continue;
    const x0 = Math.max(0, a.x(s.start));
    const x1 = Math.min(a.width, a.x(s.end));
    ctx.fillStyle = i % 2 ? palette.stepBandB : palette.stepBandA;
    ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
    const label = fitText(ctx, s.name, x1 - x0 - 8);
    if (label) {
      ctx.fillStyle = palette.muted;
      ctx.fillText(label, x0 + 4, y + h / 2);
    }
  }
}

function drawTicks(a: AxisDraw, ticks: AxisTicks): void {
  const { ctx, width, height, palette } = a;
  ctx.strokeStyle = palette.border;
  ctx.beginPath();
  ctx.moveTo(0, height - 0.5);
  ctx.lineTo(width, height - 0.5);
  ctx.stroke();
  ctx.fillStyle = palette.muted;
  ctx.strokeStyle = palette.muted;
  let left = 0;
  if (ticks.baseLabel) {
    ctx.fillStyle = palette.text;
    ctx.fillText(ticks.baseLabel, 4, AXIS_TICKS_H / 2);
    left = textWidth(ctx, ticks.baseLabel) + 14;
    ctx.fillStyle = palette.muted;
  }
  ctx.beginPath();
  for (const tick of ticks.ticks) {
    const tx = Math.round(a.x(tick.t)) + 0.5;
    ctx.moveTo(tx, AXIS_TICKS_H - 6);
    ctx.lineTo(tx, AXIS_TICKS_H);
    if (tx + 3 >= left && tx + 3 + textWidth(ctx, tick.label) <= width) {
      ctx.fillText(tick.label, tx + 3, AXIS_TICKS_H / 2 - 2);
    }
  }
  ctx.stroke();
}

export function drawAxis(
  ctx: CanvasRenderingContext2D,
  width: number,
  height: number,
  vp: Viewport,
  ticks: AxisTicks,
  steps: readonly StepMark[],
  palette: Palette,
  area: { t0: number; t1: number } | null,
): void {
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = palette.bg;
  ctx.fillRect(0, 0, width, height);
  const span = vp.end - vp.start;
  const x = (t: number): number => ((t - vp.start) / span) * width;
  const a: AxisDraw = { ctx, width, height, vp, palette, x };
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  if (steps.length && height > AXIS_TICKS_H) drawStepBands(a, steps);
  drawTicks(a, ticks);
  if (area) {
    const x0 = x(area.t0);
    const x1 = x(area.t1);
    ctx.fillStyle = palette.selectFill;
    ctx.fillRect(x0, 0, x1 - x0, height);
    ctx.fillStyle = palette.selectLine;
    ctx.fillRect(Math.round(x0), 0, 1, height);
    ctx.fillRect(Math.round(x1), 0, 1, height);
  }
}
