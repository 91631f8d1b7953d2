// The timeline component: a labels column (DOM, virtualized, collapsible groups), a time
// axis and a 2D canvas of the tracks in view. It asks the server only for the visible
// window at the current width (lod.ts), debounced, cancelling requests that no longer
// serve, and keeps drawing the previous frame until the new one arrives.

import type { TimelineTrack, TracksResponse, WindowResponse, FlowsResponse } from '../../api/types';
import { isAbort, describeError } from '../../api/client';
import { h, replaceChildren } from '../../components/dom';
import { formatBytes } from '../../components/format';
import { axisTicks, formatSpan, formatTimeAt } from './axis';
import { decodeWindow, type SliceFrame, type TrackFrame } from './frame';
import { flowsToDraw } from './flows';
import { counterIndexAt, hitSlice, indexOfRow } from './hit';
import { isTypingTarget, motionKeyOf, motionStep, wheelZoomFactor, type MotionKey } from './keys';
import {
  buildLayout,
  depthAt,
  initiallyCollapsedTracks,
  itemAt,
  itemsBetween,
  METRICS,
  trackIdsOf,
  trackLabel,
  type Layout,
  type LayoutItem,
  type TrackItem,
} from './layout';
import { planFetch, serves, type InFlight, type WindowPlan } from './lod';
import {
  AXIS_STEPS_H,
  AXIS_TICKS_H,
  drawAxis,
  drawTracks,
  readPalette,
  type AreaGeom,
  type FlowArrow,
  type HoverGeom,
  type Palette,
  type SelectedGeom,
  type StepMark,
} from './render';
import {
  clampViewport,
  panBy,
  panByPx,
  revealRange,
  fitRange,
  usPerPx,
  xToTime,
  zoomAround,
  type Bounds,
  type Viewport,
} from './viewport';

export const LABEL_WIDTH = 240;

/** Our document, and TensorBoard's around our iframe when we may reach it. */
export function keyDocuments(): Document[] {
  const docs = [document];
  try {
    // reading a cross-origin parent's document throws
    if (window.parent !== window) docs.push(window.parent.document);
  } catch {
    // a cross-origin parent
  }
  return docs;
}
const DEBOUNCE_MS = 50;
const MAX_WAIT_MS = 160;
const MAX_ITEMS = 50_000;
const DRAG_THRESHOLD_PX = 4;

export interface WindowRequest {
  /** Absolute µs, in the tracks' time base. */
  t0: number;
  t1: number;
  width: number;
  tracks: string[];
  maxItems: number;
}

export interface FlowsRequest {
  t0: number;
  t1: number;
  tracks: string[];
}

/** An event the user selected, in relative µs. */
export interface SelectedEvent {
  trackId: string;
  worker: string | null;
  row: number;
  depth: number;
  start: number;
  dur: number;
  name: string;
}

export interface AreaSelection {
  t0: number;
  t1: number;
  trackIds: string[];
}

export interface TimelineOptions {
  tracks: TracksResponse;
  fetchWindow: (req: WindowRequest, signal: AbortSignal) => Promise<WindowResponse | null>;
  fetchFlows: (req: FlowsRequest, signal: AbortSignal) => Promise<FlowsResponse | null>;
  onSelect: (event: SelectedEvent | null) => void;
  onArea: (area: AreaSelection | null) => void;
  /** Called after a response was drawn. */
  onFrame?: () => void;
  /** Called (debounced) when the visible window settles; absolute µs. */
  onViewport?: (t0: number, t1: number) => void;
  initial?: Viewport;
  isDark: () => boolean;
}

interface Drag {
  mode: 'pan' | 'area';
  x0: number;
  y0: number;
  lastX: number;
  lastY: number;
  moved: boolean;
  vp0: Viewport;
  pointerId: number;
}

interface HoverInfo {
  geom: HoverGeom | null;
  text: string[];
}

export class Timeline {
  readonly element: HTMLElement;
  readonly origin: number;
  readonly bounds: Bounds;

  private readonly opts: TimelineOptions;
  private readonly tracks: TimelineTrack[];
  private readonly steps: StepMark[];
  private readonly collapsedGroups = new Set<string>();
  private readonly collapsedTracks: Set<string>;
  private layout: Layout;

  private vp: Viewport;
  private width = 1;
  private height = 1;
  private dpr = 1;

  private readonly frames = new Map<string, TrackFrame>();
  private readonly inflight: (InFlight & { controller: AbortController; at: number })[] = [];
  private fetchTimer: ReturnType<typeof setTimeout> | undefined;
  private firstScheduled: number | null = null;
  private responses = 0;
  private truncated = false;
  private error: string | null = null;

  private flowsOn = false;
  private flowFrame: { plan: WindowPlan; arrows: FlowArrow[]; truncated: boolean } | null = null;
  private flowController: AbortController | null = null;

  private selected: SelectedGeom | null = null;
  private hover: HoverInfo | null = null;
  private area: AreaGeom | null = null;
  private selectMode = false;

  private drag: Drag | null = null;
  private mouseX: number | null = null;
  private readonly held = new Set<MotionKey>();
  private heldSince = 0;
  private motionFrame = 0;
  private lastMotion = 0;
  private drawFrame = 0;
  private viewportTimer: ReturnType<typeof setTimeout> | undefined;
  private palette: Palette | null = null;

  private readonly axisCanvas: HTMLCanvasElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly scroller: HTMLElement;
  private readonly content: HTMLElement;
  private readonly labels: HTMLElement;
  private readonly body: HTMLElement;
  private readonly tooltip: HTMLElement;
  private readonly status: HTMLElement;
  private readonly resize: ResizeObserver;
  private readonly cleanups: (() => void)[] = [];

  constructor(opts: TimelineOptions) {
    this.opts = opts;
    const t = opts.tracks;
    this.origin = t.start_us;
    this.bounds = { start: 0, end: Math.max(t.end_us - t.start_us, 1) };
    this.tracks = t.tracks;
    this.collapsedTracks = initiallyCollapsedTracks(t.tracks);
    this.steps = t.steps
      .map((s) => ({ start: s.start_us - this.origin, end: s.end_us - this.origin, name: s.name }))
      .sort((a, b) => a.start - b.start);
    if (t.workers.length > 1) {
      // several ranks: one step band row per rank would not fit; keep the first rank's
      const first = t.steps[0]?.worker ?? null;
      this.steps = this.steps.filter((_, i) => t.steps[i]?.worker === first);
    }
    this.vp = clampViewport(opts.initial ?? { ...this.bounds }, this.bounds);
    this.layout = buildLayout(this.tracks, this.layoutState());

    this.axisCanvas = h('canvas', { class: 'ks-tl-axis', testid: 'trace-axis' });
    this.canvas = h('canvas', {
      class: 'ks-tl-canvas',
      testid: 'trace-canvas',
      attrs: {
        'aria-label': 'Trace timeline: W/S zoom, A/D pan, F zooms to the selection',
        role: 'img',
        tabindex: -1,
      },
    });
    this.labels = h('div', { class: 'ks-tl-labels', testid: 'trace-labels' });
    this.content = h('div', { class: 'ks-tl-content' }, this.labels);
    this.scroller = h('div', { class: 'ks-tl-scroll' }, this.content);
    this.tooltip = h('div', { class: 'ks-tl-tooltip', role: 'tooltip' });
    this.tooltip.hidden = true;
    this.status = h('div', { class: 'ks-tl-status', testid: 'trace-status', role: 'status' });
    this.body = h('div', { class: 'ks-tl-body' }, this.scroller, this.canvas, this.tooltip);
    const corner = h(
      'div',
      { class: 'ks-tl-corner' },
      h('span', { class: 'ks-tl-corner-title' }, 'Tracks'),
      h(
        'button',
        {
          class: 'ks-tl-mini',
          title: 'Expand every group and track',
          attrs: { type: 'button' },
          on: { click: () => this.setAllCollapsed(false) },
        },
        'Expand all',
      ),
      h(
        'button',
        {
          class: 'ks-tl-mini',
          title: 'Collapse every group',
          attrs: { type: 'button' },
          on: { click: () => this.setAllCollapsed(true) },
        },
        'Collapse',
      ),
    );
    const axisRow = h(
      'div',
      {
        class: 'ks-tl-head',
        style: `--ks-tl-axis-h:${this.steps.length ? AXIS_TICKS_H + AXIS_STEPS_H : AXIS_TICKS_H}px`,
      },
      corner,
      this.axisCanvas,
    );
    this.element = h(
      'div',
      { class: 'ks-tl', testid: 'trace-timeline', style: `--ks-tl-label-w:${LABEL_WIDTH}px` },
      axisRow,
      this.body,
      this.status,
    );

    this.scroller.addEventListener('scroll', () => {
      this.renderLabels();
      this.drawNow();
      this.scheduleFetch();
    });
    this.resize = new ResizeObserver(() => this.onResize());
    this.resize.observe(this.body);
    this.bindPointer();
    this.bindKeys();
    this.renderLabels();
    this.updateStatus();
  }

  // ----- public -----

  get viewport(): Viewport {
    return this.vp;
  }

  setViewport(vp: Viewport): void {
    this.vp = clampViewport(vp, this.bounds);
    this.afterViewportChange();
  }

  resetZoom(): void {
    this.setViewport({ ...this.bounds });
  }

  /** All flows in view (on), or only the selected event's (off; all when few). */
  setFlows(on: boolean): void {
    this.flowsOn = on;
    this.requestDraw();
    this.scheduleFetch();
    this.scheduleFetch();
  }

  setSelectMode(on: boolean): void {
    this.selectMode = on;
    this.canvas.classList.toggle('ks-tl-selecting', on);
  }

  /** Selects an event (relative µs), scrolls its track into view and reveals it. */
  select(event: SelectedEvent | null, reveal = true): void {
    this.selected = event
      ? {
          trackId: event.trackId,
          row: event.row,
          depth: event.depth,
          start: event.start,
          dur: event.dur,
        }
      : null;
    this.element.dataset.selectedRow = event ? String(event.row) : '';
    if (event && reveal) {
      this.revealTrack(event.trackId, event.depth);
      this.vp = revealRange(this.vp, event.start, event.dur, this.bounds, 2 / this.width);
      this.afterViewportChange();
    } else {
      this.requestDraw();
      if (event) this.scheduleFetch(); // its flows
    }
    this.opts.onSelect(event);
  }

  /** Zooms to an event: [start, start + dur] fills most of the width. */
  zoomTo(start: number, dur: number): void {
    this.setViewport(fitRange(start, start + Math.max(dur, 1), this.bounds, 0.2));
  }

  clearArea(): void {
    this.area = null;
    this.requestDraw();
    this.opts.onArea(null);
  }

  trackOf(id: string): TimelineTrack | undefined {
    return this.tracks.find((t) => t.id === id);
  }

  dispose(): void {
    this.resize.disconnect();
    for (const fn of this.cleanups) fn();
    for (const f of this.inflight) f.controller.abort();
    this.inflight.length = 0;
    this.flowController?.abort();
    clearTimeout(this.fetchTimer);
    clearTimeout(this.viewportTimer);
    cancelAnimationFrame(this.drawFrame);
    cancelAnimationFrame(this.motionFrame);
    this.frames.clear();
    this.element.remove();
  }

  /** Call when the theme changes. */
  themeChanged(): void {
    this.palette = null;
    this.drawNow();
  }

  // ----- layout and labels -----

  private layoutState(): { collapsedGroups: Set<string>; collapsedTracks: Set<string> } {
    return { collapsedGroups: this.collapsedGroups, collapsedTracks: this.collapsedTracks };
  }

  private relayout(): void {
    this.layout = buildLayout(this.tracks, this.layoutState());
    this.content.style.height = `${this.layout.height}px`;
    this.renderLabels();
    this.drawNow();
    this.scheduleFetch();
  }

  private setAllCollapsed(collapsed: boolean): void {
    this.collapsedGroups.clear();
    if (collapsed) {
      for (const item of this.layout.items)
        if (item.type === 'group') this.collapsedGroups.add(item.key);
    } else {
      this.collapsedTracks.clear();
    }
    this.relayout();
  }

  private toggleGroup(key: string): void {
    if (this.collapsedGroups.has(key)) this.collapsedGroups.delete(key);
    else this.collapsedGroups.add(key);
    this.relayout();
  }

  private toggleTrack(id: string): void {
    if (this.collapsedTracks.has(id)) this.collapsedTracks.delete(id);
    else this.collapsedTracks.add(id);
    this.relayout();
  }

  private revealTrack(trackId: string, depth: number): void {
    let item = this.layout.byTrack.get(trackId);
    if (!item) {
      const track = this.trackOf(trackId);
      if (!track) return;
      for (const group of this.layout.items) {
        if (group.type === 'group' && group.trackIds.includes(trackId))
          this.collapsedGroups.delete(group.key);
      }
      if (depth > 0) this.collapsedTracks.delete(trackId);
      this.relayout();
      item = this.layout.byTrack.get(trackId);
      if (!item) return;
    } else if (item.collapsed && depth > 0) {
      this.collapsedTracks.delete(trackId);
      this.relayout();
      item = this.layout.byTrack.get(trackId);
      if (!item) return;
    }
    const top = item.y + METRICS.trackPad + Math.max(0, depth) * METRICS.rowHeight;
    const view = this.scroller.clientHeight;
    if (top < this.scroller.scrollTop || top + METRICS.rowHeight > this.scroller.scrollTop + view) {
      this.scroller.scrollTop = Math.max(0, top - view / 3);
    }
  }

  private renderLabels(): void {
    this.content.style.height = `${this.layout.height}px`;
    const top = this.scroller.scrollTop;
    const view = this.scroller.clientHeight || 600;
    const items = itemsBetween(this.layout, top - view / 2, top + view * 1.5);
    replaceChildren(
      this.labels,
      items.map((item) => this.labelOf(item)),
    );
  }

  private labelOf(item: LayoutItem): HTMLElement {
    const style = `top:${item.y}px;height:${item.height}px`;
    if (item.type === 'group') {
      return h(
        'button',
        {
          class: `ks-tl-group${item.collapsed ? ' ks-collapsed' : ''}`,
          style,
          title: `${item.label} — click to ${item.collapsed ? 'expand' : 'collapse'}`,
          dataset: { group: item.key },
          testid: 'trace-group-label',
          attrs: { type: 'button', 'aria-expanded': String(!item.collapsed) },
          on: { click: () => this.toggleGroup(item.key) },
        },
        h('span', { class: 'ks-tl-chevron' }, item.collapsed ? '▸' : '▾'),
        h('span', { class: 'ks-tl-group-name' }, item.label),
        h('span', { class: 'ks-tl-count' }, String(item.trackIds.length)),
      );
    }
    const track = item.track;
    const counter = track.counter;
    const extra = counter
      ? counter.unit === 'bytes'
        ? `max ${formatBytes(counter.max)}`
        : counter.unit === 'fraction'
          ? '0–100 %'
          : `max ${counter.max}`
      : null;
    return h(
      'div',
      {
        class: `ks-tl-track ks-tl-kind-${track.kind}`,
        style,
        title: track.label,
        testid: 'trace-track-label',
        dataset: { track: track.id, rows: String(item.rows) },
      },
      item.expandable
        ? h(
            'button',
            {
              class: 'ks-tl-fold',
              title: item.collapsed
                ? `Show all ${track.max_depth + 1} rows`
                : 'Show only the top row',
              attrs: { type: 'button', 'aria-expanded': String(!item.collapsed) },
              on: { click: () => this.toggleTrack(track.id) },
            },
            item.collapsed ? '⊞' : '⊟',
          )
        : h('span', { class: 'ks-tl-fold-space' }),
      h('span', { class: 'ks-tl-track-name' }, trackLabel(track)),
      extra ? h('span', { class: 'ks-tl-track-extra' }, extra) : null,
    );
  }

  // ----- sizing and drawing -----

  private onResize(): void {
    const rect = this.body.getBoundingClientRect();
    const scrollbar = this.scroller.offsetWidth - this.scroller.clientWidth;
    const width = Math.max(1, Math.floor(rect.width - LABEL_WIDTH - scrollbar));
    const height = Math.max(1, Math.floor(rect.height));
    const dpr = window.devicePixelRatio || 1;
    if (width === this.width && height === this.height && dpr === this.dpr) return;
    this.width = width;
    this.height = height;
    this.dpr = dpr;
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    const axisH = this.steps.length ? AXIS_TICKS_H + AXIS_STEPS_H : AXIS_TICKS_H;
    this.axisCanvas.style.width = `${width}px`;
    this.axisCanvas.style.height = `${axisH}px`;
    this.axisCanvas.width = Math.round(width * dpr);
    this.axisCanvas.height = Math.round(axisH * dpr);
    this.renderLabels();
    this.drawNow();
    this.scheduleFetch();
  }

  private requestDraw(): void {
    if (this.drawFrame) return;
    this.drawFrame = requestAnimationFrame(() => {
      this.drawFrame = 0;
      this.drawNow();
    });
  }

  private drawNow(): void {
    if (this.drawFrame) {
      cancelAnimationFrame(this.drawFrame);
      this.drawFrame = 0;
    }
    if ((window.devicePixelRatio || 1) !== this.dpr) {
      this.onResize(); // moved to a screen of another density, or the page was zoomed
      return;
    }
    const ctx = this.canvas.getContext('2d');
    const axis = this.axisCanvas.getContext('2d');
    if (!ctx || !axis) return;
    this.palette ??= readPalette(this.element);
    const started = performance.now();
    const ticks = axisTicks(this.vp, this.width);
    const top = this.scroller.scrollTop;
    const dark = this.opts.isDark();
    axis.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    drawAxis(
      axis,
      this.width,
      this.axisCanvas.height / this.dpr,
      this.vp,
      ticks,
      this.steps,
      this.palette,
      this.area,
    );
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    const frame = this.flowFrame;
    const flows = frame ? flowsToDraw(frame.arrows, this.selected, this.flowsOn) : [];
    drawTracks({
      ctx,
      width: this.width,
      height: this.height,
      vp: this.vp,
      layout: this.layout,
      scrollTop: top,
      frames: this.frames,
      palette: this.palette,
      dark,
      ticks,
      steps: this.steps,
      selected: this.selected,
      hover: this.hover?.geom ?? null,
      area: this.area,
      flows,
      items: itemsBetween(this.layout, top, top + this.height),
    });
    const ds = this.element.dataset;
    ds.flowsDrawn = String(flows.length);
    ds.t0 = String(this.vp.start + this.origin);
    ds.t1 = String(this.vp.end + this.origin);
    ds.width = String(this.width);
    ds.drawMs = (performance.now() - started).toFixed(1);
  }

  // ----- fetching -----

  private afterViewportChange(): void {
    this.requestDraw();
    this.scheduleFetch();
    this.hideTooltip();
    clearTimeout(this.viewportTimer);
    this.viewportTimer = setTimeout(() => {
      this.opts.onViewport?.(this.vp.start + this.origin, this.vp.end + this.origin);
    }, 400);
  }

  private scheduleFetch(): void {
    const now = performance.now();
    this.firstScheduled ??= now;
    clearTimeout(this.fetchTimer);
    const wait = Math.max(0, Math.min(DEBOUNCE_MS, this.firstScheduled + MAX_WAIT_MS - now));
    this.fetchTimer = setTimeout(() => {
      this.firstScheduled = null;
      this.runFetch();
    }, wait);
  }

  /** Track ids in and near the vertical view (half a screen above and below). */
  private wantedTracks(): string[] {
    const top = this.scroller.scrollTop;
    const view = this.height;
    return trackIdsOf(itemsBetween(this.layout, top - view / 2, top + view * 1.5));
  }

  /** Drops the frames of tracks far from the view (a long scroll through many ranks
   * must not keep every frame it passed). */
  private pruneFrames(): void {
    const top = this.scroller.scrollTop;
    const keep = new Set(
      trackIdsOf(itemsBetween(this.layout, top - this.height * 2, top + this.height * 3)),
    );
    for (const id of this.frames.keys()) if (!keep.has(id)) this.frames.delete(id);
  }

  private runFetch(): void {
    if (this.width <= 1) return;
    this.pruneFrames();
    const wanted = this.wantedTracks();
    const fetch = planFetch(wanted, this.frames, this.inflight, this.vp, this.width, this.bounds);
    for (const stale of fetch.abort) {
      const at = this.inflight.indexOf(stale as (typeof this.inflight)[number]);
      if (at >= 0) {
        this.inflight[at]?.controller.abort();
        this.inflight.splice(at, 1);
      }
    }
    if (fetch.ids.length) void this.fetchWindow(fetch.plan, fetch.ids);
    if (this.wantsFlows()) this.fetchFlows(fetch.plan, wanted);
    this.updateStatus();
  }

  private async fetchWindow(plan: WindowPlan, ids: string[]): Promise<void> {
    const controller = new AbortController();
    const entry = { plan, ids: new Set(ids), controller, at: performance.now() };
    this.inflight.push(entry);
    this.updateStatus();
    try {
      const resp = await this.opts.fetchWindow(
        {
          t0: plan.t0 + this.origin,
          t1: plan.t1 + this.origin,
          width: plan.width,
          tracks: ids,
          maxItems: MAX_ITEMS,
        },
        controller.signal,
      );
      if (controller.signal.aborted || !resp) return;
      const frames = decodeWindow(resp, this.origin, plan.level);
      for (const [id, frame] of frames) this.frames.set(id, frame);
      this.truncated = resp.truncated;
      this.error = null;
      this.responses += 1;
      this.element.dataset.lastFetchMs = (performance.now() - entry.at).toFixed(0);
      this.refreshSelectedGeom();
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      this.error = describeError(error);
    } finally {
      const at = this.inflight.indexOf(entry);
      if (at >= 0) this.inflight.splice(at, 1);
      this.updateStatus();
      if (!controller.signal.aborted) {
        this.drawNow();
        this.opts.onFrame?.();
        this.scheduleFetch();
      }
    }
  }

  /** Flows are fetched for the toggle, or for the selected event's arrows. */
  private wantsFlows(): boolean {
    return this.flowsOn || this.selected !== null;
  }

  private fetchFlows(plan: WindowPlan, wanted: string[]): void {
    const slices = wanted.filter((id) => this.trackOf(id)?.kind !== 'counter');
    if (this.flowFrame && serves(this.flowFrame.plan, this.vp, plan.level)) return;
    if (this.flowController) return;
    const controller = new AbortController();
    this.flowController = controller;
    const all = this.tracks.filter((t) => t.kind !== 'counter').map((t) => t.id);
    this.opts
      .fetchFlows(
        {
          t0: plan.t0 + this.origin,
          t1: plan.t1 + this.origin,
          tracks: slices.length === all.length ? [] : all,
        },
        controller.signal,
      )
      .then((resp) => {
        if (!resp || controller.signal.aborted) return;
        const f = resp.flows;
        const arrows: FlowArrow[] = [];
        for (let i = 0; i < f.id.length; i++) {
          arrows.push({
            srcTrack: f.src_track[i] ?? '',
            srcTs: (f.src_ts[i] ?? 0) - this.origin,
            srcDepth: f.src_depth[i] ?? 0,
            srcRow: f.src_row[i] ?? -1,
            dstRow: f.dst_row[i] ?? -1,
            dstTrack: f.dst_track[i] ?? '',
            dstTs: (f.dst_ts[i] ?? 0) - this.origin,
            dstDepth: f.dst_depth[i] ?? 0,
          });
        }
        this.flowFrame = { plan, arrows, truncated: resp.truncated };
        this.element.dataset.flows = String(arrows.length);
        this.requestDraw();
      })
      .catch((error: unknown) => {
        if (!isAbort(error)) this.error = describeError(error);
      })
      .finally(() => {
        if (this.flowController === controller) this.flowController = null;
        this.updateStatus();
        if (!controller.signal.aborted && this.wantsFlows()) this.scheduleFetch();
      });
  }

  private updateStatus(): void {
    const pending = this.inflight.length + (this.flowController ? 1 : 0);
    const ds = this.element.dataset;
    ds.pending = String(pending);
    ds.responses = String(this.responses);
    const parts: string[] = [];
    const upp = usPerPx(this.vp, this.width);
    parts.push(`${formatSpan(this.vp.end - this.vp.start)} visible`);
    parts.push(`${formatSpan(upp)} / px`);
    if (pending) parts.push('loading…');
    if (this.truncated) parts.push('detail limited: zoom in for every event');
    if (this.flowsOn && this.flowFrame?.truncated) parts.push('some flows left out');
    const hint = 'W/S zoom · A/D pan · Ctrl+wheel zoom · drag to pan · Shift+drag to select';
    replaceChildren(
      this.status,
      h('span', { class: this.error ? 'ks-tl-error' : '' }, this.error ?? parts.join(' · ')),
      h('span', { class: 'ks-tl-hint' }, hint),
    );
    this.status.classList.toggle('ks-tl-busy', pending > 0);
  }

  private refreshSelectedGeom(): void {
    const sel = this.selected;
    if (!sel) return;
    const frame = this.frames.get(sel.trackId);
    if (frame?.kind !== 'slices') return;
    const i = indexOfRow(frame.events, sel.row);
    if (i < 0) return;
    sel.depth = frame.events.depth[i] ?? sel.depth;
    sel.start = frame.events.start[i] ?? sel.start;
    sel.dur = frame.events.dur[i] ?? sel.dur;
  }

  // ----- pointer -----

  private canvasPoint(event: MouseEvent): { x: number; y: number } {
    const rect = this.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private bindPointer(): void {
    const c = this.canvas;
    c.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      const p = this.canvasPoint(e);
      this.drag = {
        mode: e.shiftKey || this.selectMode ? 'area' : 'pan',
        x0: p.x,
        y0: p.y,
        lastX: p.x,
        lastY: p.y,
        moved: false,
        vp0: this.vp,
        pointerId: e.pointerId,
      };
      c.setPointerCapture(e.pointerId);
      e.preventDefault(); // no text selection; but move the focus here (out of the search box)
      c.focus({ preventScroll: true });
    });
    c.addEventListener('pointermove', (e) => {
      const p = this.canvasPoint(e);
      this.mouseX = p.x;
      const drag = this.drag;
      if (!drag) {
        this.updateHover(p.x, p.y, e.clientX, e.clientY);
        return;
      }
      if (!drag.moved && Math.hypot(p.x - drag.x0, p.y - drag.y0) < DRAG_THRESHOLD_PX) return;
      drag.moved = true;
      this.hideTooltip();
      if (drag.mode === 'pan') {
        this.vp = panByPx(this.vp, p.x - drag.lastX, this.width, this.bounds);
        this.scroller.scrollTop -= p.y - drag.lastY;
        this.afterViewportChange();
        c.classList.add('ks-tl-grabbing');
      } else {
        this.setAreaFromDrag(drag, p.x, p.y);
      }
      drag.lastX = p.x;
      drag.lastY = p.y;
    });
    const end = (e: PointerEvent): void => {
      const drag = this.drag;
      if (drag?.pointerId !== e.pointerId) return;
      this.drag = null;
      c.classList.remove('ks-tl-grabbing');
      if (c.hasPointerCapture(e.pointerId)) c.releasePointerCapture(e.pointerId);
      const p = this.canvasPoint(e);
      if (!drag.moved) {
        if (e.type === 'pointerup') this.click(p.x, p.y);
        return;
      }
      if (drag.mode === 'area') this.finishArea();
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => {
      if (!this.drag) {
        this.mouseX = null;
        this.hideTooltip();
      }
    });
    c.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const p = this.canvasPoint(e);
        if (e.ctrlKey || e.metaKey) {
          const factor = wheelZoomFactor(e.deltaY, e.deltaMode);
          this.vp = zoomAround(this.vp, factor, p.x / this.width, this.bounds);
          this.afterViewportChange();
          return;
        }
        const dx = e.shiftKey && e.deltaX === 0 ? e.deltaY : e.deltaX;
        const dy = e.shiftKey ? 0 : e.deltaY;
        if (Math.abs(dx) > 0) {
          this.vp = panByPx(this.vp, -dx, this.width, this.bounds);
          this.afterViewportChange();
        }
        if (dy) this.scroller.scrollTop += e.deltaMode === 1 ? dy * 18 : dy;
      },
      { passive: false },
    );
    // wheel over the labels scrolls natively; ctrl+wheel there zooms too
    this.scroller.addEventListener(
      'wheel',
      (e) => {
        if (!(e.ctrlKey || e.metaKey)) return;
        e.preventDefault();
        this.vp = zoomAround(this.vp, wheelZoomFactor(e.deltaY, e.deltaMode), 0.5, this.bounds);
        this.afterViewportChange();
      },
      { passive: false },
    );
  }

  private setAreaFromDrag(drag: Drag, x: number, y: number): void {
    const t0 = xToTime(Math.min(drag.x0, x), this.vp, this.width);
    const t1 = xToTime(Math.max(drag.x0, x), this.vp, this.width);
    const top = this.scroller.scrollTop;
    this.area = {
      t0: Math.max(this.bounds.start, t0),
      t1: Math.min(this.bounds.end, t1),
      yTop: Math.min(drag.y0, y) + top,
      yBottom: Math.max(drag.y0, y) + top,
    };
    this.requestDraw();
  }

  private finishArea(): void {
    const area = this.area;
    if (!area || area.t1 <= area.t0) {
      this.clearArea();
      return;
    }
    const covered = itemsBetween(this.layout, area.yTop, area.yBottom + 1);
    const ids: string[] = [];
    for (const item of covered) {
      if (item.type === 'track') {
        if (item.track.kind !== 'counter') ids.push(item.track.id);
      } else if (item.collapsed) {
        ids.push(...item.trackIds.filter((id) => this.trackOf(id)?.kind !== 'counter'));
      }
    }
    this.requestDraw();
    this.opts.onArea({ t0: area.t0, t1: area.t1, trackIds: ids });
  }

  private hit(
    x: number,
    y: number,
  ):
    | { kind: 'event'; item: TrackItem; frame: SliceFrame; index: number }
    | { kind: 'block'; item: TrackItem; frame: SliceFrame; index: number }
    | { kind: 'counter'; item: TrackItem; value: number; t: number }
    | null {
    const item = itemAt(this.layout, y + this.scroller.scrollTop);
    if (item?.type !== 'track') return null;
    const frame = this.frames.get(item.track.id);
    if (!frame) return null;
    const t = xToTime(x, this.vp, this.width);
    if (frame.kind === 'counter') {
      const i = counterIndexAt(frame, t);
      if (i < 0 || t > frame.t1) return null;
      return { kind: 'counter', item, value: frame.value[i] ?? 0, t };
    }
    const depth = depthAt(item, y + this.scroller.scrollTop);
    if (depth < 0) return null;
    const tol = usPerPx(this.vp, this.width) * 3;
    const ei = hitSlice(frame.events, depth, t, tol);
    if (ei >= 0) return { kind: 'event', item, frame, index: ei };
    const bi = hitSlice(frame.blocks, depth, t, tol);
    if (bi >= 0) return { kind: 'block', item, frame, index: bi };
    return null;
  }

  private click(x: number, y: number): void {
    const hit = this.hit(x, y);
    if (this.area) this.clearArea();
    if (!hit) {
      if (this.selected) this.select(null, false);
      return;
    }
    if (hit.kind === 'event') {
      const ev = hit.frame.events;
      const i = hit.index;
      this.select(
        {
          trackId: hit.item.track.id,
          worker: hit.item.track.worker,
          row: ev.row[i] ?? -1,
          depth: ev.depth[i] ?? 0,
          start: ev.start[i] ?? 0,
          dur: ev.dur[i] ?? 0,
          name: hit.frame.names[ev.name[i] ?? -1] ?? '',
        },
        false,
      );
    } else if (hit.kind === 'block') {
      const bl = hit.frame.blocks;
      const i = hit.index;
      const row = bl.row[i] ?? -1;
      if (row >= 0) {
        this.select(
          {
            trackId: hit.item.track.id,
            worker: hit.item.track.worker,
            row,
            depth: bl.depth[i] ?? 0,
            start: bl.start[i] ?? 0,
            dur: bl.dur[i] ?? 0,
            name: hit.frame.names[bl.name[i] ?? -1] ?? '',
          },
          false,
        );
      } else {
        this.zoomTo(bl.start[i] ?? 0, bl.dur[i] ?? 1);
      }
    }
  }

  private updateHover(x: number, y: number, clientX: number, clientY: number): void {
    const hit = this.hit(x, y);
    let info: HoverInfo | null = null;
    if (hit?.kind === 'event') {
      const ev = hit.frame.events;
      const i = hit.index;
      const name = hit.frame.names[ev.name[i] ?? -1] ?? '';
      const dur = ev.dur[i] ?? 0;
      info = {
        geom: { trackId: hit.item.track.id, depth: ev.depth[i] ?? 0, start: ev.start[i] ?? 0, dur },
        text: [
          name,
          dur === 0 ? 'instant' : formatSpan(dur),
          `at ${formatTimeAt(ev.start[i] ?? 0, Math.max(0.001, usPerPx(this.vp, this.width)))}`,
        ],
      };
    } else if (hit?.kind === 'block' && (hit.frame.blocks.row[hit.index] ?? -1) >= 0) {
      const bl = hit.frame.blocks;
      const i = hit.index;
      const dur = bl.dur[i] ?? 0;
      info = {
        geom: { trackId: hit.item.track.id, depth: bl.depth[i] ?? 0, start: bl.start[i] ?? 0, dur },
        text: [
          hit.frame.names[bl.name[i] ?? -1] ?? '',
          dur === 0 ? 'instant' : formatSpan(dur),
          `at ${formatTimeAt(bl.start[i] ?? 0, Math.max(0.001, usPerPx(this.vp, this.width)))}`,
        ],
      };
    } else if (hit?.kind === 'block') {
      const bl = hit.frame.blocks;
      const i = hit.index;
      const dur = bl.dur[i] ?? 0;
      const busy = bl.busy[i] ?? 0;
      info = {
        geom: { trackId: hit.item.track.id, depth: bl.depth[i] ?? 0, start: bl.start[i] ?? 0, dur },
        text: [
          `${bl.count_[i] ?? 0} short events (merged at this zoom)`,
          `mostly ${hit.frame.names[bl.name[i] ?? -1] ?? '?'}`,
          `busy ${formatSpan(busy)} of ${formatSpan(dur)} · click to zoom in`,
        ],
      };
    } else if (hit?.kind === 'counter') {
      const c = hit.item.track.counter;
      const value =
        c?.unit === 'bytes'
          ? formatBytes(hit.value)
          : c?.unit === 'fraction'
            ? `${(hit.value * 100).toFixed(1)} %`
            : String(hit.value);
      info = { geom: null, text: [trackLabel(hit.item.track), value] };
    }
    const before = this.hover?.geom;
    this.hover = info;
    const after = info?.geom;
    if (
      before?.start !== after?.start ||
      before?.trackId !== after?.trackId ||
      before?.depth !== after?.depth
    ) {
      this.requestDraw();
    }
    if (!info) {
      this.hideTooltip();
      return;
    }
    replaceChildren(
      this.tooltip,
      info.text.map((line, i) =>
        h('div', { class: i === 0 ? 'ks-tl-tip-title' : 'ks-tl-tip-line' }, line),
      ),
    );
    this.tooltip.hidden = false;
    const body = this.body.getBoundingClientRect();
    const tipW = this.tooltip.offsetWidth;
    const tipH = this.tooltip.offsetHeight;
    let left = clientX - body.left + 14;
    let top = clientY - body.top + 16;
    if (left + tipW > body.width - 4) left = clientX - body.left - tipW - 10;
    if (top + tipH > body.height - 4) top = clientY - body.top - tipH - 10;
    this.tooltip.style.transform = `translate(${Math.max(0, left)}px, ${Math.max(0, top)}px)`;
  }

  private hideTooltip(): void {
    if (!this.tooltip.hidden) this.tooltip.hidden = true;
    if (this.hover) {
      this.hover = null;
      this.requestDraw();
    }
  }

  // ----- keyboard -----

  private bindKeys(): void {
    const down = (e: KeyboardEvent): void => {
      if (isTypingTarget(e.target) || isTypingTarget(document.activeElement)) return;
      if (!this.element.isConnected || this.element.offsetParent === null) return;
      const key = motionKeyOf(e);
      if (key) {
        e.preventDefault();
        if (!this.held.has(key)) {
          if (this.held.size === 0) this.heldSince = performance.now();
          this.held.add(key);
          this.startMotion();
        }
        return;
      }
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === 'Escape') {
        if (this.area) this.clearArea();
        else if (this.selected) this.select(null, false);
      } else if (e.key === 'f' || e.key === 'F') {
        const sel = this.selected;
        if (sel) this.zoomTo(sel.start, sel.dur);
        else if (this.area) this.setViewport({ start: this.area.t0, end: this.area.t1 });
      } else if (e.key === '0') {
        this.resetZoom();
      }
    };
    const up = (e: KeyboardEvent): void => {
      const key = motionKeyOf({ key: e.key, ctrlKey: false, metaKey: false, altKey: false });
      if (key) this.held.delete(key);
    };
    const blur = (): void => this.held.clear();
    // Keys reach the document that has the focus: ours once the user clicked into the
    // page, TensorBoard's (same origin) before that, so W/A/S/D work from the start.
    for (const doc of keyDocuments()) {
      doc.addEventListener('keydown', down);
      doc.addEventListener('keyup', up);
      this.cleanups.push(() => {
        doc.removeEventListener('keydown', down);
        doc.removeEventListener('keyup', up);
      });
    }
    window.addEventListener('blur', blur);
    this.cleanups.push(() => window.removeEventListener('blur', blur));
  }

  private applyMotion(dtMs: number, heldMs: number): void {
    const m = motionStep(this.held, dtMs, heldMs);
    const anchor = this.mouseX !== null ? this.mouseX / this.width : 0.5;
    let vp = this.vp;
    if (m.zoom !== 1) vp = zoomAround(vp, m.zoom, anchor, this.bounds);
    if (m.pan !== 0) vp = panBy(vp, m.pan, this.bounds);
    this.vp = vp;
    this.afterViewportChange();
  }

  private startMotion(): void {
    if (this.motionFrame) return;
    // a tap moves too: the first step is applied at once, as 60 ms of motion
    this.applyMotion(60, 0);
    this.lastMotion = performance.now();
    const step = (now: number): void => {
      if (this.held.size === 0) {
        this.motionFrame = 0;
        return;
      }
      this.applyMotion(now - this.lastMotion, now - this.heldSince);
      this.lastMotion = now;
      this.motionFrame = requestAnimationFrame(step);
    };
    this.motionFrame = requestAnimationFrame(step);
  }
}
