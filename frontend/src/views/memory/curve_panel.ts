// The Memory page's chart: the device's memory over the range, asked of the server at the
// chart's pixel width (again when the width settles on another value), and the drag that
// selects a range to zoom into.

import type { MemoryCurveResponse, MemoryDevice } from '../../api/types';
import { h } from '../../components/dom';
import type { FetchSlot } from '../../components/fetch_slot';
import type { ThemeWatcher } from '../../components/theme';
import { createZoomChart, type ZoomChart } from '../../components/zoom_chart';
import { curveOption, GRID } from './chart';
import { curveWidth, peakX, selectRange, type TimeRange } from './model';
import { Debouncer } from './widgets';

const RESIZE_DEBOUNCE_MS = 200;

/** What the chart shows and where it asks for its data. */
export interface CurveSource {
  /** t = 0 of the times shown (trace µs). */
  readonly origin: number;
  device(): MemoryDevice | undefined;
  range(): TimeRange | null;
  /** The curve of the device and range shown, `width` points wide. */
  fetch(width: number, signal: AbortSignal): Promise<MemoryCurveResponse>;
  /** The user selected a range (null: the whole trace). */
  zoom(range: TimeRange | null): void;
}

export class CurvePanel {
  /** The chart's card. */
  readonly element: HTMLElement;
  /** The last curve asked for has been drawn. */
  fresh = false;
  private readonly chartEl = h('div', { class: 'ks-mem-chart', testid: 'memory-chart' });
  private readonly note = h('div', { class: 'ks-mem-chart-note ks-muted' });
  private chart: ZoomChart | undefined;
  private curve: MemoryCurveResponse | null = null;
  private widthAsked = 0;
  private readonly resize = new Debouncer();

  constructor(
    private readonly source: CurveSource,
    private readonly slot: FetchSlot,
  ) {
    this.note.hidden = true;
    this.element = h(
      'div',
      { class: 'ks-card ks-mem-chart-card' },
      h(
        'p',
        { class: 'ks-muted ks-small ks-mem-hint' },
        'Drag across the chart to zoom into a range; the tables below follow it. Double-click or “Reset zoom” shows the whole trace.',
      ),
      h('div', { class: 'ks-mem-chart-wrap' }, this.chartEl, this.note),
    );
  }

  /** Makes the chart (the card is in the document) and loads the curve if it is visible. */
  async start(themes: ThemeWatcher): Promise<void> {
    this.chart = await createZoomChart(this.chartEl, () => ({}), themes, {
      gridLeft: GRID.left,
      gridRight: GRID.right,
      gridTop: GRID.top,
      gridBottom: GRID.bottom,
      onSelect: (from, to) => this.onSelect(from, to),
      onReset: () => this.source.zoom(null),
      onResize: (width) => this.onResize(width),
    });
    if (this.chart.plotWidth() > 0) void this.load();
  }

  /** Asks for the curve of the device and range shown, at the chart's width. */
  async load(): Promise<void> {
    const chart = this.chart;
    if (!chart || chart.plotWidth() <= 0) return; // hidden: the resize loads it
    const width = curveWidth(chart.plotWidth());
    this.fresh = false;
    this.widthAsked = width;
    await this.slot.run(
      (signal) => this.source.fetch(width, signal),
      (curve) => {
        this.curve = curve;
        this.render();
        this.fresh = true;
      },
    );
  }

  /** Draws the curve again (the device's summary or the range changed) if it is this device's. */
  redraw(device: string): void {
    if (this.curve?.device === device) this.render();
  }

  dispose(): void {
    this.slot.abort();
    this.resize.cancel();
    this.chart?.dispose();
  }

  private render(): void {
    const curve = this.curve;
    if (!curve || !this.chart) return;
    const d = this.source.device();
    const range = this.source.range();
    const empty = curve.t_us.length === 0;
    this.note.hidden = !empty;
    this.note.textContent = empty ? 'No memory events of this device in the range.' : '';
    const { build, series } = curveOption({ curve, device: d, origin: this.source.origin, range });
    this.chart.update(build);
    const ds = this.chartEl.dataset;
    ds.device = curve.device;
    ds.width = String(curve.width);
    ds.plotLeft = String(GRID.left);
    ds.points = String(curve.points);
    ds.drawn = String(curve.t_us.length);
    ds.peakAllocated = String(series.peak);
    ds.peakMarked = d && peakX(d, range) !== null ? String(d.peak_allocated_bytes) : '';
  }

  private onSelect(fromRel: number, toRel: number): void {
    const origin = this.source.origin;
    const range = selectRange(fromRel + origin, toRel + origin, this.bounds());
    if (range) this.source.zoom(range);
  }

  /** The x extent the chart shows, in trace µs. */
  private bounds(): TimeRange | null {
    const range = this.source.range();
    if (range) return range;
    const t = this.curve?.t_us;
    const first = t?.[0];
    const last = t?.at(-1);
    return first !== undefined && last !== undefined ? { start_us: first, end_us: last } : null;
  }

  private onResize(width: number): void {
    if (width <= 0) return;
    // The first size (the view just became visible) loads at once; later ones settle first.
    const delay = this.widthAsked === 0 ? 0 : RESIZE_DEBOUNCE_MS;
    this.resize.run(() => {
      if (curveWidth(width) !== this.widthAsked) void this.load();
    }, delay);
  }
}
