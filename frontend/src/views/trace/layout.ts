// Vertical layout of the timeline: tracks grouped by process (counters in a group of their
// own per worker), each group a collapsible header, each slice track one row per nesting
// depth (a collapsed track keeps its top row). Pure: unit-tested in layout.test.ts.

/* eslint-disable @typescript-eslint/no-non-null-assertion -- array reads at indexes inside
   checked bounds (loops to length, binary searches) */

import type { TimelineTrack } from '../../api/types';

export interface Metrics {
  groupHeight: number;
  rowHeight: number;
  trackPad: number;
  counterHeight: number;
}

export const METRICS: Metrics = { groupHeight: 26, rowHeight: 18, trackPad: 3, counterHeight: 40 };

/** Tracks deeper than this many rows start collapsed to their top row. */
export const DEEP_TRACK_ROWS = 32;

export interface GroupItem {
  type: 'group';
  key: string;
  label: string;
  /** The worker, for multi-rank pages (null: one worker). */
  worker: string | null;
  y: number;
  height: number;
  collapsed: boolean;
  trackIds: string[];
}

export interface TrackItem {
  type: 'track';
  key: string;
  track: TimelineTrack;
  group: string;
  y: number;
  height: number;
  /** Depth rows drawn (0 for counters). */
  rows: number;
  /** Collapsed to its top row while it has more. */
  collapsed: boolean;
  /** Can be collapsed / expanded (more than one row). */
  expandable: boolean;
}

export type LayoutItem = GroupItem | TrackItem;

export interface Layout {
  items: LayoutItem[];
  height: number;
  byTrack: Map<string, TrackItem>;
}

export interface LayoutState {
  collapsedGroups: ReadonlySet<string>;
  collapsedTracks: ReadonlySet<string>;
}

function workerPrefix(track: TimelineTrack): string {
  if (track.worker === null) return '';
  const at = track.label.indexOf(' · ');
  return at >= 0 ? track.label.slice(0, at + 3) : `${track.worker} · `;
}

/**
 * The profiler's own bookkeeping (its span, "Iteration Start", window ends): libkineto
 * writes it under the pseudo-processes "Spans", "Traces" and one with an empty pid, which
 * would show as three groups "(Spans)", "(Traces)" and "rank N · " with no name.
 */
const MARKER_PIDS: ReadonlySet<string> = new Set(['Spans', 'Traces', '']);

function isProfilerMarker(track: TimelineTrack): boolean {
  return track.kind === 'other' && track.pid !== null && MARKER_PIDS.has(track.pid);
}

export function groupKey(track: TimelineTrack): string {
  const what =
    track.kind === 'counter' ? '#counters' : isProfilerMarker(track) ? '#profiler' : track.process;
  return `${track.worker ?? ''}\u0000${what}`;
}

export function groupLabel(track: TimelineTrack): string {
  if (track.kind === 'counter') return `${workerPrefix(track)}Counters`;
  if (isProfilerMarker(track)) return `${workerPrefix(track)}Profiler markers`;
  const name = track.process.slice(workerPrefix(track).length).trim();
  return name ? track.process : `${workerPrefix(track)}Other`;
}

/** The track's label without the worker prefix its group already shows. */
export function trackLabel(track: TimelineTrack): string {
  const prefix = workerPrefix(track);
  return prefix && track.label.startsWith(prefix) ? track.label.slice(prefix.length) : track.label;
}

/** Tracks that start collapsed: slice tracks deeper than DEEP_TRACK_ROWS rows. */
export function initiallyCollapsedTracks(tracks: readonly TimelineTrack[]): Set<string> {
  return new Set(
    tracks
      .filter((t) => t.kind !== 'counter' && t.max_depth + 1 > DEEP_TRACK_ROWS)
      .map((t) => t.id),
  );
}

export function buildLayout(
  tracks: readonly TimelineTrack[],
  state: LayoutState,
  metrics: Metrics = METRICS,
): Layout {
  const sorted = tracks.slice().sort((a, b) => a.sort - b.sort);
  const groups = new Map<string, TimelineTrack[]>();
  for (const track of sorted) {
    const key = groupKey(track);
    const list = groups.get(key);
    if (list) list.push(track);
    else groups.set(key, [track]);
  }
  const items: LayoutItem[] = [];
  const byTrack = new Map<string, TrackItem>();
  let y = 0;
  for (const [key, members] of groups) {
    const first = members[0]!;
    const collapsed = state.collapsedGroups.has(key);
    items.push({
      type: 'group',
      key,
      label: groupLabel(first),
      worker: first.worker,
      y,
      height: metrics.groupHeight,
      collapsed,
      trackIds: members.map((t) => t.id),
    });
    y += metrics.groupHeight;
    if (collapsed) continue;
    for (const track of members) {
      const isCounter = track.kind === 'counter';
      const depthRows = Math.max(1, track.max_depth + 1);
      const trackCollapsed = !isCounter && depthRows > 1 && state.collapsedTracks.has(track.id);
      const rows = isCounter ? 0 : trackCollapsed ? 1 : depthRows;
      const height = isCounter
        ? metrics.counterHeight
        : rows * metrics.rowHeight + 2 * metrics.trackPad;
      const item: TrackItem = {
        type: 'track',
        key: track.id,
        track,
        group: key,
        y,
        height,
        rows,
        collapsed: trackCollapsed,
        expandable: !isCounter && depthRows > 1,
      };
      items.push(item);
      byTrack.set(track.id, item);
      y += height;
    }
  }
  return { items, height: y, byTrack };
}

/** Index of the item covering y, or -1. */
export function itemIndexAt(layout: Layout, y: number): number {
  const items = layout.items;
  let lo = 0;
  let hi = items.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const item = items[mid]!;
    if (y < item.y) hi = mid - 1;
    else if (y >= item.y + item.height) lo = mid + 1;
    else return mid;
  }
  return -1;
}

export function itemAt(layout: Layout, y: number): LayoutItem | undefined {
  const i = itemIndexAt(layout, y);
  return i >= 0 ? layout.items[i] : undefined;
}

/** Items overlapping [top, bottom). */
export function itemsBetween(layout: Layout, top: number, bottom: number): LayoutItem[] {
  const out: LayoutItem[] = [];
  const items = layout.items;
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const item = items[mid]!;
    if (item.y + item.height <= top) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < items.length; i++) {
    const item = items[i]!;
    if (item.y >= bottom) break;
    out.push(item);
  }
  return out;
}

/** The depth row of a track item under y (relative to the layout), or -1. */
export function depthAt(item: TrackItem, y: number, metrics: Metrics = METRICS): number {
  if (item.rows === 0) return -1;
  const inside = y - item.y - metrics.trackPad;
  if (inside < 0) return -1;
  const depth = Math.floor(inside / metrics.rowHeight);
  return depth < item.rows ? depth : -1;
}

/** Top y of a depth row of a track item. */
export function rowTop(item: TrackItem, depth: number, metrics: Metrics = METRICS): number {
  return item.y + metrics.trackPad + depth * metrics.rowHeight;
}

/** Ids of the tracks (not groups) among items. */
export function trackIdsOf(items: readonly LayoutItem[]): string[] {
  const out: string[] = [];
  for (const item of items) if (item.type === 'track') out.push(item.track.id);
  return out;
}
