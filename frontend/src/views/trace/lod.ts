// Level-of-detail request planning. The server answers a window [t0, t1) at `width` pixels
// with exact events ≥ 1 px and merged blocks for the rest, so what we ask decides what we
// see. We ask:
//  - at a resolution on a power-of-two ladder (µs per px = 2^level, the finest at or below
//    the screen's), so small zooms reuse the frame and each 2× zoom asks once;
//  - for the visible span plus half a span on each side, snapped to tiles of 256 px of
//    that resolution, so small pans reuse the frame and repeated plans are identical;
//  - only for the tracks in (or near) the vertical view that no frame covers yet.
// A frame serves while it covers the viewport at the planned level or one finer. Pure.

import type { FrameWindow } from './frame';
import type { Bounds, Viewport } from './viewport';

export interface LodOptions {
  /** Extra span fetched on each side, as a fraction of the visible span. */
  margin: number;
  tilePx: number;
  /** The server's limit on `width`. */
  maxWidth: number;
}

export const LOD: LodOptions = { margin: 0.5, tilePx: 256, maxWidth: 20_000 };

export interface WindowPlan {
  /** Relative µs. */
  t0: number;
  t1: number;
  width: number;
  usPerPx: number;
  level: number;
}

export function levelOf(usPerPx: number): number {
  return Math.floor(Math.log2(Math.max(usPerPx, 2 ** -30)) + 1e-9);
}

export function planWindow(
  vp: Viewport,
  widthPx: number,
  bounds: Bounds,
  opts: LodOptions = LOD,
): WindowPlan {
  const span = vp.end - vp.start;
  const level = levelOf(span / Math.max(1, widthPx));
  const upp = 2 ** level;
  const tile = opts.tilePx * upp;
  // The last event may end exactly at bounds.end: one pixel more keeps it inside.
  const lo = bounds.start;
  const hi = bounds.end + upp;
  const window = (margin: number): [number, number] => [
    Math.max(lo, Math.floor((vp.start - margin) / tile) * tile),
    Math.min(hi, Math.ceil((vp.end + margin) / tile) * tile),
  ];
  let [t0, t1] = window(span * opts.margin);
  if ((t1 - t0) / upp > opts.maxWidth) [t0, t1] = window(0);
  let width = Math.max(1, Math.round((t1 - t0) / upp));
  let usPerPx = upp;
  if (width > opts.maxWidth) {
    width = opts.maxWidth;
    usPerPx = (t1 - t0) / width;
  }
  return { t0, t1, width, usPerPx, level };
}

/** Whether a frame can stand for the viewport at `level`: it covers it, at that level of
 * detail or one finer. */
export function serves(frame: FrameWindow, vp: Viewport, level: number): boolean {
  const eps = (vp.end - vp.start) * 1e-9;
  return (
    frame.level <= level &&
    frame.level >= level - 1 &&
    frame.t0 <= vp.start + eps &&
    frame.t1 >= vp.end - eps
  );
}

export function samePlan(a: WindowPlan, b: WindowPlan): boolean {
  return a.t0 === b.t0 && a.t1 === b.t1 && a.width === b.width;
}

export interface InFlight {
  plan: WindowPlan;
  ids: ReadonlySet<string>;
}

export interface FetchPlan {
  plan: WindowPlan;
  /** Tracks to request now (may be empty). */
  ids: string[];
  /** Requests under way that no longer serve the viewport: cancel them. */
  abort: InFlight[];
}

/**
 * What to do for a viewport: cancel the requests under way that would not serve it, and
 * request the wanted tracks that neither a frame nor a remaining request serves.
 */
export function planFetch(
  wanted: readonly string[],
  frames: ReadonlyMap<string, FrameWindow>,
  inflight: readonly InFlight[],
  vp: Viewport,
  widthPx: number,
  bounds: Bounds,
  opts: LodOptions = LOD,
): FetchPlan {
  const plan = planWindow(vp, widthPx, bounds, opts);
  const abort = inflight.filter((f) => !serves(f.plan, vp, plan.level));
  const live = inflight.filter((f) => !abort.includes(f));
  const ids = wanted.filter((id) => {
    const frame = frames.get(id);
    if (frame && serves(frame, vp, plan.level)) return false;
    return !live.some((f) => f.ids.has(id));
  });
  return { plan, ids, abort };
}
