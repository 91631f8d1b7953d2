// Canvas drawing of the timeline's tracks in view (slices by depth, merged blocks, counters
// as area charts, step lines, selection, area, flow arrows); the time axis is drawn by
// render_axis.ts, in render_style.ts's colours and font. Only what is inside the viewport
// is touched: per depth, a binary search finds the first item in view (frame.ts).

/* eslint-disable @typescript-eslint/no-non-null-assertion -- array reads at indexes inside
   checked bounds (loops to length, binary searches) */

import type { AxisTicks } from './axis';
import { colorOf } from './color';
import {
  depthRange,
  type CounterFrame,
  type SliceColumns,
  type SliceFrame,
  type TrackFrame,
} from './frame';
import { lowerBound } from './frame';
import { METRICS, rowTop, type Layout, type LayoutItem, type TrackItem } from './layout';
import type { PathMark } from './path_model';
import { drawPath } from './render_path';
import type { StepMark } from './render_axis';
import { fitText, FONT, type Palette } from './render_style';
import type { Viewport } from './viewport';

export interface SelectedGeom {
  trackId: string;
  row: number;
  depth: number;
  start: number;
  dur: number;
}

export interface AreaGeom {
  t0: number;
  t1: number;
  /** Content y range (layout coordinates). */
  yTop: number;
  yBottom: number;
}

export interface FlowArrow {
  srcTrack: string;
  srcTs: number;
  srcDepth: number;
  srcRow: number;
  dstRow: number;
  dstTrack: string;
  dstTs: number;
  dstDepth: number;
}

export interface HoverGeom {
  trackId: string;
  depth: number;
  start: number;
  dur: number;
}

export interface TrackDraw {
  ctx: CanvasRenderingContext2D;
  width: number;
  height: number;
  vp: Viewport;
  layout: Layout;
  scrollTop: number;
  frames: ReadonlyMap<string, TrackFrame>;
  palette: Palette;
  dark: boolean;
  ticks: AxisTicks;
  steps: readonly StepMark[];
  selected: SelectedGeom | null;
  hover: HoverGeom | null;
  area: AreaGeom | null;
  flows: readonly FlowArrow[];
  items: readonly LayoutItem[];
  /** The critical path's marks (empty: not shown). */
  path: readonly PathMark[];
}

// ----- tracks -----

/** An instant: a small diamond centred on x. */
function diamond(ctx: CanvasRenderingContext2D, x: number, y: number, h: number): void {
  ctx.beginPath();
  ctx.moveTo(x, y + 2);
  ctx.lineTo(x + 4, y + h / 2);
  ctx.lineTo(x, y + h - 2);
  ctx.lineTo(x - 4, y + h / 2);
  ctx.closePath();
  ctx.fill();
}

/** Calls draw(i, x0, x1) for each item of `cols` at `depth` that reaches into the view,
 * with its pixel span (unclamped). */
function forEachInView(
  d: TrackDraw,
  cols: SliceColumns,
  depth: number,
  draw: (i: number, x0: number, x1: number) => void,
): void {
  const { vp, width } = d;
  const scale = width / (vp.end - vp.start);
  const [a, b] = depthRange(cols, depth, vp.start, vp.end);
  for (let i = a; i < b; i++) {
    const start = cols.start[i]!;
    const x0 = (start - vp.start) * scale;
    const x1 = (start + cols.dur[i]! - vp.start) * scale;
    if (x1 < 0 || x0 > width) continue;
    draw(i, x0, x1);
  }
}

/** Merged blocks of short events: the dominant name's colour, lighter when sparse. */
function drawBlocks(d: TrackDraw, frame: SliceFrame, depth: number, y: number): void {
  const { ctx, width } = d;
  const h = METRICS.rowHeight - 2;
  const bl = frame.blocks;
  forEachInView(d, bl, depth, (i, left, right) => {
    const dur = bl.dur[i]!;
    const x0 = Math.max(left, -1);
    const x1 = Math.min(right, width + 1);
    const color = colorOf(frame.names[bl.name[i]!] ?? '', d.dark);
    ctx.fillStyle = color.fill;
    if (bl.row[i]! >= 0) {
      // a block holding one event (a short one, or an instant) is that event
      ctx.globalAlpha = 1;
      if (dur === 0) diamond(ctx, x0, y, h);
      else ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
      return;
    }
    const density = dur > 0 ? Math.min(1, bl.busy[i]! / dur) : 1;
    ctx.globalAlpha = 0.35 + 0.55 * density;
    ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0), h - 6);
  });
  ctx.globalAlpha = 1;
}

/** A name to write into a slice wide enough: text, x0, x1, colour. */
type SliceLabel = [string, number, number, string];

/** The events; those wide enough for a name are added to `labels`. */
function drawEvents(
  d: TrackDraw,
  frame: SliceFrame,
  depth: number,
  y: number,
  labels: SliceLabel[],
): void {
  const { ctx, width } = d;
  const h = METRICS.rowHeight - 2;
  const ev = frame.events;
  let lastX = -Infinity;
  forEachInView(d, ev, depth, (i, left, right) => {
    const name = frame.names[ev.name[i]!] ?? '';
    const color = colorOf(name, d.dark);
    ctx.fillStyle = color.fill;
    const dur = ev.dur[i]!;
    if (dur === 0) {
      diamond(ctx, left, y, h);
      return;
    }
    const x0 = Math.max(left, -2);
    const x1 = Math.min(right, width + 2);
    const w = x1 - x0;
    // sub-pixel neighbours drawn into the same pixel column are skipped
    if (w < 1 && Math.floor(x0) === lastX) return;
    lastX = Math.floor(x0);
    ctx.fillRect(x0, y, Math.max(1, w), h);
    if (ev.flags[i]! & FLAG_HEALTH) markFlagged(d, x0, y, Math.max(1, w), h);
    if (w > 26) labels.push([name, Math.max(x0, 0), Math.min(x1, width), color.text]);
    else if (w > 3) {
      ctx.fillStyle = d.dark ? 'rgba(0,0,0,0.35)' : 'rgba(255,255,255,0.55)';
      ctx.fillRect(x1 - 1, y, 1, h);
    }
  });
}

/** Bit of an exact event's `flags`: a `health` check flags it (window_query.py). */
export const FLAG_HEALTH = 16;

/** A flagged event's mark: a 2 px outline in the palette's `flagged` colour. */
function markFlagged(d: TrackDraw, x: number, y: number, w: number, h: number): void {
  const { ctx } = d;
  ctx.strokeStyle = d.palette.flagged;
  ctx.lineWidth = 2;
  ctx.strokeRect(x + 1, y + 1, Math.max(w - 2, 1), h - 2);
  ctx.lineWidth = 1;
}

function drawLabels(ctx: CanvasRenderingContext2D, labels: readonly SliceLabel[], y: number): void {
  const h = METRICS.rowHeight - 2;
  for (const [name, x0, x1, textColor] of labels) {
    const text = fitText(ctx, name, x1 - x0 - 6);
    if (!text) continue;
    ctx.fillStyle = textColor;
    ctx.fillText(text, x0 + 3, y + h / 2 + 0.5);
  }
}

function drawSlices(d: TrackDraw, item: TrackItem, frame: SliceFrame, y0: number): void {
  const rowH = METRICS.rowHeight;
  const labels: SliceLabel[] = [];
  for (let depth = 0; depth < item.rows; depth++) {
    const y = y0 + METRICS.trackPad + depth * rowH + 1;
    if (y > d.height || y + rowH < 0) continue;
    drawBlocks(d, frame, depth, y);
    drawEvents(d, frame, depth, y, labels);
    drawLabels(d.ctx, labels, y);
    labels.length = 0;
  }
}

function drawCounter(d: TrackDraw, item: TrackItem, frame: CounterFrame, y0: number): void {
  const { ctx, vp, width } = d;
  const info = item.track.counter;
  const max = Math.max(info?.max ?? 0, 1e-12);
  const top = y0 + 5;
  const bottom = y0 + item.height - 4;
  const hgt = bottom - top;
  const scale = width / (vp.end - vp.start);
  const color = info?.metric === 'gpu_utilization' ? d.palette.util : d.palette.memory;
  const n = frame.start.length;
  if (n === 0) return;
  let i = Math.max(0, lowerBound(frame.start, 0, n, vp.start) - 1);
  ctx.beginPath();
  ctx.moveTo(Math.max(-1, (frame.start[i]! - vp.start) * scale), bottom);
  let lastY = bottom;
  for (; i < n; i++) {
    const x = Math.max(-1, (frame.start[i]! - vp.start) * scale);
    if (x > width + 1) break;
    const v = Math.min(1, Math.max(0, frame.value[i]! / max));
    const y = bottom - v * hgt;
    ctx.lineTo(x, lastY);
    ctx.lineTo(x, y);
    lastY = y;
  }
  const endX = Math.min(width + 1, (frame.t1 - vp.start) * scale);
  ctx.lineTo(endX, lastY);
  ctx.lineTo(endX, bottom);
  ctx.closePath();
  ctx.globalAlpha = 0.28;
  ctx.fillStyle = color;
  ctx.fill();
  ctx.globalAlpha = 1;
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  ctx.stroke();
}

function depthY(d: TrackDraw, trackId: string, depth: number): number | null {
  const item = d.layout.byTrack.get(trackId);
  if (!item) return null;
  if (item.rows === 0) return item.y + item.height / 2 - d.scrollTop;
  const row = Math.min(Math.max(depth, 0), item.rows - 1);
  return rowTop(item, row) + METRICS.rowHeight / 2 - d.scrollTop;
}

function drawFlows(d: TrackDraw): void {
  const { ctx, vp, width } = d;
  const scale = width / (vp.end - vp.start);
  const shown: [number, number, number, number, boolean][] = [];
  const row = d.selected?.row ?? -1;
  for (const f of d.flows) {
    const y0 = depthY(d, f.srcTrack, f.srcDepth);
    const y1 = depthY(d, f.dstTrack, f.dstDepth);
    if (y0 === null || y1 === null) continue;
    const x0 = (f.srcTs - vp.start) * scale;
    const x1 = (f.dstTs - vp.start) * scale;
    if ((x0 < 0 && x1 < 0) || (x0 > width && x1 > width)) continue;
    if ((y0 < 0 && y1 < 0) || (y0 > d.height && y1 > d.height)) continue;
    shown.push([x0, y0, x1, y1, row >= 0 && (f.srcRow === row || f.dstRow === row)]);
  }
  // many arrows in view: fainter, so they read as density rather than a solid wall
  const faint = shown.length <= 60 ? 0.9 : Math.max(0.06, 0.9 * Math.sqrt(60 / shown.length));
  ctx.strokeStyle = d.palette.flow;
  ctx.fillStyle = d.palette.flow;
  for (const [x0, y0, x1, y1, mine] of shown) {
    ctx.globalAlpha = mine ? 1 : faint;
    ctx.lineWidth = mine ? 2 : 1.2;
    const bend = Math.max(18, Math.min(80, Math.abs(x1 - x0) / 2));
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.bezierCurveTo(x0 + bend, y0, x1 - bend, y1, x1, y1);
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - 6, y1 - 3.5);
    ctx.lineTo(x1 - 6, y1 + 3.5);
    ctx.closePath();
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  ctx.lineWidth = 1;
}

function outline(d: TrackDraw, geom: HoverGeom, color: string, lineWidth: number): void {
  const item = d.layout.byTrack.get(geom.trackId);
  if (!item || item.rows === 0) return;
  const depth = Math.min(geom.depth, item.rows - 1);
  const scale = d.width / (d.vp.end - d.vp.start);
  const x0 = (geom.start - d.vp.start) * scale;
  const x1 = (geom.start + geom.dur - d.vp.start) * scale;
  if (x1 < -4 || x0 > d.width + 4) return;
  const y = rowTop(item, depth) - d.scrollTop + 1;
  const left = Math.max(-2, x0);
  const w = Math.max(2, Math.min(d.width + 2, x1) - left);
  d.ctx.strokeStyle = color;
  d.ctx.lineWidth = lineWidth;
  d.ctx.strokeRect(
    left - lineWidth / 2,
    y - lineWidth / 2,
    w + lineWidth,
    METRICS.rowHeight - 2 + lineWidth,
  );
  d.ctx.lineWidth = 1;
}

/** Group headers, alternate tracks' shading, separators. */
function drawBackgrounds(d: TrackDraw): void {
  const { ctx, width, palette } = d;
  let alt = false;
  for (const item of d.items) {
    const y = item.y - d.scrollTop;
    if (item.type === 'group') {
      ctx.fillStyle = palette.groupBg;
      ctx.fillRect(0, y, width, item.height);
      alt = false;
    } else {
      if (alt) {
        ctx.fillStyle = palette.trackAlt;
        ctx.fillRect(0, y, width, item.height);
      }
      alt = !alt;
    }
    ctx.fillStyle = palette.border;
    ctx.fillRect(0, y + item.height - 1, width, 1);
  }
}

/** Step boundaries, unless so dense they would hide the data (the axis band still shows them). */
function drawStepLines(d: TrackDraw, x: (t: number) => number): void {
  const { ctx, width, height, vp } = d;
  let stepsInView = 0;
  for (const s of d.steps) if (s.end >= vp.start && s.start <= vp.end) stepsInView++;
  if (!stepsInView || width / stepsInView < 14) return;
  ctx.fillStyle = d.palette.stepLine;
  for (const s of d.steps) {
    const sx = x(s.start);
    if (sx >= 0 && sx <= width) ctx.fillRect(Math.round(sx), 0, 1, height);
  }
  const last = d.steps[d.steps.length - 1]!;
  const ex = x(last.end);
  if (ex >= 0 && ex <= width) ctx.fillRect(Math.round(ex), 0, 1, height);
}

/** Each track's frame; shaded where it has none yet (a pan beyond its margin). */
function drawData(d: TrackDraw, x: (t: number) => number): void {
  const { ctx, width, vp, palette } = d;
  for (const item of d.items) {
    if (item.type !== 'track') continue;
    const frame = d.frames.get(item.track.id);
    const y = item.y - d.scrollTop;
    ctx.fillStyle = palette.empty;
    if (!frame) {
      ctx.fillRect(0, y + 2, width, item.height - 4);
      continue;
    }
    if (frame.t0 > vp.start) ctx.fillRect(0, y + 2, Math.min(width, x(frame.t0)), item.height - 4);
    if (frame.t1 < vp.end) {
      const fx = Math.max(0, x(frame.t1));
      ctx.fillRect(fx, y + 2, width - fx, item.height - 4);
    }
    if (frame.kind === 'counter') drawCounter(d, item, frame, y);
    else drawSlices(d, item, frame, y);
  }
}

function drawArea(d: TrackDraw, area: AreaGeom, x: (t: number) => number): void {
  const { ctx, palette } = d;
  const x0 = x(area.t0);
  const x1 = x(area.t1);
  const y0 = area.yTop - d.scrollTop;
  const y1 = area.yBottom - d.scrollTop;
  ctx.fillStyle = palette.selectFill;
  ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
  ctx.strokeStyle = palette.selectLine;
  ctx.strokeRect(
    Math.round(x0) + 0.5,
    Math.round(y0) + 0.5,
    Math.round(x1 - x0),
    Math.round(y1 - y0),
  );
}

/** Draws the tracks area: `items` are the layout items overlapping the view. */
export function drawTracks(d: TrackDraw): void {
  const { ctx, width, height, vp, palette } = d;
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = palette.bg;
  ctx.fillRect(0, 0, width, height);
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  const span = vp.end - vp.start;
  const x = (t: number): number => ((t - vp.start) / span) * width;
  drawBackgrounds(d);
  ctx.fillStyle = palette.grid;
  for (const tick of d.ticks.ticks) ctx.fillRect(Math.round(x(tick.t)), 0, 1, height);
  drawStepLines(d, x);
  drawData(d, x);
  if (d.path.length)
    drawPath({ ctx, width, scrollTop: d.scrollTop, byTrack: d.layout.byTrack, x }, d.path);
  if (d.hover) outline(d, d.hover, palette.text, 1);
  if (d.selected) outline(d, d.selected, palette.accent, 2);
  if (d.flows.length) drawFlows(d);
  if (d.area) drawArea(d, d.area, x);
}
