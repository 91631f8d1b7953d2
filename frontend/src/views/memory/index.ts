// The Memory page: a device's allocated and reserved memory over time (from the trace's
// own [memory] events), the peak with the op and stack running at it, and the tables of
// allocations and operator statistics for the range shown. Dragging across the chart
// zooms: the server answers the range again (curve downsampled to the chart's pixel
// width, keeping the extremes), so the browser never holds the whole curve. The device
// and range live in TensorBoard's URL (p.kinetoscope.memory.*).

import {
  ApiError,
  describeError,
  isStillLoading,
  untilReady,
  ViewNotReady,
  type StillLoading,
} from '../../api/client';
import type {
  MemoryCurveResponse,
  MemoryDevice,
  MemoryEventsResponse,
  MemoryEventsSort,
  MemoryOperatorRow,
  MemoryResponse,
} from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { FetchSlot } from '../../components/fetch_slot';
import { h, replaceChildren, type Children } from '../../components/dom';
import { formatCount } from '../../components/format';
import { HashParamStore, type HashParams } from '../../components/hash_params';
import { colAttrs } from '../../components/columns';
import { ensureStyle } from '../../components/view_style';
import { createZoomChart, type ZoomChart } from '../../components/zoom_chart';
import { TablePanel } from '../table_panel';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { curveOption, GRID } from './chart';
import css from './memory.css';
import {
  ALLOCATION_CSV_HEADER,
  allocationCsvRows,
  allocationText,
  allocationViews,
  chooseDevice,
  curveWidth,
  deviceForAnchor,
  deviceLabel,
  formatAbsTime,
  formatRelTime,
  OPERATOR_CSV_HEADER,
  operatorText,
  operatorCsvRows,
  pageLabel,
  parseRange,
  peakX,
  rangeLabel,
  rangeParams,
  sameRange,
  selectRange,
  type AllocationView,
  type TimeRange,
} from './model';
import { deviceTiles, peakCard } from './summary';
import { allocationColumns, OPERATOR_COLUMNS } from './tables';

const KEY_DEVICE = 'memory.device';
const KEY_START = 'memory.start_us';
const KEY_END = 'memory.end_us';
const URL_KEYS = [KEY_DEVICE, KEY_START, KEY_END];

/** Rows per memory_events page when the view's allocation table is capped. */
export const PAGE_SIZE = 1000;
const RESIZE_DEBOUNCE_MS = 200;
const SEARCH_DEBOUNCE_MS = 120;
const EVENT_SORTS: [MemoryEventsSort, string][] = [
  ['size', 'Largest first'],
  ['alloc', 'Allocation time'],
  ['free', 'Release time'],
  ['duration', 'Longest held first'],
];

/** The table sort that shows a memory_events order (a stable sort keeps the server's ties). */
const SORT_COLUMN: Record<MemoryEventsSort, { key: string; dir: 'asc' | 'desc' }> = {
  size: { key: 'size', dir: 'desc' },
  alloc: { key: 'alloc_us', dir: 'asc' },
  free: { key: 'free_us', dir: 'asc' },
  duration: { key: 'duration', dir: 'desc' },
};

interface State {
  device: string;
  range: TimeRange | null;
}

interface Paging {
  sort: MemoryEventsSort;
  offset: number;
  total: number;
}

function section(anchor: string, title: string, ...children: Children[]): HTMLElement {
  return h(
    'section',
    { class: 'ks-section', dataset: { anchor }, testid: `memory-${anchor}` },
    h('h3', { class: 'ks-section-title' }, title),
    ...children,
  );
}

function button(
  testid: string,
  label: string,
  title: string,
  onClick: () => void,
): HTMLButtonElement {
  return h(
    'button',
    {
      class: 'ks-mem-button',
      testid,
      title,
      attrs: { type: 'button' },
      on: { click: onClick },
    },
    label,
  );
}

function searchBox(
  testid: string,
  placeholder: string,
  onInput: (q: string) => void,
): HTMLInputElement {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const input = h('input', {
    class: 'ks-mem-search',
    testid,
    attrs: { type: 'search', placeholder, 'aria-label': placeholder, spellcheck: 'false' },
    on: {
      input: () => {
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(() => onInput(input.value), SEARCH_DEBOUNCE_MS);
      },
    },
  });
  return input;
}

class MemoryPage {
  readonly el: HTMLElement;
  private readonly ctx: ViewContext;
  private readonly store = new HashParamStore(URL_KEYS);
  /** What this view last wrote to the URL. */
  private written: Record<string, string | undefined> = {};
  private state: State;
  private mem: MemoryResponse;
  private readonly origin: number;
  private readonly history: (TimeRange | null)[] = [];
  private curve: MemoryCurveResponse | null = null;
  private curveWidthAsked = 0;
  private chart: ZoomChart | undefined;
  private paging: Paging | null = null;
  private allocRows: AllocationView[] = [];
  private opRows: MemoryOperatorRow[] = [];
  private allocQuery = '';
  private opQuery = '';
  /** memory and memory_events answers (one slot: a page never lands on a newer range). */
  private readonly dataSlot = this.slot();
  private readonly curveSlot = this.slot();
  private pending = 0;
  private dataFresh = true;
  private curveFresh = false;
  private resizeTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;

  // elements
  private readonly deviceSelect: HTMLSelectElement;
  private readonly rangeText: HTMLElement;
  private readonly backButton: HTMLButtonElement;
  private readonly resetButton: HTMLButtonElement;
  private readonly busy: HTMLElement;
  private readonly errorBox: HTMLElement;
  private readonly notes: HTMLElement;
  private readonly tiles: HTMLElement;
  private readonly chartEl: HTMLElement;
  private readonly chartNote: HTMLElement;
  private readonly peakBox: HTMLElement;
  private readonly allocInfo: HTMLElement;
  private readonly allocPager: HTMLElement;
  private readonly opInfo: HTMLElement;
  private readonly allocColumns: ReturnType<typeof allocationColumns>;
  private readonly allocTable: TablePanel<AllocationView>;
  /** The server order the allocation table's sort shows (see SORT_COLUMN). */
  private allocSort: MemoryEventsSort = 'size';
  private readonly allocEmpty: HTMLElement;
  private readonly opTable: TablePanel<MemoryOperatorRow>;

  constructor(ctx: ViewContext, first: MemoryResponse, state: State) {
    this.ctx = ctx;
    this.mem = first;
    this.state = state;
    // t = 0 of every time shown: the server's, so this page agrees with the others.
    this.origin = first.trace_start_us;

    this.deviceSelect = h('select', {
      class: 'ks-select ks-mem-device',
      testid: 'memory-device',
      attrs: { 'aria-label': 'Device' },
      on: { change: () => this.setState({ ...this.state, device: this.deviceSelect.value }) },
    });
    this.rangeText = h('span', { class: 'ks-mem-range', testid: 'memory-range' });
    this.backButton = button('memory-back', '← Back', 'Go back to the previous range', () =>
      this.back(),
    );
    this.resetButton = button('memory-reset', 'Reset zoom', 'Show the whole trace', () =>
      this.zoom(null),
    );
    this.busy = h(
      'span',
      { class: 'ks-mem-busy', testid: 'memory-loading', role: 'status' },
      h('span', { class: 'ks-mem-spinner', attrs: { 'aria-hidden': 'true' } }),
      'Loading…',
    );
    this.errorBox = h('div', {
      class: 'ks-notice ks-notice-warn',
      testid: 'memory-error',
      role: 'alert',
    });
    this.errorBox.hidden = true;
    this.notes = h('div', { class: 'ks-notice', testid: 'memory-notes', role: 'note' });
    this.tiles = h('div', { class: 'ks-tiles ks-mem-tiles', testid: 'memory-summary' });
    this.chartEl = h('div', { class: 'ks-mem-chart', testid: 'memory-chart' });
    this.chartNote = h('div', { class: 'ks-mem-chart-note ks-muted' });
    this.chartNote.hidden = true;
    this.peakBox = h('div', { class: 'ks-card ks-mem-peak', testid: 'memory-peak' });
    this.allocInfo = h('span', { class: 'ks-muted ks-small', testid: 'memory-alloc-info' });
    this.allocPager = h('span', { class: 'ks-mem-pager', testid: 'memory-alloc-pager' });
    this.opInfo = h('span', { class: 'ks-muted ks-small', testid: 'memory-op-info' });

    this.allocColumns = allocationColumns(this.origin);
    this.allocTable = new TablePanel<AllocationView>({
      testid: 'memory-alloc-table',
      caption: 'Allocations',
      optional: ['parent_op', 'duration'],
      rowAttrs: (v) => ({ 'data-key': String(v.key), 'data-state': v.row.state }),
      searchTexts: allocationText,
      cellAttrs: colAttrs,
      maxHeight: 420,
      rowHeight: 32,
    });
    this.buildAllocTable('size');
    this.allocEmpty = h('p', { class: 'ks-muted ks-note', testid: 'memory-alloc-empty' });
    this.allocEmpty.hidden = true;
    this.opTable = new TablePanel<MemoryOperatorRow>({
      testid: 'memory-op-table',
      caption: 'Operator memory statistics',
      optional: ['release_count', 'self_release_bytes', 'allocation_count', 'release_bytes'],
      rowAttrs: (r) => ({ 'data-key': r.name }),
      searchTexts: operatorText,
      cellAttrs: colAttrs,
      maxHeight: 420,
      rowHeight: 32,
    });
    this.opTable.build(OPERATOR_COLUMNS, [], {
      sort: { key: 'self_increase_bytes', dir: 'desc' },
      search: '',
      emptyText: 'No operator allocated or freed memory in this range.',
    });

    const key = ctx.key;
    this.el = h(
      'div',
      {
        class: 'ks-view ks-memory',
        testid: 'memory',
        dataset: {
          run: key.run,
          worker: key.worker,
          span: key.span,
          ready: 'false',
          originUs: String(this.origin),
        },
      },
      h(
        'header',
        { class: 'ks-view-head' },
        h('h2', null, 'Memory'),
        h('p', { class: 'ks-muted' }, `${key.run} · ${key.worker} · span ${key.span}`),
      ),
      this.partialNotice(),
      this.notes,
      h(
        'div',
        { class: 'ks-mem-toolbar', testid: 'memory-toolbar' },
        h(
          'label',
          { class: 'ks-mem-field' },
          h('span', { class: 'ks-field-label' }, 'Device'),
          this.deviceSelect,
        ),
        h(
          'span',
          { class: 'ks-mem-field ks-mem-range-field' },
          h('span', { class: 'ks-field-label' }, 'Range'),
          this.rangeText,
        ),
        h('span', { class: 'ks-mem-actions' }, this.backButton, this.resetButton),
        this.busy,
      ),
      this.errorBox,
      this.tiles,
      section(
        'curve',
        'Memory over time',
        h(
          'div',
          { class: 'ks-card ks-mem-chart-card' },
          h(
            'p',
            { class: 'ks-muted ks-small ks-mem-hint' },
            'Drag across the chart to zoom into a range; the tables below follow it. Double-click or “Reset zoom” shows the whole trace.',
          ),
          h('div', { class: 'ks-mem-chart-wrap' }, this.chartEl, this.chartNote),
        ),
        this.peakBox,
      ),
      section(
        'allocations',
        'Allocations',
        h(
          'div',
          { class: 'ks-mem-table-bar' },
          searchBox('memory-alloc-search', 'Search operators or state', (q) => {
            this.allocQuery = q;
            this.showAllocations();
          }),
          this.allocInfo,
          this.allocPager,
          button('memory-alloc-csv', 'Export CSV', 'Download the rows shown as CSV', () =>
            this.exportAllocations(),
          ),
        ),
        this.allocTable.element,
        this.allocEmpty,
      ),
      section(
        'operators',
        'Operator statistics',
        h(
          'p',
          { class: 'ks-muted ks-small' },
          'Per operator: memory allocated and released in it and in the operators it calls, summed over its calls; “self” counts only its own events. Click a header to sort.',
        ),
        h(
          'div',
          { class: 'ks-mem-table-bar' },
          searchBox('memory-op-search', 'Search operators', (q) => {
            this.opQuery = q;
            this.showOperators();
          }),
          this.opInfo,
          button('memory-op-csv', 'Export CSV', 'Download the rows shown as CSV', () =>
            this.exportOperators(),
          ),
        ),
        this.opTable.element,
      ),
    );
  }

  // ----- lifecycle -----

  async start(): Promise<void> {
    this.renderData();
    this.writeUrl();
    this.updateBusy();
    this.chart = await createZoomChart(this.chartEl, () => ({}), this.ctx.themes, {
      gridLeft: GRID.left,
      gridRight: GRID.right,
      gridTop: GRID.top,
      gridBottom: GRID.bottom,
      onSelect: (from, to) => this.onSelect(from, to),
      onReset: () => this.zoom(null),
      onResize: (width) => this.onResize(width),
    });
    if (this.chart.plotWidth() > 0) void this.loadCurve();
    const table = this.mem.allocation_table;
    if (table.truncated) void this.loadPage({ sort: 'size', offset: 0, total: table.total_rows });
    this.store.watch((params) => this.onUrl(params));
  }

  dispose(): void {
    this.disposed = true;
    this.dataSlot.abort();
    this.curveSlot.abort();
    if (this.resizeTimer !== undefined) clearTimeout(this.resizeTimer);
    this.store.unwatch();
    // The keys go with the view, unless the URL now holds others (a link or an edited hash
    // that is opening another worker-span: its Memory view will read them).
    const now = this.store.read();
    if (URL_KEYS.every((k) => now[k] === this.written[k])) this.store.clear();
    this.chart?.dispose();
    this.allocTable.destroy();
    this.opTable.destroy();
    this.el.remove();
  }

  scrollTo(anchor: string): boolean {
    const device = deviceForAnchor(anchor, this.mem.devices);
    if (device !== undefined) {
      if (device !== this.state.device) this.setState({ ...this.state, device });
      return scrollToAnchor(this.el, 'curve');
    }
    return scrollToAnchor(this.el, anchor);
  }

  // ----- state changes -----

  private setState(next: State, remember = false): void {
    if (this.disposed) return;
    if (next.device === this.state.device && sameRange(next.range, this.state.range)) return;
    if (remember) this.history.push(this.state.range);
    this.state = next;
    this.writeUrl();
    void this.loadData();
    void this.loadCurve();
  }

  private zoom(range: TimeRange | null): void {
    if (sameRange(range, this.state.range)) return;
    this.setState({ ...this.state, range }, range !== null);
    if (range === null) this.history.length = 0;
  }

  private back(): void {
    if (this.history.length === 0) return;
    const range = this.history.pop() ?? null;
    this.setState({ ...this.state, range });
  }

  private onSelect(fromRel: number, toRel: number): void {
    const bounds = this.bounds();
    const range = selectRange(fromRel + this.origin, toRel + this.origin, bounds);
    if (range) this.zoom(range);
  }

  /** The x extent the chart shows, in trace µs. */
  private bounds(): TimeRange | null {
    if (this.state.range) return this.state.range;
    const t = this.curve?.t_us;
    const first = t?.[0];
    const last = t?.at(-1);
    return first !== undefined && last !== undefined ? { start_us: first, end_us: last } : null;
  }

  private onResize(width: number): void {
    if (width <= 0) return;
    if (this.resizeTimer !== undefined) clearTimeout(this.resizeTimer);
    // The first size (the view just became visible) loads at once; later ones settle first.
    const delay = this.curveWidthAsked === 0 ? 0 : RESIZE_DEBOUNCE_MS;
    this.resizeTimer = setTimeout(() => {
      this.resizeTimer = undefined;
      if (curveWidth(width) !== this.curveWidthAsked) void this.loadCurve();
    }, delay);
  }

  private onUrl(params: HashParams): void {
    const device = params[KEY_DEVICE];
    const range = parseRange(params[KEY_START], params[KEY_END]);
    const next: State = {
      device:
        device !== undefined && this.mem.devices.some((d) => d.device === device)
          ? device
          : this.state.device,
      range,
    };
    this.setState(next, true);
  }

  private writeUrl(): void {
    const { start_us, end_us } = rangeParams(this.state.range);
    this.written = { [KEY_DEVICE]: this.state.device, [KEY_START]: start_us, [KEY_END]: end_us };
    this.store.write(this.written);
  }

  // ----- loading -----

  private params(): { device: string; start_us?: number; end_us?: number } {
    const { device, range } = this.state;
    return range ? { device, start_us: range.start_us, end_us: range.end_us } : { device };
  }

  private slot(): FetchSlot {
    return new FetchSlot({
      onStart: () => {
        this.pending += 1;
        this.updateBusy();
      },
      onEnd: () => {
        this.pending = Math.max(0, this.pending - 1);
        this.updateBusy();
      },
      onError: (error) => this.showError(error),
    });
  }

  private updateBusy(): void {
    const busy = this.pending > 0;
    this.busy.classList.toggle('ks-mem-busy-on', busy);
    this.el.dataset.busy = String(busy);
    this.el.classList.toggle('ks-mem-stale', busy);
    this.el.dataset.ready = String(!busy && this.dataFresh && this.curveFresh);
    this.backButton.disabled = this.history.length === 0;
    this.resetButton.disabled = this.state.range === null;
  }

  /** A route's data, asked again while it answers 202 (the server reloads the trace). */
  private async ready<T>(
    fetchOnce: () => Promise<T | StillLoading>,
    signal: AbortSignal,
  ): Promise<T> {
    let waits = 0;
    const data = await untilReady(fetchOnce, signal, () => {
      waits += 1;
      if (waits === 1) this.busy.lastChild?.replaceWith('The trace is loading again…');
    });
    if (waits > 0) this.busy.lastChild?.replaceWith('Loading…');
    return data;
  }

  private showError(error: unknown): void {
    replaceChildren(
      this.errorBox,
      h('strong', null, 'Could not load memory data: '),
      describeError(error),
    );
    this.errorBox.hidden = false;
  }

  private loadData(): Promise<void> {
    this.dataFresh = false;
    return this.dataSlot.run(
      async (signal) => {
        const mem = await this.ready(
          () => this.ctx.api.get('memory', { ...this.ctx.key, ...this.params() }, signal),
          signal,
        );
        if (!mem.allocation_table.truncated) return { mem, page: null, paging: null };
        const sort = this.paging?.sort ?? 'size';
        const paging = { sort, offset: 0, total: mem.allocation_table.total_rows };
        return { mem, page: await this.fetchPage(paging, signal), paging };
      },
      ({ mem, page, paging }) => {
        this.mem = mem;
        this.paging = paging;
        this.errorBox.hidden = true;
        this.renderData(page);
        this.dataFresh = true;
      },
    );
  }

  /** One memory_events page. */
  private fetchPage(paging: Paging, signal: AbortSignal): Promise<MemoryEventsResponse> {
    const params = { ...this.params(), sort: paging.sort, offset: paging.offset, limit: PAGE_SIZE };
    return this.ready(
      () => this.ctx.api.get('memory_events', { ...this.ctx.key, ...params }, signal),
      signal,
    );
  }

  private loadPage(paging: Paging): Promise<void> {
    this.dataFresh = false;
    return this.dataSlot.run(
      (signal) => this.fetchPage(paging, signal),
      (page) => {
        this.paging = { ...paging, total: page.total_rows };
        this.setAllocationRows(page.rows, page.offset);
        this.dataFresh = true;
      },
    );
  }

  private async loadCurve(): Promise<void> {
    const width = curveWidth(this.chart?.plotWidth() ?? 0);
    if (!this.chart || this.chart.plotWidth() <= 0) return; // hidden: the resize loads it
    this.curveFresh = false;
    this.curveWidthAsked = width;
    const params = { ...this.ctx.key, ...this.params(), width };
    await this.curveSlot.run(
      (signal) => this.ready(() => this.ctx.api.get('memory_curve', params, signal), signal),
      (curve) => {
        this.curve = curve;
        this.renderCurve();
        this.curveFresh = true;
      },
    );
  }

  // ----- rendering -----

  private device(): MemoryDevice | undefined {
    return this.mem.devices.find((d) => d.device === this.state.device);
  }

  private renderData(page: MemoryEventsResponse | null = null): void {
    const { device, range } = this.state;
    this.el.dataset.device = device;
    if (range) {
      this.el.dataset.startUs = String(range.start_us);
      this.el.dataset.endUs = String(range.end_us);
    } else {
      delete this.el.dataset.startUs;
      delete this.el.dataset.endUs;
    }
    replaceChildren(
      this.deviceSelect,
      this.mem.devices.map((d) =>
        h('option', { attrs: { value: d.device, selected: d.device === device } }, deviceLabel(d)),
      ),
    );
    this.deviceSelect.value = device;
    this.deviceSelect.disabled = this.mem.devices.length < 2;
    this.rangeText.textContent = rangeLabel(range, this.origin);
    this.rangeText.title = range
      ? `${formatAbsTime(range.start_us)} – ${formatAbsTime(range.end_us)} in the trace`
      : 'No range selected: everything the trace recorded';
    this.renderNotes();
    this.renderTiles();
    this.renderPeak();
    if (page) this.setAllocationRows(page.rows, page.offset);
    else this.setAllocationRows(this.mem.allocation_table.rows, 0);
    this.opRows = this.mem.operator_stats;
    this.showOperators();
    if (this.curve?.device === device) this.renderCurve();
  }

  private partialNotice(): HTMLElement | null {
    const status = this.ctx.status;
    if (!status.partial) return null;
    return h(
      'div',
      { class: 'ks-notice ks-notice-warn', role: 'note' },
      h('strong', null, 'This trace file was cut short; what could be read is shown.'),
      status.warnings.length
        ? h(
            'ul',
            null,
            status.warnings.map((w) => h('li', null, w)),
          )
        : null,
    );
  }

  private renderNotes(): void {
    const notes = this.mem.notes;
    replaceChildren(
      this.notes,
      notes.length
        ? [
            h('strong', null, 'About this trace’s memory events:'),
            h(
              'ul',
              null,
              notes.map((n) => h('li', null, n)),
            ),
          ]
        : null,
    );
    this.notes.hidden = notes.length === 0;
  }

  private renderTiles(): void {
    const d = this.device();
    const range = this.state.range;
    replaceChildren(this.tiles, d ? deviceTiles(d, this.mem, range !== null, this.origin) : null);
    if (!d) return;
    for (const el of this.tiles.querySelectorAll<HTMLElement>('[data-testid="memory-tile-peak"]')) {
      el.dataset.value = String(d.peak_allocated_bytes);
    }
  }

  private renderPeak(): void {
    replaceChildren(this.peakBox, peakCard(this.device(), this.state.range, this.origin));
  }

  private renderCurve(): void {
    const curve = this.curve;
    if (!curve || !this.chart) return;
    const d = this.device();
    const empty = curve.t_us.length === 0;
    this.chartNote.hidden = !empty;
    this.chartNote.textContent = empty ? 'No memory events of this device in the range.' : '';
    const { build, series } = curveOption({
      curve,
      device: d,
      origin: this.origin,
      range: this.state.range,
    });
    this.chart.update(build);
    const ds = this.chartEl.dataset;
    ds.device = curve.device;
    ds.width = String(curve.width);
    ds.plotLeft = String(GRID.left);
    ds.points = String(curve.points);
    ds.drawn = String(curve.t_us.length);
    ds.peakAllocated = String(series.peak);
    ds.peakMarked = d && peakX(d, this.state.range) !== null ? String(d.peak_allocated_bytes) : '';
  }

  private setAllocationRows(
    rows: MemoryResponse['allocation_table']['rows'],
    offset: number,
  ): void {
    this.allocRows = allocationViews(rows, offset);
    this.showAllocations();
    this.renderPager();
  }

  /** A new allocation table sorted the way the server's order `sort` shows. */
  private buildAllocTable(sort: MemoryEventsSort): void {
    this.allocSort = sort;
    this.allocTable.build(this.allocColumns, this.allocRows, {
      sort: SORT_COLUMN[sort],
      search: this.allocQuery,
      emptyText: 'No rows',
    });
  }

  private showAllocations(): void {
    // A page in another server order starts sorted the same way (stable: the server's order).
    const order = this.paging?.sort ?? 'size';
    if (order !== this.allocSort) this.buildAllocTable(order);
    else this.allocTable.filter(this.allocRows, this.allocQuery);
    const shown = this.allocTable.shownCount();
    this.allocEmpty.hidden = shown > 0;
    this.allocEmpty.textContent =
      this.allocRows.length > 0
        ? 'No rows match the search.'
        : this.mem.no_address_events > 0
          ? `No allocation can be paired with its free: the ${formatCount(this.mem.no_address_events)} memory events of this trace have no address (PyTorch < 1.10). The curve and the operator statistics still count them.`
          : `No allocations or frees in ${this.state.range ? 'this range' : 'this trace'}.`;
    const m = this.mem;
    const total = this.paging ? this.paging.total : this.allocRows.length;
    const parts = [
      this.allocQuery.trim()
        ? `${formatCount(shown)} of ${formatCount(this.allocRows.length)} rows match`
        : `${formatCount(total)} allocation${total === 1 ? '' : 's'} in ${this.state.range ? 'the range' : 'the trace'}`,
      `${formatCount(m.never_freed)} never freed`,
      `${formatCount(m.freed_unseen)} allocated before recording`,
    ];
    this.allocInfo.textContent = parts.join(' · ');
    this.allocInfo.dataset.total = String(total);
    this.allocInfo.dataset.shown = String(shown);
  }

  private renderPager(): void {
    const paging = this.paging;
    if (!paging) {
      replaceChildren(this.allocPager, null);
      this.allocPager.hidden = true;
      return;
    }
    this.allocPager.hidden = false;
    const order = h('select', {
      class: 'ks-select ks-mem-order',
      testid: 'memory-alloc-order',
      attrs: { 'aria-label': 'Server order' },
      on: {
        change: () =>
          void this.loadPage({ ...paging, sort: order.value as MemoryEventsSort, offset: 0 }),
      },
    });
    replaceChildren(
      order,
      EVENT_SORTS.map(([value, label]) =>
        h('option', { attrs: { value, selected: value === paging.sort } }, label),
      ),
    );
    order.value = paging.sort;
    const prev = button(
      'memory-alloc-prev',
      '‹',
      'Previous page',
      () => void this.loadPage({ ...paging, offset: Math.max(0, paging.offset - PAGE_SIZE) }),
    );
    const next = button(
      'memory-alloc-next',
      '›',
      'Next page',
      () => void this.loadPage({ ...paging, offset: paging.offset + PAGE_SIZE }),
    );
    prev.disabled = paging.offset === 0;
    next.disabled = paging.offset + PAGE_SIZE >= paging.total;
    replaceChildren(
      this.allocPager,
      h(
        'span',
        {
          class: 'ks-muted ks-small',
          title: 'The server sorts all rows; a header click sorts this page',
        },
        'Order',
      ),
      order,
      prev,
      h(
        'span',
        { class: 'ks-small', testid: 'memory-alloc-page' },
        pageLabel(paging.offset, this.allocRows.length, paging.total),
      ),
      next,
    );
  }

  private showOperators(): void {
    this.opTable.filter(this.opRows, this.opQuery);
    const shown = this.opTable.shownCount();
    this.opInfo.textContent = this.opQuery.trim()
      ? `${formatCount(shown)} of ${formatCount(this.opRows.length)} operators match`
      : `${formatCount(this.opRows.length)} operator${this.opRows.length === 1 ? '' : 's'} allocated or freed memory`;
    this.opInfo.dataset.total = String(this.opRows.length);
    this.opInfo.dataset.shown = String(shown);
  }

  private fileName(table: string): string {
    const { run, worker, span } = this.ctx.key;
    const range = this.state.range
      ? `${formatRelTime(this.state.range.start_us - this.origin)}-${formatRelTime(this.state.range.end_us - this.origin)}`
      : '';
    return csvFileName(['memory', run, worker, `span${span}`, this.state.device, range, table]);
  }

  private exportAllocations(): void {
    const rows = this.allocTable.shownRows();
    downloadCsv(
      this.fileName('allocations'),
      toCsv(ALLOCATION_CSV_HEADER, allocationCsvRows(rows, this.origin)),
    );
  }

  private exportOperators(): void {
    const rows = this.opTable.shownRows();
    downloadCsv(this.fileName('operators'), toCsv(OPERATOR_CSV_HEADER, operatorCsvRows(rows)));
  }
}

// ----- the first request ------------------------------------------------------------

async function firstResponse(
  ctx: ViewContext,
  device: string | undefined,
  range: TimeRange | null,
): Promise<MemoryResponse> {
  const params = {
    device,
    start_us: range?.start_us,
    end_us: range?.end_us,
  };
  let result: MemoryResponse | StillLoading;
  try {
    result = await ctx.api.get('memory', { ...ctx.key, ...params }, ctx.signal);
  } catch (error) {
    // A link naming a device or range this trace does not have: start over without them.
    if (!(error instanceof ApiError) || error.status !== 400 || (!device && !range)) throw error;
    result = await ctx.api.get('memory', ctx.key, ctx.signal);
  }
  if (isStillLoading(result)) throw new ViewNotReady();
  return result;
}

async function renderMemory(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureStyle('memory', css);
  const wanted = new HashParamStore(URL_KEYS).read();
  const wantedRange = parseRange(wanted[KEY_START], wanted[KEY_END]);
  let mem = await firstResponse(ctx, wanted[KEY_DEVICE], wantedRange);
  const device = chooseDevice(mem.devices, wanted[KEY_DEVICE], mem.default_device);
  if (device === null) {
    container.appendChild(
      h(
        'div',
        { class: 'ks-panel', testid: 'memory-empty' },
        h('h3', null, 'No memory events'),
        h(
          'p',
          null,
          'This trace has no [memory] events. Profile with profile_memory=True to record them.',
        ),
      ),
    );
    return { dispose: () => container.replaceChildren() };
  }
  // The range is kept only when the server took it.
  const range = mem.start_us !== null || mem.end_us !== null ? wantedRange : null;
  if (mem.device !== device && mem.devices.length > 1)
    mem = await firstResponse(ctx, device, range);
  const page = new MemoryPage(ctx, mem, { device, range });
  container.appendChild(page.el);
  await page.start();
  return {
    dispose: () => page.dispose(),
    scrollTo: (anchor) => page.scrollTo(anchor),
  };
}

export const memoryView: ViewDef = {
  id: 'memory',
  label: 'Memory',
  render: renderMemory,
};
