// What the timeline asks the server for: the window of the tracks in and near the view
// at the current width (lod.ts), debounced, cancelling requests that no longer serve,
// and the flow arrows; it keeps the frames that arrived until the view moves far away.

import type { TimelineTrack } from '../../api/types';
import { isAbort, describeError } from '../../api/client';
import { decodeWindow, type TrackFrame } from './frame';
import { itemsBetween, trackIdsOf, type Layout } from './layout';
import { planFetch, serves, type InFlight, type WindowPlan } from './lod';
import type { FlowArrow } from './render';
import type { TimelineOptions } from './timeline_types';
import type { Bounds, Viewport } from './viewport';

const DEBOUNCE_MS = 50;
const MAX_WAIT_MS = 160;
const MAX_ITEMS = 50_000;

/** What the fetcher reads of the timeline and tells it. */
export interface FetchHost {
  readonly origin: number;
  readonly bounds: Bounds;
  readonly tracks: TimelineTrack[];
  readonly element: HTMLElement;
  /** The view now: viewport, canvas size, layout and vertical scroll. */
  view(): { vp: Viewport; width: number; height: number; layout: Layout; scrollTop: number };
  /** Flows are fetched for the toggle, or for the selected event's arrows. */
  wantsFlows(): boolean;
  /** Something the status line shows changed. */
  statusChanged(): void;
  /** New frames arrived (before they are drawn). */
  framesArrived(): void;
  /** A window request ended and was not cancelled: draw. */
  windowDone(): void;
  /** New flow arrows arrived. */
  flowsArrived(): void;
}

type WindowFetch = InFlight & { controller: AbortController; at: number };

export class TimelineFetcher {
  readonly frames = new Map<string, TrackFrame>();
  flowFrame: { plan: WindowPlan; arrows: FlowArrow[]; truncated: boolean } | null = null;
  responses = 0;
  truncated = false;
  error: string | null = null;
  private readonly inflight: WindowFetch[] = [];
  private flowController: AbortController | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private firstScheduled: number | null = null;

  constructor(
    private readonly host: FetchHost,
    private readonly api: Pick<TimelineOptions, 'fetchWindow' | 'fetchFlows'>,
  ) {}

  /** Requests under way (windows and flows). */
  get pending(): number {
    return this.inflight.length + (this.flowController ? 1 : 0);
  }

  /** Fetches soon: after a quiet DEBOUNCE_MS, at most MAX_WAIT_MS after the first ask. */
  schedule(): void {
    const now = performance.now();
    this.firstScheduled ??= now;
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(DEBOUNCE_MS, this.firstScheduled + MAX_WAIT_MS - now));
    this.timer = setTimeout(() => {
      this.firstScheduled = null;
      this.run();
    }, wait);
  }

  dispose(): void {
    for (const f of this.inflight) f.controller.abort();
    this.inflight.length = 0;
    this.flowController?.abort();
    clearTimeout(this.timer);
    this.frames.clear();
  }

  /** Track ids between `above` and `below` screens around the vertical view. */
  private tracksNear(above: number, below: number): string[] {
    const { layout, scrollTop, height } = this.host.view();
    return trackIdsOf(itemsBetween(layout, scrollTop - height * above, scrollTop + height * below));
  }

  /** Drops the frames of tracks far from the view (a long scroll through many ranks
   * must not keep every frame it passed). */
  private pruneFrames(): void {
    const keep = new Set(this.tracksNear(2, 3));
    for (const id of this.frames.keys()) if (!keep.has(id)) this.frames.delete(id);
  }

  private run(): void {
    const { vp, width } = this.host.view();
    if (width <= 1) return;
    this.pruneFrames();
    // in and near the vertical view: half a screen above and below
    const wanted = this.tracksNear(0.5, 1.5);
    const fetch = planFetch(wanted, this.frames, this.inflight, vp, width, this.host.bounds);
    for (const stale of fetch.abort) {
      const at = this.inflight.indexOf(stale as WindowFetch);
      if (at >= 0) {
        this.inflight[at]?.controller.abort();
        this.inflight.splice(at, 1);
      }
    }
    if (fetch.ids.length) void this.runWindow(fetch.plan, fetch.ids);
    if (this.host.wantsFlows()) this.runFlows(fetch.plan, wanted);
    this.host.statusChanged();
  }

  private async runWindow(plan: WindowPlan, ids: string[]): Promise<void> {
    const origin = this.host.origin;
    const controller = new AbortController();
    const entry = { plan, ids: new Set(ids), controller, at: performance.now() };
    this.inflight.push(entry);
    this.host.statusChanged();
    try {
      const req = { t0: plan.t0 + origin, t1: plan.t1 + origin, width: plan.width, tracks: ids };
      const resp = await this.api.fetchWindow({ ...req, maxItems: MAX_ITEMS }, controller.signal);
      if (controller.signal.aborted || !resp) return;
      const frames = decodeWindow(resp, origin, plan.level);
      for (const [id, frame] of frames) this.frames.set(id, frame);
      this.truncated = resp.truncated;
      this.error = null;
      this.responses += 1;
      this.host.element.dataset.lastFetchMs = (performance.now() - entry.at).toFixed(0);
      this.host.framesArrived();
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      this.error = describeError(error);
    } finally {
      const at = this.inflight.indexOf(entry);
      if (at >= 0) this.inflight.splice(at, 1);
      this.host.statusChanged();
      if (!controller.signal.aborted) {
        this.host.windowDone();
        this.schedule();
      }
    }
  }

  private runFlows(plan: WindowPlan, wanted: string[]): void {
    const { tracks, origin } = this.host;
    const slices = wanted.filter((id) => tracks.find((t) => t.id === id)?.kind !== 'counter');
    if (this.flowFrame && serves(this.flowFrame.plan, this.host.view().vp, plan.level)) return;
    if (this.flowController) return;
    const controller = new AbortController();
    this.flowController = controller;
    const all = tracks.filter((t) => t.kind !== 'counter').map((t) => t.id);
    const req = {
      t0: plan.t0 + origin,
      t1: plan.t1 + origin,
      tracks: slices.length === all.length ? [] : all,
    };
    this.api
      .fetchFlows(req, controller.signal)
      .then((resp) => {
        if (!resp || controller.signal.aborted) return;
        const f = resp.flows;
        const arrows: FlowArrow[] = [];
        for (let i = 0; i < f.id.length; i++) {
          arrows.push({
            srcTrack: f.src_track[i] ?? '',
            srcTs: (f.src_ts[i] ?? 0) - origin,
            srcDepth: f.src_depth[i] ?? 0,
            srcRow: f.src_row[i] ?? -1,
            dstRow: f.dst_row[i] ?? -1,
            dstTrack: f.dst_track[i] ?? '',
            dstTs: (f.dst_ts[i] ?? 0) - origin,
            dstDepth: f.dst_depth[i] ?? 0,
          });
        }
        this.flowFrame = { plan, arrows, truncated: resp.truncated };
        this.host.element.dataset.flows = String(arrows.length);
        this.host.flowsArrived();
      })
      .catch((error: unknown) => {
        if (!isAbort(error)) this.error = describeError(error);
      })
      .finally(() => {
        if (this.flowController === controller) this.flowController = null;
        this.host.statusChanged();
        if (!controller.signal.aborted && this.host.wantsFlows()) this.schedule();
      });
  }
}
