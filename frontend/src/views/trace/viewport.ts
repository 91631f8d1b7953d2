// Viewport math of the timeline: the visible time range, zoom and pan. Times are µs
// relative to the trace's start (the page subtracts the server's `start_us` once), so the
// numbers stay small and keep their sub-µs digits. Pure: unit-tested in viewport.test.ts.

export interface Viewport {
  /** First visible µs (relative). */
  start: number;
  /** Last visible µs (relative); always > start. */
  end: number;
}

export interface Bounds {
  start: number;
  end: number;
}

/** Never zoom in further than this many µs across the whole width. */
export const MIN_SPAN_US = 1;

export function spanOf(vp: Viewport): number {
  return vp.end - vp.start;
}

export function usPerPx(vp: Viewport, widthPx: number): number {
  return spanOf(vp) / Math.max(1, widthPx);
}

export function timeToX(t: number, vp: Viewport, widthPx: number): number {
  return ((t - vp.start) / spanOf(vp)) * widthPx;
}

export function xToTime(x: number, vp: Viewport, widthPx: number): number {
  return vp.start + (x / Math.max(1, widthPx)) * spanOf(vp);
}

/**
 * Keeps a viewport inside the bounds: its span between MIN_SPAN_US and the bounds' length,
 * then shifted (not shrunk) back inside.
 */
export function clampViewport(vp: Viewport, bounds: Bounds, minSpan = MIN_SPAN_US): Viewport {
  const total = Math.max(bounds.end - bounds.start, minSpan);
  let span = Math.min(Math.max(spanOf(vp), minSpan), total);
  if (!Number.isFinite(span)) span = total;
  let start = Number.isFinite(vp.start) ? vp.start : bounds.start;
  if (start < bounds.start) start = bounds.start;
  if (start + span > bounds.start + total) start = bounds.start + total - span;
  return { start, end: start + span };
}

/**
 * Zooms by `factor` (< 1 zooms in) keeping the time under `anchor` (a fraction of the
 * width, 0 = left edge) where it is.
 */
export function zoomAround(
  vp: Viewport,
  factor: number,
  anchor: number,
  bounds: Bounds,
  minSpan = MIN_SPAN_US,
): Viewport {
  const a = Math.min(Math.max(anchor, 0), 1);
  const at = vp.start + a * spanOf(vp);
  const total = Math.max(bounds.end - bounds.start, minSpan);
  const span = Math.min(Math.max(spanOf(vp) * factor, minSpan), total);
  return clampViewport({ start: at - a * span, end: at - a * span + span }, bounds, minSpan);
}

/** Pans by a fraction of the visible span (positive: later). */
export function panBy(vp: Viewport, fraction: number, bounds: Bounds): Viewport {
  const delta = fraction * spanOf(vp);
  return clampViewport({ start: vp.start + delta, end: vp.end + delta }, bounds);
}

/** Pans by a number of pixels (dragging right by dx shows earlier times). */
export function panByPx(vp: Viewport, dx: number, widthPx: number, bounds: Bounds): Viewport {
  return panBy(vp, -dx / Math.max(1, widthPx), bounds);
}

/** A viewport showing [t0, t1] with `pad` of its length on each side. */
export function fitRange(t0: number, t1: number, bounds: Bounds, pad = 0.1): Viewport {
  const len = Math.max(t1 - t0, MIN_SPAN_US);
  return clampViewport({ start: t0 - len * pad, end: t0 + len * (1 + pad) }, bounds);
}

/**
 * The viewport that brings an event [t, t + dur] into view: unchanged when it is already
 * well inside; re-centred at the same zoom when it fits; else zoomed out to show it. With
 * `minFraction`, an event narrower than that fraction of the view is zoomed in on until it
 * takes 5 % of it (a search hit of 3 µs in a whole-trace view would stay invisible).
 */
export function revealRange(
  vp: Viewport,
  t: number,
  dur: number,
  bounds: Bounds,
  minFraction = 0,
): Viewport {
  const span = spanOf(vp);
  if (minFraction > 0 && dur < span * minFraction) {
    const want = Math.max(dur / 0.05, MIN_SPAN_US * 20);
    if (want < span) {
      const mid = t + dur / 2;
      return clampViewport({ start: mid - want / 2, end: mid + want / 2 }, bounds);
    }
  }
  const margin = span * 0.05;
  if (t >= vp.start + margin && t + dur <= vp.end - margin) return vp;
  if (dur <= span * 0.8) {
    const mid = t + dur / 2;
    return clampViewport({ start: mid - span / 2, end: mid + span / 2 }, bounds);
  }
  return fitRange(t, t + dur, bounds, 0.15);
}

/** Whether two viewports are the same within a fraction of a pixel. */
export function sameViewport(a: Viewport, b: Viewport, widthPx: number): boolean {
  const tol = (usPerPx(a, widthPx) || 1) * 0.01;
  return Math.abs(a.start - b.start) <= tol && Math.abs(a.end - b.end) <= tol;
}
