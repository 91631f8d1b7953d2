// The critical path drawn over the tracks: each mark a band of its kind's colour across
// its track, under a solid stripe at the track's foot, so the chain reads from track to
// track (host, stream, another rank) along the time axis.

import { pathKindColor } from '../../components/critical_path';
import type { TrackItem } from './layout';
import type { PathMark } from './path_model';

export interface PathDraw {
  ctx: CanvasRenderingContext2D;
  width: number;
  scrollTop: number;
  byTrack: ReadonlyMap<string, TrackItem>;
  x: (t: number) => number;
}

export function drawPath(d: PathDraw, marks: readonly PathMark[]): void {
  const { ctx, width } = d;
  for (const m of marks) {
    const item = d.byTrack.get(m.trackId);
    if (!item) continue;
    const x0 = d.x(m.start);
    const x1 = d.x(m.start + m.dur);
    if (x1 < 0 || x0 > width) continue;
    const left = Math.max(0, x0);
    const w = Math.max(1, Math.min(width, x1) - left);
    const y = item.y - d.scrollTop;
    ctx.fillStyle = pathKindColor(m.kind);
    ctx.globalAlpha = 0.22;
    ctx.fillRect(left, y + 1, w, item.height - 2);
    ctx.globalAlpha = 1;
    ctx.fillRect(left, y + item.height - 4, w, 3);
  }
  ctx.globalAlpha = 1;
}
