// Hit testing: which event or block of a frame is under the pointer. Pure: hit.test.ts.

/* eslint-disable @typescript-eslint/no-non-null-assertion -- array reads at indexes inside
   checked bounds (loops to length, binary searches) */

import {
  depthRange,
  lowerBound,
  type CounterFrame,
  type SliceColumns,
  type SliceFrame,
  type TrackFrame,
} from './frame';
import { depthAt, itemAt, type Layout, type TrackItem } from './layout';
import { usPerPx, xToTime, type Viewport } from './viewport';

/**
 * The item at `depth` containing time t, else the nearest one within `tol` µs (the
 * shortest wins a tie, so a 1 px kernel next to a long one stays clickable); -1 for none.
 */
export function hitSlice(cols: SliceColumns, depth: number, t: number, tol: number): number {
  const [a, b] = depthRange(cols, depth, t - tol, t + tol);
  let best = -1;
  let bestDist = Infinity;
  let bestDur = Infinity;
  for (let i = a; i < b; i++) {
    const s = cols.start[i]!;
    const d = cols.dur[i]!;
    const e = s + d;
    const dist = t < s ? s - t : t > e ? t - e : 0;
    if (dist > tol) continue;
    if (dist < bestDist || (dist === bestDist && d < bestDur)) {
      best = i;
      bestDist = dist;
      bestDur = d;
    }
  }
  return best;
}

/** Index of the counter sample in force at t (the last start ≤ t), or -1. */
export function counterIndexAt(frame: Pick<CounterFrame, 'start'>, t: number): number {
  const n = frame.start.length;
  const i = lowerBound(frame.start, 0, n, t);
  if (i < n && (frame.start[i] ?? NaN) === t) return i;
  return i - 1;
}

/** Index of the event with a given row in a frame's events, or -1. */
export function indexOfRow(cols: { row: Float64Array; count: number }, row: number): number {
  for (let i = 0; i < cols.count; i++) if (cols.row[i] === row) return i;
  return -1;
}

/** What lies under a point of the timeline canvas. */
export type TimelineHit =
  | { kind: 'event'; item: TrackItem; frame: SliceFrame; index: number }
  | { kind: 'block'; item: TrackItem; frame: SliceFrame; index: number }
  | { kind: 'counter'; item: TrackItem; value: number; t: number };

/** The timeline as hit testing sees it: what is laid out, drawn and scrolled. */
export interface HitScene {
  layout: Layout;
  frames: ReadonlyMap<string, TrackFrame>;
  vp: Viewport;
  width: number;
  scrollTop: number;
}

/** The event, merged block or counter sample at canvas point (x, y), or null. */
export function hitAt(scene: HitScene, x: number, y: number): TimelineHit | null {
  const y0 = y + scene.scrollTop;
  const item = itemAt(scene.layout, y0);
  if (item?.type !== 'track') return null;
  const frame = scene.frames.get(item.track.id);
  if (!frame) return null;
  const t = xToTime(x, scene.vp, scene.width);
  if (frame.kind === 'counter') {
    const i = counterIndexAt(frame, t);
    if (i < 0 || t > frame.t1) return null;
    return { kind: 'counter', item, value: frame.value[i] ?? 0, t };
  }
  const depth = depthAt(item, y0);
  if (depth < 0) return null;
  const tol = usPerPx(scene.vp, scene.width) * 3;
  const ei = hitSlice(frame.events, depth, t, tol);
  if (ei >= 0) return { kind: 'event', item, frame, index: ei };
  const bi = hitSlice(frame.blocks, depth, t, tol);
  if (bi >= 0) return { kind: 'block', item, frame, index: bi };
  return null;
}
