// The timeline component: a labels column (DOM, virtualized, collapsible groups), a time
// axis and a 2D canvas of the tracks in view. It asks the server only for the visible
// window at the current width (timeline_fetch.ts), and keeps drawing the previous frame
// until the new one arrives. Its parts: timeline_labels (the labels column and folds),
// timeline_fetch (windows and flows), timeline_canvas (sizing and drawing),
// timeline_input (mouse and keyboard), timeline_tooltip (the hover tip).

import type { TimelineTrack } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatSpan } from './axis';
import { flowsToDraw } from './flows';
import { hitAt, indexOfRow } from './hit';
import { itemsBetween } from './layout';
import type { PathMark } from './path_model';
import type { AreaGeom, SelectedGeom } from './render';
import type { StepMark } from './render_axis';
import { axisHeight, LABEL_WIDTH, TimelineCanvas } from './timeline_canvas';
import { TimelineFetcher } from './timeline_fetch';
import { TimelineInput } from './timeline_input';
import { LabelsColumn } from './timeline_labels';
import { hoverInfoOf, HoverTip } from './timeline_tooltip';
import type { SelectedEvent, TimelineOptions } from './timeline_types';
import {
  clampViewport,
  fitRange,
  revealRange,
  usPerPx,
  xToTime,
  type Bounds,
  type Viewport,
} from './viewport';

export { LABEL_WIDTH } from './timeline_canvas';
export { keyDocuments } from './timeline_input';
export type {
  AreaSelection,
  FlowsRequest,
  SelectedEvent,
  TimelineOptions,
  WindowRequest,
} from './timeline_types';

const STATUS_HINT = 'W/S zoom · A/D pan · Ctrl+wheel zoom · drag to pan · Shift+drag to select';

/** The step marks of the axis, relative to `origin`; the first rank's when several. */
function stepMarks(t: TimelineOptions['tracks'], origin: number): StepMark[] {
  const steps = t.steps
    .map((s) => ({ start: s.start_us - origin, end: s.end_us - origin, name: s.name }))
    .sort((a, b) => a.start - b.start);
  if (t.workers.length <= 1) return steps;
  // several ranks: one step band row per rank would not fit; keep the first rank's
  const first = t.steps[0]?.worker ?? null;
  return steps.filter((_, i) => t.steps[i]?.worker === first);
}

function miniButton(label: string, title: string, click: () => void): HTMLElement {
  return h(
    'button',
    { class: 'ks-tl-mini', title, attrs: { type: 'button' }, on: { click } },
    label,
  );
}

export class Timeline {
  readonly element: HTMLElement;
  readonly origin: number;
  readonly bounds: Bounds;

  private readonly opts: TimelineOptions;
  private readonly tracks: TimelineTrack[];
  private vp: Viewport;
  private flowsOn = false;
  private selected: SelectedGeom | null = null;
  private area: AreaGeom | null = null;
  private selectMode = false;
  private path: readonly PathMark[] = [];
  private viewportTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly labels: LabelsColumn;
  private readonly canvas: TimelineCanvas;
  private readonly fetcher: TimelineFetcher;
  private readonly input: TimelineInput;
  private readonly tip = new HoverTip();
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private readonly resize: ResizeObserver;

  constructor(opts: TimelineOptions) {
    this.opts = opts;
    const t = opts.tracks;
    this.origin = t.start_us;
    this.bounds = { start: 0, end: Math.max(t.end_us - t.start_us, 1) };
    this.tracks = t.tracks;
    const steps = stepMarks(t, this.origin);
    this.vp = clampViewport(opts.initial ?? { ...this.bounds }, this.bounds);
    this.labels = new LabelsColumn(this.tracks, () => {
      this.drawNow();
      this.fetcher.schedule();
    });
    this.status = h('div', { class: 'ks-tl-status', testid: 'trace-status', role: 'status' });
    this.element = h('div', {
      class: 'ks-tl',
      testid: 'trace-timeline',
      style: `--ks-tl-label-w:${LABEL_WIDTH}px`,
    });
    this.canvas = new TimelineCanvas(this.element, steps, () => this.drawNow());
    const scroller = this.labels.scroller;
    this.body = h('div', { class: 'ks-tl-body' }, scroller, this.canvas.tracks, this.tip.element);
    this.element.append(this.head(steps), this.body, this.status);
    this.fetcher = new TimelineFetcher(this.fetchHost(), opts);
    this.input = new TimelineInput(this.inputHost());

    scroller.addEventListener('scroll', () => {
      this.labels.render();
      this.drawNow();
      this.fetcher.schedule();
    });
    this.resize = new ResizeObserver(() => this.onResize());
    this.resize.observe(this.body);
    this.labels.render();
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
    this.canvas.requestDraw();
    this.fetcher.schedule();
    this.fetcher.schedule();
  }

  /** The critical path's marks drawn over the tracks (empty: none). */
  setPath(marks: readonly PathMark[]): void {
    this.path = marks;
    this.element.dataset.pathMarks = String(marks.length);
    this.canvas.requestDraw();
  }

  setSelectMode(on: boolean): void {
    this.selectMode = on;
    this.canvas.tracks.classList.toggle('ks-tl-selecting', on);
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
      this.labels.reveal(event.trackId, event.depth);
      const minDur = 2 / this.canvas.width;
      this.vp = revealRange(this.vp, event.start, event.dur, this.bounds, minDur);
      this.afterViewportChange();
    } else {
      this.canvas.requestDraw();
      if (event) this.fetcher.schedule(); // its flows
    }
    this.opts.onSelect(event);
  }

  /** Zooms to an event: [start, start + dur] fills most of the width; its track (a
   *  critical-path mark's) scrolled into view when given. */
  zoomTo(start: number, dur: number, trackId?: string): void {
    if (trackId !== undefined) this.labels.reveal(trackId, 0);
    this.setViewport(fitRange(start, start + Math.max(dur, 1), this.bounds, 0.2));
  }

  clearArea(): void {
    this.area = null;
    this.canvas.requestDraw();
    this.opts.onArea(null);
  }

  trackOf(id: string): TimelineTrack | undefined {
    return this.tracks.find((t) => t.id === id);
  }

  dispose(): void {
    this.resize.disconnect();
    this.input.dispose();
    this.fetcher.dispose();
    clearTimeout(this.viewportTimer);
    this.canvas.dispose();
    this.element.remove();
  }

  /** Call when the theme changes. */
  themeChanged(): void {
    this.canvas.themeChanged();
    this.drawNow();
  }

  // ----- parts -----

  private head(steps: StepMark[]): HTMLElement {
    const corner = h(
      'div',
      { class: 'ks-tl-corner' },
      h('span', { class: 'ks-tl-corner-title' }, 'Tracks'),
      miniButton('Expand all', 'Expand every group and track', () =>
        this.labels.setAllCollapsed(false),
      ),
      miniButton('Collapse', 'Collapse every group', () => this.labels.setAllCollapsed(true)),
    );
    const style = `--ks-tl-axis-h:${axisHeight(steps)}px`;
    return h('div', { class: 'ks-tl-head', style }, corner, this.canvas.axis);
  }

  private fetchHost(): ConstructorParameters<typeof TimelineFetcher>[0] {
    return {
      origin: this.origin,
      bounds: this.bounds,
      tracks: this.tracks,
      element: this.element,
      view: () => ({
        vp: this.vp,
        width: this.canvas.width,
        height: this.canvas.height,
        layout: this.labels.layout,
        scrollTop: this.labels.scroller.scrollTop,
      }),
      wantsFlows: () => this.flowsOn || this.selected !== null,
      statusChanged: () => this.updateStatus(),
      framesArrived: () => this.refreshSelectedGeom(),
      windowDone: () => {
        this.drawNow();
        this.opts.onFrame?.();
      },
      flowsArrived: () => this.canvas.requestDraw(),
    };
  }

  private inputHost(): ConstructorParameters<typeof TimelineInput>[0] {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- getters below read live state
    const tl = this;
    return {
      canvas: this.canvas.tracks,
      scroller: this.labels.scroller,
      element: this.element,
      bounds: this.bounds,
      get viewport() {
        return tl.vp;
      },
      width: () => this.canvas.width,
      selectMode: () => this.selectMode,
      moveTo: (vp) => {
        this.vp = vp;
        this.afterViewportChange();
      },
      hover: (x, y, clientX, clientY) => this.updateHover(x, y, clientX, clientY),
      hideTooltip: () => this.hideTooltip(),
      click: (x, y) => this.click(x, y),
      dragArea: (x0, y0, x, y) => this.setAreaFromDrag(x0, y0, x, y),
      finishArea: () => this.finishArea(),
      clear: () => {
        if (this.area) this.clearArea();
        else if (this.selected) this.select(null, false);
      },
      zoomToSelection: () => {
        const sel = this.selected;
        if (sel) this.zoomTo(sel.start, sel.dur);
        else if (this.area) this.setViewport({ start: this.area.t0, end: this.area.t1 });
      },
      resetZoom: () => this.resetZoom(),
    };
  }

  // ----- sizing and drawing -----

  private onResize(): void {
    if (!this.canvas.fit(this.body, this.labels.scroller)) return;
    this.labels.render();
    this.drawNow();
    this.fetcher.schedule();
  }

  private drawNow(): void {
    this.canvas.cancelRequest();
    if (this.canvas.densityChanged()) {
      this.onResize(); // moved to a screen of another density, or the page was zoomed
      return;
    }
    const started = performance.now();
    const flowFrame = this.fetcher.flowFrame;
    const flows = flowFrame ? flowsToDraw(flowFrame.arrows, this.selected, this.flowsOn) : [];
    const drawn = this.canvas.render({
      vp: this.vp,
      layout: this.labels.layout,
      scrollTop: this.labels.scroller.scrollTop,
      frames: this.fetcher.frames,
      dark: this.opts.isDark(),
      selected: this.selected,
      hover: this.tip.geom,
      area: this.area,
      flows,
      path: this.path,
    });
    if (!drawn) return;
    const ds = this.element.dataset;
    ds.flowsDrawn = String(flows.length);
    ds.t0 = String(this.vp.start + this.origin);
    ds.t1 = String(this.vp.end + this.origin);
    ds.width = String(this.canvas.width);
    ds.drawMs = (performance.now() - started).toFixed(1);
  }

  private afterViewportChange(): void {
    this.element.dataset.viewportUs = String(Math.round(this.vp.end - this.vp.start)); // tests
    this.canvas.requestDraw();
    this.fetcher.schedule();
    this.hideTooltip();
    clearTimeout(this.viewportTimer);
    this.viewportTimer = setTimeout(() => {
      this.opts.onViewport?.(this.vp.start + this.origin, this.vp.end + this.origin);
    }, 400);
  }

  private updateStatus(): void {
    const f = this.fetcher;
    const pending = f.pending;
    const ds = this.element.dataset;
    ds.pending = String(pending);
    ds.responses = String(f.responses);
    const parts: string[] = [];
    const upp = usPerPx(this.vp, this.canvas.width);
    parts.push(`${formatSpan(this.vp.end - this.vp.start)} visible`);
    parts.push(`${formatSpan(upp)} / px`);
    if (pending) parts.push('loading…');
    if (f.truncated) parts.push('detail limited: zoom in for every event');
    if (this.flowsOn && f.flowFrame?.truncated) parts.push('some flows left out');
    replaceChildren(
      this.status,
      h('span', { class: f.error ? 'ks-tl-error' : '' }, f.error ?? parts.join(' · ')),
      h('span', { class: 'ks-tl-hint' }, STATUS_HINT),
    );
    this.status.classList.toggle('ks-tl-busy', pending > 0);
  }

  /** The selected event's place in the newest frame (its depth may change with the level). */
  private refreshSelectedGeom(): void {
    const sel = this.selected;
    if (!sel) return;
    const frame = this.fetcher.frames.get(sel.trackId);
    if (frame?.kind !== 'slices') return;
    const i = indexOfRow(frame.events, sel.row);
    if (i < 0) return;
    sel.depth = frame.events.depth[i] ?? sel.depth;
    sel.start = frame.events.start[i] ?? sel.start;
    sel.dur = frame.events.dur[i] ?? sel.dur;
  }

  // ----- pointer actions -----

  private hit(x: number, y: number): ReturnType<typeof hitAt> {
    return hitAt(
      {
        layout: this.labels.layout,
        frames: this.fetcher.frames,
        vp: this.vp,
        width: this.canvas.width,
        scrollTop: this.labels.scroller.scrollTop,
      },
      x,
      y,
    );
  }

  private setAreaFromDrag(x0: number, y0: number, x: number, y: number): void {
    const width = this.canvas.width;
    const t0 = xToTime(Math.min(x0, x), this.vp, width);
    const t1 = xToTime(Math.max(x0, x), this.vp, width);
    const top = this.labels.scroller.scrollTop;
    this.area = {
      t0: Math.max(this.bounds.start, t0),
      t1: Math.min(this.bounds.end, t1),
      yTop: Math.min(y0, y) + top,
      yBottom: Math.max(y0, y) + top,
    };
    this.canvas.requestDraw();
  }

  private finishArea(): void {
    const area = this.area;
    if (!area || area.t1 <= area.t0) {
      this.clearArea();
      return;
    }
    const covered = itemsBetween(this.labels.layout, area.yTop, area.yBottom + 1);
    const ids: string[] = [];
    for (const item of covered) {
      if (item.type === 'track') {
        if (item.track.kind !== 'counter') ids.push(item.track.id);
      } else if (item.collapsed) {
        ids.push(...item.trackIds.filter((id) => this.trackOf(id)?.kind !== 'counter'));
      }
    }
    this.canvas.requestDraw();
    this.opts.onArea({ t0: area.t0, t1: area.t1, trackIds: ids });
  }

  private click(x: number, y: number): void {
    const hit = this.hit(x, y);
    if (this.area) this.clearArea();
    if (!hit) {
      if (this.selected) this.select(null, false);
      return;
    }
    if (hit.kind === 'counter') return;
    const cols = hit.kind === 'event' ? hit.frame.events : hit.frame.blocks;
    const i = hit.index;
    const row = cols.row[i] ?? -1;
    if (hit.kind === 'block' && row < 0) {
      // a block of merged short events: zoom in until they come apart
      this.zoomTo(cols.start[i] ?? 0, cols.dur[i] ?? 1);
      return;
    }
    this.select(
      {
        trackId: hit.item.track.id,
        worker: hit.item.track.worker,
        row,
        depth: cols.depth[i] ?? 0,
        start: cols.start[i] ?? 0,
        dur: cols.dur[i] ?? 0,
        name: hit.frame.names[cols.name[i] ?? -1] ?? '',
      },
      false,
    );
  }

  private updateHover(x: number, y: number, clientX: number, clientY: number): void {
    const info = hoverInfoOf(this.hit(x, y), this.vp, this.canvas.width);
    if (this.tip.show(info, clientX, clientY, this.body)) this.canvas.requestDraw();
  }

  private hideTooltip(): void {
    if (this.tip.hide()) this.canvas.requestDraw();
  }
}
