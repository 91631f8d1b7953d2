// A `trace` response turned into one frame per track: typed columns with times relative
// to the trace start, events and blocks ordered by (depth, start) with per-depth offsets,
// so drawing and hit testing only touch the rows in view. Pure: frame.test.ts.

/* eslint-disable @typescript-eslint/no-non-null-assertion -- array reads at indexes inside
   checked bounds (loops to length, binary searches) */

import type { CounterSeries, WindowBlocks, WindowEvents, WindowResponse } from '../../api/types';

/** The window a frame was fetched for (relative µs) and its resolution. */
export interface FrameWindow {
  t0: number;
  t1: number;
  usPerPx: number;
  /** Level of detail it was planned at (see lod.ts). */
  level: number;
}

export interface SliceColumns {
  count: number;
  /** depthLo[d] .. depthLo[d + 1]: the items at depth d, by start. */
  depthLo: Int32Array;
  depth: Int32Array;
  start: Float64Array;
  /** Events: duration; blocks: end - start. */
  dur: Float64Array;
  name: Int32Array;
  /** Running maximum of the end within each depth: non-decreasing, so searchable. */
  reach: Float64Array;
}

export interface EventColumns extends SliceColumns {
  row: Float64Array;
  flags: Uint8Array;
}

export interface BlockColumns extends SliceColumns {
  /** The event of a block that holds exactly one, else -1. */
  row: Float64Array;
  count_: Int32Array;
  busy: Float64Array;
}

export interface SliceFrame extends FrameWindow {
  kind: 'slices';
  names: readonly string[];
  events: EventColumns;
  blocks: BlockColumns;
}

export interface CounterFrame extends FrameWindow {
  kind: 'counter';
  start: Float64Array;
  value: Float64Array;
}

export type TrackFrame = SliceFrame | CounterFrame;

/** Order of items by (depth, start); identity when already so ordered (the usual case). */
function depthStartOrder(depth: readonly number[], start: readonly number[]): Int32Array | null {
  let sorted = true;
  for (let i = 1; i < depth.length && sorted; i++) {
    const d0 = depth[i - 1]!;
    const d1 = depth[i]!;
    if (d1 < d0 || (d1 === d0 && start[i]! < start[i - 1]!)) sorted = false;
  }
  if (sorted) return null;
  const order = Int32Array.from(depth, (_, i) => i);
  order.sort((a, b) => depth[a]! - depth[b]! || start[a]! - start[b]!);
  return order;
}

function depthOffsets(depth: Int32Array): Int32Array {
  let max = -1;
  for (const d of depth) if (d > max) max = d;
  const lo = new Int32Array(max + 2);
  for (const d of depth) lo[d + 1]!++;
  for (let d = 1; d < lo.length; d++) lo[d] = lo[d]! + lo[d - 1]!;
  return lo;
}

function runningReach(depthLo: Int32Array, start: Float64Array, dur: Float64Array): Float64Array {
  const reach = new Float64Array(start.length);
  for (let d = 0; d + 1 < depthLo.length; d++) {
    let best = -Infinity;
    for (let i = depthLo[d]!; i < depthLo[d + 1]!; i++) {
      best = Math.max(best, start[i]! + dur[i]!);
      reach[i] = best;
    }
  }
  return reach;
}

function take<T extends Float64Array | Int32Array | Uint8Array>(
  make: new (n: number) => T,
  values: readonly number[],
  order: Int32Array | null,
  shift = 0,
): T {
  const out = new make(values.length);
  if (order) for (let i = 0; i < order.length; i++) out[i] = values[order[i]!]! - shift;
  else for (let i = 0; i < values.length; i++) out[i] = values[i]! - shift;
  return out;
}

/** The columns events and blocks share, from theirs in (depth, start) order. */
function sliceColumns(
  depth: Int32Array,
  start: Float64Array,
  dur: Float64Array,
  name: Int32Array,
): SliceColumns {
  const depthLo = depthOffsets(depth);
  const reach = runningReach(depthLo, start, dur);
  return { count: depth.length, depthLo, depth, start, dur, name, reach };
}

export function decodeEvents(ev: WindowEvents | null, origin: number): EventColumns {
  const e: WindowEvents = ev ?? { row: [], name: [], start: [], dur: [], depth: [], flags: [] };
  const order = depthStartOrder(e.depth, e.start);
  return {
    ...sliceColumns(
      take(Int32Array, e.depth, order),
      take(Float64Array, e.start, order, origin),
      take(Float64Array, e.dur, order),
      take(Int32Array, e.name, order),
    ),
    row: take(Float64Array, e.row, order),
    flags: take(Uint8Array, e.flags, order),
  };
}

export function decodeBlocks(bl: WindowBlocks | null, origin: number): BlockColumns {
  const b: WindowBlocks = bl ?? { depth: [], start: [], end: [], count: [], busy: [], name: [] };
  const order = depthStartOrder(b.depth, b.start);
  const depth = take(Int32Array, b.depth, order);
  const start = take(Float64Array, b.start, order, origin);
  const end = take(Float64Array, b.end, order, origin);
  const dur = new Float64Array(start.length);
  for (let i = 0; i < dur.length; i++) dur[i] = end[i]! - start[i]!;
  return {
    ...sliceColumns(depth, start, dur, take(Int32Array, b.name, order)),
    row: b.row ? take(Float64Array, b.row, order) : new Float64Array(depth.length).fill(-1),
    count_: take(Int32Array, b.count, order),
    busy: take(Float64Array, b.busy, order),
  };
}

export function decodeCounter(
  series: CounterSeries,
  origin: number,
): Pick<CounterFrame, 'start' | 'value'> {
  return {
    start: take(Float64Array, series.start, null, origin),
    value: Float64Array.from(series.value),
  };
}

/** One frame per track of the response. */
export function decodeWindow(
  resp: WindowResponse,
  origin: number,
  level: number,
): Map<string, TrackFrame> {
  const window: FrameWindow = {
    t0: resp.t0 - origin,
    t1: resp.t1 - origin,
    usPerPx: resp.us_per_px,
    level,
  };
  const out = new Map<string, TrackFrame>();
  for (const track of resp.tracks) {
    if (track.counter) {
      out.set(track.id, { ...window, kind: 'counter', ...decodeCounter(track.counter, origin) });
    } else {
      out.set(track.id, {
        ...window,
        kind: 'slices',
        names: resp.names,
        events: decodeEvents(track.events, origin),
        blocks: decodeBlocks(track.blocks, origin),
      });
    }
  }
  return out;
}

/** Index range [lo, hi) of the items at `depth` from the first reaching t0 (its end, or an
 * earlier item's, is ≥ t0) to the last starting before t1. */
export function depthRange(
  cols: SliceColumns,
  depth: number,
  t0: number,
  t1: number,
): [number, number] {
  if (depth < 0 || depth + 1 >= cols.depthLo.length) return [0, 0];
  const lo = cols.depthLo[depth]!;
  const hi = cols.depthLo[depth + 1]!;
  const a = lowerBound(cols.reach, lo, hi, t0);
  const b = lowerBound(cols.start, a, hi, t1);
  return [a, b];
}

/** First index in [lo, hi) with values[i] >= target (hi when none). */
export function lowerBound(values: Float64Array, lo: number, hi: number, target: number): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (values[mid]! < target) a = mid + 1;
    else b = mid;
  }
  return a;
}
