// The Trace page's "Critical path" toggle: the chain of work that set each step's length
// drawn over the tracks (path_model, render_path), from `critical_path` for one worker or
// `run_critical_path` when several are shown (the ranks joined at their collectives: the
// path crosses from rank to rank), with its length by kind said beside the toggle, its
// legend and ◀ ▶ to step along it (path_tools): turning it on brings the first step's
// whole path into view.

import { describeError, isAbort } from '../../api/client';
import type { CriticalPathView, PathSegment, TracksResponse } from '../../api/types';
import { kindShares, PATH_KIND_LABEL } from '../../components/critical_path';
import { formatDuration, formatPercent } from '../../components/format';
import { pathMarks, type PathMark } from './path_model';
import { PathTools } from './path_tools';
import type { TracePageHost } from './page_types';

export class CriticalPathLayer {
  private on = false;
  private controller: AbortController | null = null;
  private readonly status: HTMLElement;
  private readonly tools: PathTools;

  constructor(
    private readonly host: TracePageHost,
    private readonly tracks: () => TracksResponse | null,
    toolbar: { pathStatus: HTMLElement; pathTools: HTMLElement },
  ) {
    this.status = toolbar.pathStatus;
    this.tools = new PathTools(toolbar.pathTools, (mark) => this.reveal(mark));
  }

  toggle(on: boolean): void {
    this.on = on;
    void this.apply();
  }

  /** After new tracks were drawn (other workers): the path again, if it is on. */
  refresh(): void {
    if (this.on) void this.apply();
  }

  dispose(): void {
    this.controller?.abort();
  }

  private async apply(): Promise<void> {
    this.controller?.abort();
    const timeline = this.host.timeline();
    const tracks = this.tracks();
    if (!this.on || !timeline || !tracks) {
      timeline?.setPath([]);
      this.status.textContent = '';
      this.tools.clear();
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    const signal = AbortSignal.any([controller.signal, this.host.ctx.signal]);
    this.status.textContent = 'Critical path…';
    try {
      const { view, segments } = await this.fetch(signal);
      if (signal.aborted || this.host.timeline() !== timeline) return;
      const marks = pathMarks(segments, tracks, this.host.origin(), this.host.multi());
      timeline.setPath(marks);
      this.status.textContent = summary(view);
      this.status.title = view.assumptions.join('\n');
      this.tools.show(marks, view.steps[0]?.step_us ?? view.step_us); // step 1 into view
    } catch (error) {
      if (isAbort(error) || signal.aborted) return;
      this.status.textContent = `Critical path: ${describeError(error)}`;
    }
  }

  /** A segment into view: the timeline on screen, its track scrolled to, its time zoomed. */
  private reveal(mark: PathMark): void {
    const timeline = this.host.timeline();
    if (!timeline) return;
    timeline.element.scrollIntoView({ block: 'nearest' });
    timeline.zoomTo(mark.start, mark.dur, mark.trackId);
  }

  private async fetch(
    signal: AbortSignal,
  ): Promise<{ view: CriticalPathView; segments: PathSegment[] }> {
    const { run, span, worker, workers } = this.host.keyParams();
    const shown = workers ? workers.split(',') : [worker ?? this.host.ctx.key.worker];
    if (shown.length > 1) {
      const view = await this.host.ctx.api.getReady('run_critical_path', { run, span }, signal);
      return { view, segments: view.segments };
    }
    const one = shown[0] ?? this.host.ctx.key.worker;
    const view = await this.host.ctx.api.getReady(
      'critical_path',
      { run, span, worker: one },
      signal,
    );
    // One worker's route does not name it: its segments are that worker's.
    return { view, segments: view.segments.map((s) => ({ ...s, worker: one })) };
  }
}

/** "Critical path: mean step 43.9 ms · CPU 96 % · Collective transfer 2 %". */
function summary(view: CriticalPathView): string {
  const top = kindShares(view.by_kind)
    .sort((a, b) => b.us - a.us)
    .slice(0, 3)
    .map((s) => `${PATH_KIND_LABEL[s.kind] ?? s.kind} ${formatPercent(s.pct, 0)}`);
  const cut = view.segments_total > view.segments.length ? ' (first segments)' : '';
  return `Critical path${cut}: mean step ${formatDuration(view.step_us)} · ${top.join(' · ')}`;
}
