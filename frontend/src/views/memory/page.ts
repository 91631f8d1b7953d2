// The Memory page once it has its first answer: the device and range shown (kept in the
// URL, with a history for Back), the fetch lifecycles of its data (the memory answer and
// memory_events pages share one slot, the curve has its own), and the parts it lays out.

import { describeError, untilReady, type StillLoading } from '../../api/client';
import type {
  MemoryDevice,
  MemoryEventsResponse,
  MemoryOperatorRow,
  MemoryResponse,
} from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { csvFileName, downloadCsv, toCsv } from '../../components/csv';
import { h, replaceChildren } from '../../components/dom';
import { FetchSlot } from '../../components/fetch_slot';
import { HashParamStore, type HashParams } from '../../components/hash_params';
import { section } from '../page_kit';
import type { ViewContext } from '../types';
import { AllocationPanel, PAGE_SIZE, type Paging } from './allocations';
import { CurvePanel } from './curve_panel';
import {
  ALLOCATION_CSV_HEADER,
  allocationCsvRows,
  deviceForAnchor,
  formatRelTime,
  OPERATOR_CSV_HEADER,
  operatorCsvRows,
  parseRange,
  rangeParams,
  sameRange,
  type AllocationView,
  type TimeRange,
} from './model';
import { OperatorPanel } from './operator_panel';
import { partialNotice, peakCard, showNotes, showTiles } from './summary';
import { MemoryToolbar } from './toolbar';

export const KEY_DEVICE = 'memory.device';
export const KEY_START = 'memory.start_us';
export const KEY_END = 'memory.end_us';
export const URL_KEYS = [KEY_DEVICE, KEY_START, KEY_END];

export interface State {
  device: string;
  range: TimeRange | null;
}

export class MemoryPage {
  readonly el: HTMLElement;
  private readonly store = new HashParamStore(URL_KEYS);
  /** What this view last wrote to the URL. */
  private written: Record<string, string | undefined> = {};
  private mem: MemoryResponse;
  private readonly origin: number;
  private readonly history: (TimeRange | null)[] = [];
  /** memory and memory_events answers (one slot: a page never lands on a newer range). */
  private readonly dataSlot = this.slot();
  private pending = 0;
  private dataFresh = true;
  private disposed = false;

  private readonly toolbar: MemoryToolbar;
  private readonly curve: CurvePanel;
  private readonly allocations: AllocationPanel;
  private readonly operators: OperatorPanel;
  private readonly errorBox = h('div', {
    class: 'ks-notice ks-notice-warn',
    testid: 'memory-error',
    role: 'alert',
  });
  private readonly notes = h('div', { class: 'ks-notice', testid: 'memory-notes', role: 'note' });
  private readonly tiles = h('div', { class: 'ks-tiles ks-mem-tiles', testid: 'memory-summary' });
  private readonly peakBox = h('div', { class: 'ks-card ks-mem-peak', testid: 'memory-peak' });

  constructor(
    private readonly ctx: ViewContext,
    first: MemoryResponse,
    private state: State,
  ) {
    this.mem = first;
    // t = 0 of every time shown: the server's, so this page agrees with the others.
    this.origin = first.trace_start_us;
    this.errorBox.hidden = true;
    this.toolbar = new MemoryToolbar({
      onDevice: (device) => this.setState({ ...this.state, device }),
      onBack: () => this.back(),
      onReset: () => this.zoom(null),
    });
    this.curve = new CurvePanel(
      {
        origin: this.origin,
        device: () => this.device(),
        range: () => this.state.range,
        fetch: (width, signal) => {
          const params = { ...this.ctx.key, ...this.params(), width };
          return this.ready(() => this.ctx.api.get('memory_curve', params, signal), signal);
        },
        zoom: (range) => this.zoom(range),
      },
      this.slot(),
    );
    this.allocations = new AllocationPanel(this.origin, {
      onPage: (paging) => void this.loadPage(paging),
      onCsv: (rows) => this.exportAllocations(rows),
      context: () => ({ mem: this.mem, ranged: this.state.range !== null }),
    });
    this.operators = new OperatorPanel((rows) => this.exportOperators(rows));
    this.el = this.layout();
  }

  // ----- lifecycle -----

  async start(): Promise<void> {
    this.renderData();
    this.writeUrl();
    this.updateBusy();
    await this.curve.start(this.ctx.themes);
    const table = this.mem.allocation_table;
    if (table.truncated) void this.loadPage({ sort: 'size', offset: 0, total: table.total_rows });
    this.store.watch((params) => this.onUrl(params));
  }

  dispose(): void {
    this.disposed = true;
    this.dataSlot.abort();
    this.store.unwatch();
    // The keys go with the view, unless the URL now holds others (a link or an edited hash
    // that is opening another worker-span: its Memory view will read them).
    const now = this.store.read();
    if (URL_KEYS.every((k) => now[k] === this.written[k])) this.store.clear();
    this.curve.dispose();
    this.allocations.dispose();
    this.operators.dispose();
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

  private layout(): HTMLElement {
    const key = this.ctx.key;
    return h(
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
      partialNotice(this.ctx.status),
      this.notes,
      this.toolbar.element,
      this.errorBox,
      this.tiles,
      section(
        { anchor: 'curve', testid: 'memory-curve', title: 'Memory over time' },
        this.curve.element,
        this.peakBox,
      ),
      section(
        { anchor: 'allocations', testid: 'memory-allocations', title: 'Allocations' },
        ...this.allocations.parts,
      ),
      section(
        {
          anchor: 'operators',
          testid: 'memory-operators',
          title: 'Operator statistics',
          intro:
            'Per operator: memory allocated and released in it and in the operators it calls, summed over its calls; “self” counts only its own events. Click a header to sort.',
        },
        ...this.operators.parts,
      ),
    );
  }

  // ----- state changes -----

  private setState(next: State, remember = false): void {
    if (this.disposed) return;
    if (next.device === this.state.device && sameRange(next.range, this.state.range)) return;
    if (remember) this.history.push(this.state.range);
    this.state = next;
    this.writeUrl();
    void this.loadData();
    void this.curve.load();
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
    this.toolbar.setBusy(busy, this.history.length > 0, this.state.range !== null);
    this.el.dataset.busy = String(busy);
    this.el.classList.toggle('ks-mem-stale', busy);
    this.el.dataset.ready = String(!busy && this.dataFresh && this.curve.fresh);
  }

  /** A route's data, asked again while it answers 202 (the server reloads the trace). */
  private async ready<T>(
    fetchOnce: () => Promise<T | StillLoading>,
    signal: AbortSignal,
  ): Promise<T> {
    let waits = 0;
    const data = await untilReady(fetchOnce, signal, () => {
      waits += 1;
      if (waits === 1) this.toolbar.setReloading(true);
    });
    if (waits > 0) this.toolbar.setReloading(false);
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
        const sort = this.allocations.paging?.sort ?? 'size';
        const paging = { sort, offset: 0, total: mem.allocation_table.total_rows };
        return { mem, page: await this.fetchPage(paging, signal), paging };
      },
      ({ mem, page, paging }) => {
        this.mem = mem;
        this.errorBox.hidden = true;
        this.renderData(page, paging);
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
        this.allocations.setRows(page.rows, page.offset, { ...paging, total: page.total_rows });
        this.dataFresh = true;
      },
    );
  }

  // ----- rendering -----

  private device(): MemoryDevice | undefined {
    return this.mem.devices.find((d) => d.device === this.state.device);
  }

  /** Shows the memory answer, with a memory_events page of its allocations if capped. */
  private renderData(page: MemoryEventsResponse | null = null, paging: Paging | null = null): void {
    const { device, range } = this.state;
    this.el.dataset.device = device;
    if (range) {
      this.el.dataset.startUs = String(range.start_us);
      this.el.dataset.endUs = String(range.end_us);
    } else {
      delete this.el.dataset.startUs;
      delete this.el.dataset.endUs;
    }
    this.toolbar.show(this.mem.devices, device, range, this.origin);
    showNotes(this.notes, this.mem.notes);
    showTiles(this.tiles, this.device(), this.mem, range !== null, this.origin);
    replaceChildren(this.peakBox, peakCard(this.device(), range, this.origin));
    if (page) this.allocations.setRows(page.rows, page.offset, paging);
    else this.allocations.setRows(this.mem.allocation_table.rows, 0, paging);
    this.operators.setRows(this.mem.operator_stats);
    this.curve.redraw(device);
  }

  // ----- CSV -----

  private fileName(table: string): string {
    const { run, worker, span } = this.ctx.key;
    const range = this.state.range
      ? `${formatRelTime(this.state.range.start_us - this.origin)}-${formatRelTime(this.state.range.end_us - this.origin)}`
      : '';
    return csvFileName(['memory', run, worker, `span${span}`, this.state.device, range, table]);
  }

  private exportAllocations(rows: readonly AllocationView[]): void {
    downloadCsv(
      this.fileName('allocations'),
      toCsv(ALLOCATION_CSV_HEADER, allocationCsvRows(rows, this.origin)),
    );
  }

  private exportOperators(rows: readonly MemoryOperatorRow[]): void {
    downloadCsv(this.fileName('operators'), toCsv(OPERATOR_CSV_HEADER, operatorCsvRows(rows)));
  }
}
