// The critical path on the Trace page: each segment of a `critical_path` (one worker) or
// `run_critical_path` (several, on one time axis) answer placed on the track it ran on
// (its worker and its "pid/tid" lane), in the timeline's time (µs from its origin).

import type { PathSegment, TracksResponse } from '../../api/types';

export interface PathMark {
  trackId: string;
  /** µs from the timeline's origin. */
  start: number;
  dur: number;
  kind: string;
  name: string;
}

/** The key a segment and a track share: worker (when several) and the trace's pid/tid. */
function laneKey(worker: string | null, pid: string | null, tid: string | null): string {
  return `${worker ?? ''}\u0000${pid ?? ''}/${tid ?? ''}`;
}

/**
 * Marks for the segments on the tracks shown; `multi`: several workers, whose segment
 * times are their own file's and are moved by their worker's offset (epoch time).
 * Segments of a worker or lane not shown are left out.
 */
export function pathMarks(
  segments: readonly PathSegment[],
  tracks: TracksResponse,
  origin: number,
  multi: boolean,
): PathMark[] {
  const byLane = new Map<string, string>();
  for (const t of tracks.tracks) {
    if (t.kind === 'counter' || t.kind === 'python') continue;
    const key = laneKey(multi ? t.worker : null, t.pid, t.tid);
    if (!byLane.has(key)) byLane.set(key, t.id);
  }
  const offsets = new Map(tracks.workers.map((w) => [w.worker ?? '', w.offset_us]));
  const out: PathMark[] = [];
  for (const s of segments) {
    const [pid, tid] = splitLane(s.lane);
    const trackId = byLane.get(laneKey(multi ? s.worker : null, pid, tid));
    if (trackId === undefined) continue;
    const offset = multi ? (offsets.get(s.worker) ?? 0) : 0;
    out.push({
      trackId,
      start: s.start_us + offset - origin,
      dur: s.dur_us,
      kind: s.kind,
      name: s.name,
    });
  }
  return out;
}

function splitLane(lane: string): [string, string] {
  const at = lane.indexOf('/');
  return at < 0 ? [lane, ''] : [lane.slice(0, at), lane.slice(at + 1)];
}
