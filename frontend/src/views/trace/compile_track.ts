// The Trace page's compile track: the phases of the run's TORCH_TRACE compile logs
// (the `compile` route's `events`: Dynamo, AOTAutograd, Inductor, code generation, ...)
// drawn as one more track above each shown worker's tracks, on the trace's clock (the
// route places each log on its worker's trace). The server's trace routes know nothing of
// it: the page adds the track to the track list, answers its windows here, and shows a
// selected phase's compile from the route's JSON.

import type {
  Compile,
  CompileEvent,
  CompileResponse,
  TracksResponse,
  WindowResponse,
  TrackWindow,
} from '../../api/types';
import { EVENT_FLAG } from '../../api/types';
import { isAbort } from '../../api/client';
import { h } from '../../components/dom';
import { sourceAnchor } from '../../components/editor_links';
import { formatDuration } from '../../components/format';
import type { ViewContext } from '../types';

export const COMPILE_TRACK = 'compile';
const PROCESS = 'torch.compile (TORCH_TRACE)';

/** A compile phase selected on the track (what the timeline hands the page). */
export interface CompilePick {
  trackId: string;
  row: number;
}

/** The run's `compile` view when the run has compile logs, else (or when it fails) null:
 *  the trace is shown without the track, never held up by it. */
export async function loadCompileView(ctx: ViewContext): Promise<CompileResponse | null> {
  if (!ctx.runViews.includes('compile')) return null;
  try {
    return await ctx.api.getReady('compile', { run: ctx.key.run, span: ctx.key.span }, ctx.signal);
  } catch (error) {
    if (!isAbort(error)) console.warn('kinetoscope: no compile track:', error);
    return null;
  }
}

export class CompileTrack {
  /** Per track id: its worker's events, on the page's time axis (file or epoch µs). */
  private readonly byTrack = new Map<string, { worker: string | null; events: CompileEvent[] }>();

  constructor(
    private readonly view: CompileResponse,
    tracks: TracksResponse,
    shown: readonly string[],
  ) {
    const epoch = tracks.time_base === 'epoch';
    for (const worker of shown) {
      const mine = view.events.filter((e) => e.worker === worker);
      if (mine.length === 0) continue;
      const origin = epoch ? 0 : this.origin(worker);
      const events = mine.map((e) => ({ ...e, start_us: e.start_us - origin }));
      this.byTrack.set(epoch ? `${worker}:${COMPILE_TRACK}` : COMPILE_TRACK, {
        worker: epoch ? worker : null,
        events,
      });
    }
  }

  /** The trace's time origin of a worker's log (log epoch µs = trace ts + origin). */
  private origin(worker: string): number {
    return this.view.alignments.find((a) => a.worker === worker)?.time_origin_us ?? 0;
  }

  get empty(): boolean {
    return this.byTrack.size === 0;
  }

  owns(id: string): boolean {
    return this.byTrack.has(id);
  }

  /** The track list with a compile track first in each worker's tracks. */
  withTracks(tracks: TracksResponse): TracksResponse {
    const added = [...this.byTrack].map(([id, { worker, events }]) => {
      const serverTrack = tracks.tracks.find((t) => t.worker === worker);
      const at = serverTrack ? serverTrack.label.indexOf(' · ') : -1;
      const prefix = serverTrack && at >= 0 ? serverTrack.label.slice(0, at + 3) : '';
      return {
        id,
        worker,
        kind: 'compile',
        label: `${prefix}compile phases`,
        process: PROCESS,
        pid: null,
        tid: null,
        device: null,
        stream: null,
        sort: -1,
        max_depth: Math.max(0, ...events.map((e) => e.depth)),
        event_count: events.length,
        counter: null,
      };
    });
    return { ...tracks, tracks: [...added, ...tracks.tracks] };
  }

  /** The windows of its tracks among `ids`, their names after `names` (appended). */
  windows(ids: readonly string[], t0: number, t1: number, names: string[]): TrackWindow[] {
    const out: TrackWindow[] = [];
    for (const id of ids) {
      const entry = this.byTrack.get(id);
      if (!entry) continue;
      const cols = { row: [], name: [], start: [], dur: [], depth: [], flags: [] } as Record<
        'row' | 'name' | 'start' | 'dur' | 'depth' | 'flags',
        number[]
      >;
      entry.events.forEach((e, i) => {
        if (e.start_us + e.dur_us < t0 || e.start_us >= t1) return;
        let code = names.indexOf(e.name);
        if (code < 0) code = names.push(e.name) - 1;
        cols.row.push(-(i + 1)); // no trace row: the page tells compile picks by their track
        cols.name.push(code);
        cols.start.push(e.start_us);
        cols.dur.push(e.dur_us);
        cols.depth.push(e.depth);
        cols.flags.push(e.dur_us > 0 ? 0 : EVENT_FLAG.instant);
      });
      out.push({ id, worker: entry.worker, events: cols, blocks: null, counter: null });
    }
    return out;
  }

  /** A window answer for compile tracks alone (no server request needed). */
  answer(req: { t0: number; t1: number; width: number; tracks: string[] }): WindowResponse {
    const names: string[] = [];
    const tracks = this.windows(req.tracks, req.t0, req.t1, names);
    const usPerPx = (req.t1 - req.t0) / Math.max(req.width, 1);
    return {
      time_base: 'file',
      t0: req.t0,
      t1: req.t1,
      width: req.width,
      min_px: 1,
      us_per_px: usPerPx,
      exact_min_us: usPerPx,
      bucket_us: usPerPx,
      tracks,
      names,
      item_count: tracks.reduce((n, t) => n + (t.events?.row.length ?? 0), 0),
      truncated: false,
    };
  }

  /** The server's answer with the compile tracks' windows added. */
  merged(resp: WindowResponse, ids: readonly string[]): WindowResponse {
    const names = [...resp.names];
    const extra = this.windows(ids, resp.t0, resp.t1, names);
    return { ...resp, names, tracks: [...resp.tracks, ...extra] };
  }

  /** What the details pane shows of a selected phase: the phase and its compile. */
  details(pick: CompilePick): HTMLElement {
    const event = this.byTrack.get(pick.trackId)?.events[-pick.row - 1];
    if (!event) return h('p', { class: 'ks-muted' }, 'This compile phase is no longer shown.');
    const c = this.view.compiles.find(
      (x) => x.compile_id === event.compile_id && x.rank === event.rank,
    );
    return h(
      'div',
      { class: 'ks-trace-compile-details', testid: 'trace-compile-details' },
      h('h4', null, `${event.name} · compile ${event.compile_id ?? '?'}`),
      h('p', null, `${formatDuration(event.dur_us)} (a phase of torch.compile, from its log)`),
      c ? compileFacts(c) : null,
    );
  }
}

function compileFacts(c: Compile): HTMLElement {
  const where = `${c.frame ?? '?'} (${c.file ?? '?'}:${c.line ?? '?'})`;
  return h(
    'dl',
    { class: 'ks-kv' },
    h('dt', null, 'Frame'),
    h('dd', null, sourceAnchor(c.file, c.line, where, 'trace-compile-frame-link') ?? where),
    h('dt', null, 'Compile'),
    h('dd', null, `${formatDuration(c.dur_us)} · ${c.status} · cache ${c.cache.state ?? '—'}`),
    h('dt', null, 'Why'),
    h('dd', null, c.reason ?? 'first compile of this frame'),
  );
}
