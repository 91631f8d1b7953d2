// The Trace page: our own canvas timeline over the server's level-of-detail routes, with
// event details, server-side search, area summaries, flows, several ranks at once, and
// optional hand-offs (download the file, open it in ui.perfetto.dev).

import { describeError, isAbort } from '../../api/client';
import type {
  EventResponse,
  SearchResponse,
  StatusResponse,
  TracksResponse,
  WorkerInfo,
} from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatBytes, formatCount } from '../../components/format';
import { HashParamStore } from '../../components/hash_params';
import { ensureStyle } from '../../components/view_style';
import type { VirtualTable } from '../../components/table';
import { workerLabel } from '../../shell/selection';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { formatSpan, formatTimePrecise } from './axis';
import { renderEventDetails, renderRangeSummary, type JumpTarget } from './details';
import { trackLabel } from './layout';
import {
  eventParams,
  firstHitFrom,
  searchHits,
  stepHit,
  windowFromKeys,
  workerParams,
  type KeyParams,
  type SearchHit,
} from './model';
import { openInPerfetto, PerfettoTimeout } from './perfetto';
import { isTypingTarget } from './keys';
import { keyDocuments, Timeline, type AreaSelection, type SelectedEvent } from './timeline';
import css from './trace.css';

/** The visible window in TensorBoard's URL (absolute µs of the worker's file); plain
 * t0/t1 (how other views link here) are read once and replaced by these. */
const URL_KEYS = ['trace.t0', 'trace.t1'] as const;
const LINK_KEYS = ['t0', 't1'] as const;
const SEARCH_LIMIT = 500;

type PanelTab = 'details' | 'search' | 'range';

/** "Loading w0: 1 MB of 4 MB (25 %)…" for a worker that still loads (a 202). */
function loadingText(s: StatusResponse): string {
  const pct = s.bytes_total > 0 ? Math.round((100 * s.bytes_done) / s.bytes_total) : 0;
  return `Loading ${s.worker}: ${formatBytes(s.bytes_done)} of ${formatBytes(s.bytes_total)} (${pct} %)…`;
}

function toggleButton(
  label: string,
  testid: string,
  title: string,
  onToggle: (on: boolean) => void,
): HTMLButtonElement {
  const button = h(
    'button',
    {
      class: 'ks-trace-toggle',
      testid,
      title,
      attrs: { type: 'button', 'aria-pressed': 'false' },
    },
    label,
  );
  button.addEventListener('click', () => {
    const on = button.getAttribute('aria-pressed') !== 'true';
    button.setAttribute('aria-pressed', String(on));
    onToggle(on);
  });
  return button;
}

class TracePage {
  readonly element: HTMLElement;
  private readonly ctx: ViewContext;
  private readonly url = new HashParamStore([...URL_KEYS, ...LINK_KEYS]);
  private workers: string[];
  private allWorkers: WorkerInfo[] = [];
  private fileName = '';

  private timeline: Timeline | null = null;
  private tracks: TracksResponse | null = null;
  private loadController: AbortController | null = null;
  private detailsController: AbortController | null = null;
  private rangeController: AbortController | null = null;
  private searchController: AbortController | null = null;
  private readonly eventCache = new Map<string, EventResponse>();
  private rangeTable: VirtualTable<unknown> | null = null;

  private query = '';
  private hits: SearchHit[] = [];
  private hitIndex = -1;
  private searchResp: SearchResponse | null = null;

  private flowsOn = false;
  private selectMode = false;
  private tab: PanelTab = 'details';
  private panelHeight = 300;

  private readonly tlHost: HTMLElement;
  private readonly meta: HTMLElement;
  private readonly searchInput: HTMLInputElement;
  private readonly searchCount: HTMLElement;
  private readonly workerBox: HTMLElement;
  private readonly perfettoStatus: HTMLElement;
  private readonly panel: HTMLElement;
  private readonly panelBody: HTMLElement;
  private readonly tabs: Record<PanelTab, HTMLButtonElement>;
  private readonly bodies: Record<PanelTab, HTMLElement>;
  private readonly cleanups: (() => void)[] = [];

  constructor(ctx: ViewContext) {
    this.ctx = ctx;
    this.workers = [ctx.key.worker];
    this.meta = h('p', { class: 'ks-muted' });
    this.searchInput = h('input', {
      class: 'ks-trace-search-input',
      testid: 'trace-search',
      attrs: {
        type: 'search',
        placeholder: 'Search events by name  (/)',
        'aria-label': 'Search events by name',
        autocomplete: 'off',
        spellcheck: 'false',
      },
    });
    this.searchCount = h('span', { class: 'ks-trace-search-count', testid: 'trace-search-count' });
    const searchForm = h(
      'form',
      {
        class: 'ks-trace-search',
        attrs: { role: 'search' },
        on: {
          submit: (e) => {
            e.preventDefault();
            void this.search(1);
          },
        },
      },
      this.searchInput,
      h(
        'button',
        {
          class: 'ks-trace-icon',
          testid: 'trace-search-prev',
          title: 'Previous match (Shift+Enter)',
          attrs: { type: 'button', 'aria-label': 'Previous match' },
          on: { click: () => void this.search(-1) },
        },
        '‹',
      ),
      h(
        'button',
        {
          class: 'ks-trace-icon',
          testid: 'trace-search-next',
          title: 'Next match (Enter)',
          attrs: { type: 'button', 'aria-label': 'Next match' },
          on: { click: () => void this.search(1) },
        },
        '›',
      ),
      this.searchCount,
    );
    this.searchInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.shiftKey) {
        e.preventDefault();
        void this.search(-1);
      } else if (e.key === 'Escape') {
        this.searchInput.blur();
      }
    });

    this.workerBox = h('div', { class: 'ks-trace-workers-wrap' });
    this.perfettoStatus = h('span', { class: 'ks-muted ks-small', role: 'status' });
    const download = h(
      'a',
      {
        class: 'ks-trace-button',
        testid: 'trace-download',
        title: 'Download the original trace file',
        attrs: { href: ctx.api.url('download', { ...ctx.key }), download: '' },
      },
      'Download trace',
    );
    const perfetto = h(
      'button',
      {
        class: 'ks-trace-button',
        testid: 'trace-open-perfetto',
        title:
          'Open this trace in ui.perfetto.dev (needs internet): the file is sent to that page in a new tab, which opens it in your browser',
        attrs: { type: 'button' },
        on: { click: () => this.openPerfetto() },
      },
      'Open in Perfetto ↗',
    );
    const toolbar = h(
      'div',
      { class: 'ks-trace-toolbar' },
      this.workerBox,
      searchForm,
      h(
        'div',
        { class: 'ks-trace-tools' },
        toggleButton(
          'All flows',
          'trace-flows-toggle',
          "Draw every flow arrow in view (CPU launches → GPU kernels, forward → backward). Off: only the selected event's flows and those chained to them, or all when there are few",
          (on) => {
            this.flowsOn = on;
            this.timeline?.setFlows(on);
          },
        ),
        toggleButton(
          'Select area',
          'trace-select-toggle',
          'Drag to select a time range and sum up its events (Shift+drag works too)',
          (on) => {
            this.selectMode = on;
            this.timeline?.setSelectMode(on);
          },
        ),
        h(
          'button',
          {
            class: 'ks-trace-button',
            testid: 'trace-reset-zoom',
            title: 'Show the whole trace (0)',
            attrs: { type: 'button' },
            on: { click: () => this.timeline?.resetZoom() },
          },
          'Reset zoom',
        ),
      ),
      h('div', { class: 'ks-trace-spacer' }),
      h('div', { class: 'ks-trace-tools' }, this.perfettoStatus, download, perfetto),
    );

    this.tlHost = h('div', { class: 'ks-trace-main' });
    const tabButton = (tab: PanelTab, label: string): HTMLButtonElement =>
      h(
        'button',
        {
          class: 'ks-trace-tab',
          testid: `trace-tab-${tab}`,
          attrs: { type: 'button', role: 'tab', 'aria-selected': 'false' },
          on: { click: () => this.showTab(this.tab === tab && this.panelOpen() ? null : tab) },
        },
        label,
      );
    this.tabs = {
      details: tabButton('details', 'Details'),
      search: tabButton('search', 'Search results'),
      range: tabButton('range', 'Selection summary'),
    };
    this.bodies = {
      details: h(
        'div',
        { class: 'ks-trace-pane', testid: 'trace-pane-details' },
        h(
          'p',
          { class: 'ks-muted ks-trace-empty' },
          'Click an event on the timeline to see its details.',
        ),
      ),
      search: h(
        'div',
        { class: 'ks-trace-pane', testid: 'trace-pane-search' },
        h(
          'p',
          { class: 'ks-muted ks-trace-empty' },
          'Type a name in the search box and press Enter.',
        ),
      ),
      range: h(
        'div',
        { class: 'ks-trace-pane', testid: 'trace-pane-range' },
        h(
          'p',
          { class: 'ks-muted ks-trace-empty' },
          'Shift+drag on the timeline (or use “Select area”) to sum up a time range.',
        ),
      ),
    };
    this.panelBody = h('div', { class: 'ks-trace-panel-body' }, Object.values(this.bodies));
    const splitter = h('div', {
      class: 'ks-trace-splitter',
      title: 'Drag to resize',
      attrs: { role: 'separator', 'aria-orientation': 'horizontal' },
    });
    this.bindSplitter(splitter);
    this.panel = h(
      'div',
      { class: 'ks-trace-panel', testid: 'trace-panel' },
      splitter,
      h('div', { class: 'ks-trace-tabs', attrs: { role: 'tablist' } }, Object.values(this.tabs)),
      this.panelBody,
    );
    this.element = h(
      'div',
      {
        class: 'ks-view ks-trace',
        testid: 'trace',
        dataset: { run: ctx.key.run, worker: ctx.key.worker, span: ctx.key.span },
      },
      h('header', { class: 'ks-view-head ks-trace-head' }, h('h2', null, 'Trace'), this.meta),
      toolbar,
      this.tlHost,
      this.panel,
    );
    this.showTab(null);

    const onKey = (e: KeyboardEvent): void => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      if (isTypingTarget(e.target) || this.element.offsetParent === null) return;
      e.preventDefault();
      this.searchInput.focus();
      this.searchInput.select();
    };
    for (const doc of keyDocuments()) {
      doc.addEventListener('keydown', onKey);
      this.cleanups.push(() => doc.removeEventListener('keydown', onKey));
    }
    this.cleanups.push(ctx.themes.subscribe(() => this.timeline?.themeChanged()));
  }

  private get multi(): boolean {
    return !(this.workers.length === 1 && this.workers[0] === this.ctx.key.worker);
  }

  private keyParams(): KeyParams {
    const { run, span, worker } = this.ctx.key;
    return workerParams(run, span, this.workers, worker);
  }

  // ----- loading -----

  async start(): Promise<void> {
    try {
      const listing = await this.ctx.api.get('workers', { run: this.ctx.key.run }, this.ctx.signal);
      this.allWorkers = listing.workers.filter((w) =>
        w.spans.some((s) => s.name === this.ctx.key.span),
      );
      const me = listing.workers.find((w) => w.name === this.ctx.key.worker);
      this.fileName = me?.spans.find((s) => s.name === this.ctx.key.span)?.file ?? '';
    } catch (error) {
      if (isAbort(error)) throw error;
      this.allWorkers = [];
    }
    this.renderWorkerPicker();
    await this.load(true);
  }

  private async load(first: boolean): Promise<void> {
    this.loadController?.abort();
    const controller = new AbortController();
    this.loadController = controller;
    const signal = AbortSignal.any([controller.signal, this.ctx.signal]);
    this.timeline?.dispose();
    this.timeline = null;
    this.clearPanels();
    replaceChildren(
      this.tlHost,
      h('div', { class: 'ks-trace-loading ks-muted', testid: 'trace-loading' }, 'Loading tracks…'),
    );
    this.element.dataset.ready = 'false';
    let tracks: TracksResponse;
    try {
      tracks = await this.ctx.api.getReady('tracks', this.keyParams(), signal, (status) => {
        const el = this.tlHost.querySelector('.ks-trace-loading');
        if (el) el.textContent = loadingText(status);
      });
    } catch (error) {
      if (isAbort(error) || signal.aborted) {
        if (first && this.ctx.signal.aborted) throw error;
        return;
      }
      replaceChildren(
        this.tlHost,
        h(
          'div',
          { class: 'ks-panel ks-error', testid: 'trace-error' },
          h('h3', null, 'Could not load the tracks'),
          h('p', null, describeError(error)),
        ),
      );
      if (first) throw error;
      return;
    }
    this.tracks = tracks;
    const slices = tracks.tracks.filter((t) => t.kind !== 'counter');
    const events = slices.reduce((n, t) => n + t.event_count, 0);
    const who = this.multi ? `${this.workers.length} workers (epoch time)` : this.ctx.key.worker;
    this.meta.textContent = `${this.ctx.key.run} · ${who} · span ${this.ctx.key.span} · ${formatCount(tracks.tracks.length)} tracks · ${formatCount(events)} events · ${formatSpan(tracks.end_us - tracks.start_us)}`;
    if (tracks.tracks.length === 0) {
      replaceChildren(
        this.tlHost,
        h(
          'div',
          { class: 'ks-panel', testid: 'trace-empty' },
          h('h3', null, 'Nothing to draw'),
          h('p', null, 'This trace has no events with a time and duration.'),
        ),
      );
      this.element.dataset.ready = 'true';
      return;
    }
    const initial = this.multi ? null : this.initialWindow(tracks);
    const timeline = new Timeline({
      tracks,
      initial: initial ?? undefined,
      isDark: () => this.ctx.themes.current.dark,
      fetchWindow: async (req, sig) => {
        const params: KeyParams = {
          ...this.keyParams(),
          t0: String(req.t0),
          t1: String(req.t1),
          width: String(req.width),
          max_items: String(req.maxItems),
          tracks: req.tracks.join(','),
        };
        return this.ctx.api.getReady('trace', params, AbortSignal.any([sig, signal]));
      },
      fetchFlows: async (req, sig) => {
        const params: KeyParams = { ...this.keyParams(), t0: String(req.t0), t1: String(req.t1) };
        if (req.tracks.length) params.tracks = req.tracks.join(',');
        return this.ctx.api.getReady('flows', params, AbortSignal.any([sig, signal]));
      },
      onFrame: () => {
        this.element.dataset.ready = 'true';
      },
      onSelect: (ev) => void this.showEvent(ev),
      onArea: (area) => void this.showRange(area),
      onViewport: (t0, t1) => {
        if (!this.multi) this.url.write({ 'trace.t0': String(t0), 'trace.t1': String(t1) });
      },
    });
    this.timeline = timeline;
    timeline.setFlows(this.flowsOn);
    timeline.setSelectMode(this.selectMode);
    replaceChildren(this.tlHost, timeline.element);
  }

  private initialWindow(tracks: TracksResponse): { start: number; end: number } | null {
    const keys = this.url.read();
    const link = windowFromKeys(keys, tracks.start_us, tracks.end_us);
    if (keys.t0 !== undefined || keys.t1 !== undefined)
      this.url.write({ t0: undefined, t1: undefined });
    if (link) return link;
    const own = { t0: keys['trace.t0'] ?? '', t1: keys['trace.t1'] ?? '' };
    return windowFromKeys(own, tracks.start_us, tracks.end_us);
  }

  // ----- workers (ranks) -----

  private renderWorkerPicker(): void {
    if (this.allWorkers.length < 2) {
      replaceChildren(this.workerBox, null);
      return;
    }
    const chosen = new Set(this.workers);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const apply = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const next = this.allWorkers.map((w) => w.name).filter((n) => chosen.has(n));
        if (next.length === 0) next.push(this.ctx.key.worker);
        if (next.join(',') === this.workers.join(',')) return;
        this.workers = next;
        summary.textContent = summaryText();
        void this.load(false);
      }, 250);
    };
    const summaryText = (): string =>
      chosen.size === 1
        ? `Workers: ${[...chosen][0] ?? ''}`
        : `Workers: ${chosen.size} of ${this.allWorkers.length}`;
    const boxes = this.allWorkers.map((w) => {
      const box = h('input', {
        attrs: { type: 'checkbox', value: w.name, checked: chosen.has(w.name) },
        on: {
          change: () => {
            if (box.checked) chosen.add(w.name);
            else chosen.delete(w.name);
            apply();
          },
        },
      });
      return {
        box,
        el: h(
          'label',
          { class: 'ks-trace-worker', testid: `trace-worker-${w.name}` },
          box,
          workerLabel(w),
        ),
      };
    });
    const setAll = (names: string[]): void => {
      chosen.clear();
      for (const n of names) chosen.add(n);
      for (const { box } of boxes) box.checked = chosen.has(box.value);
      apply();
    };
    const summary = h(
      'summary',
      { class: 'ks-trace-button', testid: 'trace-workers' },
      summaryText(),
    );
    replaceChildren(
      this.workerBox,
      h(
        'details',
        { class: 'ks-trace-workers' },
        summary,
        h(
          'div',
          { class: 'ks-trace-workers-menu' },
          h(
            'div',
            { class: 'ks-trace-workers-actions' },
            h(
              'button',
              {
                class: 'ks-link-button',
                attrs: { type: 'button' },
                on: { click: () => setAll(this.allWorkers.map((w) => w.name)) },
              },
              'All',
            ),
            h(
              'button',
              {
                class: 'ks-link-button',
                attrs: { type: 'button' },
                on: { click: () => setAll([this.ctx.key.worker]) },
              },
              `Only ${this.ctx.key.worker}`,
            ),
          ),
          h(
            'div',
            { class: 'ks-trace-workers-list' },
            boxes.map((b) => b.el),
          ),
          h(
            'p',
            { class: 'ks-muted ks-small' },
            'Several workers share one time axis (epoch µs); tracks are labelled by rank.',
          ),
        ),
      ),
    );
  }

  // ----- panel -----

  private panelOpen(): boolean {
    return !this.panel.classList.contains('ks-closed');
  }

  private showTab(tab: PanelTab | null): void {
    if (tab && tab !== this.tab) this.panelBody.scrollTop = 0;
    if (tab) this.tab = tab;
    this.panel.classList.toggle('ks-closed', tab === null);
    this.panel.style.height = tab === null ? '' : `${this.panelHeight}px`;
    for (const key of Object.keys(this.tabs) as PanelTab[]) {
      const active = tab === key;
      this.tabs[key].setAttribute('aria-selected', String(active));
      this.tabs[key].classList.toggle('ks-active', active);
      this.bodies[key].hidden = !active;
    }
  }

  private bindSplitter(splitter: HTMLElement): void {
    splitter.addEventListener('pointerdown', (e) => {
      if (!this.panelOpen()) return;
      e.preventDefault();
      splitter.setPointerCapture(e.pointerId);
      const y0 = e.clientY;
      const h0 = this.panel.getBoundingClientRect().height;
      const move = (ev: PointerEvent): void => {
        const max = this.element.getBoundingClientRect().height - 220;
        this.panelHeight = Math.max(120, Math.min(max, h0 - (ev.clientY - y0)));
        this.panel.style.height = `${this.panelHeight}px`;
      };
      const up = (): void => {
        splitter.removeEventListener('pointermove', move);
        splitter.removeEventListener('pointerup', up);
      };
      splitter.addEventListener('pointermove', move);
      splitter.addEventListener('pointerup', up);
    });
  }

  private clearPanels(): void {
    this.detailsController?.abort();
    this.rangeController?.abort();
    this.rangeTable?.destroy();
    this.rangeTable = null;
    this.eventCache.clear();
    this.hits = [];
    this.hitIndex = -1;
    this.query = '';
    this.searchCount.textContent = '';
    replaceChildren(
      this.bodies.details,
      h(
        'p',
        { class: 'ks-muted ks-trace-empty' },
        'Click an event on the timeline to see its details.',
      ),
    );
    replaceChildren(
      this.bodies.range,
      h(
        'p',
        { class: 'ks-muted ks-trace-empty' },
        'Shift+drag on the timeline (or use “Select area”) to sum up a time range.',
      ),
    );
    replaceChildren(
      this.bodies.search,
      h(
        'p',
        { class: 'ks-muted ks-trace-empty' },
        'Type a name in the search box and press Enter.',
      ),
    );
    this.showTab(null);
  }

  // ----- event details and jumps -----

  private cacheKey(worker: string | null, row: number): string {
    return `${worker ?? ''}\u0000${row}`;
  }

  private async fetchEvent(
    worker: string | null,
    row: number,
    signal: AbortSignal,
  ): Promise<EventResponse> {
    const key = this.cacheKey(worker, row);
    const cached = this.eventCache.get(key);
    if (cached) return cached;
    const { run, span, worker: single } = this.ctx.key;
    const params = { ...eventParams(run, span, this.multi, worker, single), row: String(row) };
    const ev = await this.ctx.api.getReady('event', params, signal);
    if (this.eventCache.size > 50) this.eventCache.clear();
    this.eventCache.set(key, ev);
    return ev;
  }

  private async showEvent(sel: SelectedEvent | null): Promise<void> {
    this.detailsController?.abort();
    if (!sel) {
      replaceChildren(
        this.bodies.details,
        h(
          'p',
          { class: 'ks-muted ks-trace-empty' },
          'Click an event on the timeline to see its details.',
        ),
      );
      return;
    }
    const controller = new AbortController();
    this.detailsController = controller;
    this.showTab('details');
    replaceChildren(
      this.bodies.details,
      h(
        'p',
        { class: 'ks-muted ks-trace-empty', testid: 'trace-details-loading' },
        `Loading ${sel.name}…`,
      ),
    );
    try {
      const ev = await this.fetchEvent(
        sel.worker,
        sel.row,
        AbortSignal.any([controller.signal, this.ctx.signal]),
      );
      if (controller.signal.aborted) return;
      const origin = this.tracks?.start_us ?? 0;
      this.panelBody.scrollTop = 0;
      replaceChildren(
        this.bodies.details,
        renderEventDetails(ev, {
          origin,
          worker: sel.worker,
          trackLabel: (id) => {
            const t = id ? this.timeline?.trackOf(id) : undefined;
            return t ? `${t.process ? `${t.process} › ` : ''}${trackLabel(t)}` : (id ?? '—');
          },
          jump: (target) => void this.jump(target),
          zoom: () => this.timeline?.zoomTo(ev.ts - origin, ev.dur),
        }),
      );
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      replaceChildren(
        this.bodies.details,
        h('p', { class: 'ks-error-message', testid: 'trace-details-error' }, describeError(error)),
      );
    }
  }

  /** Selects an event known by its row: its details give its track, depth and time. */
  private async jump(target: JumpTarget): Promise<void> {
    const timeline = this.timeline;
    if (!timeline) return;
    try {
      const ev = await this.fetchEvent(target.worker, target.row, this.ctx.signal);
      const track = ev.track ?? target.track;
      if (!track || this.timeline !== timeline) return;
      const origin = this.tracks?.start_us ?? 0;
      timeline.select({
        trackId: track,
        worker: target.worker,
        row: ev.row,
        depth: ev.depth ?? 0,
        start: ev.ts - origin,
        dur: ev.dur,
        name: ev.name,
      });
    } catch (error) {
      if (!isAbort(error))
        replaceChildren(
          this.bodies.details,
          h('p', { class: 'ks-error-message' }, describeError(error)),
        );
    }
  }

  // ----- search -----

  private async search(dir: 1 | -1): Promise<void> {
    const timeline = this.timeline;
    const q = this.searchInput.value.trim();
    if (!timeline || !q) return;
    if (q !== this.query) {
      this.searchController?.abort();
      const controller = new AbortController();
      this.searchController = controller;
      this.query = q;
      this.searchCount.textContent = 'searching…';
      try {
        const params = { ...this.keyParams(), q, limit: String(SEARCH_LIMIT) };
        const resp = await this.ctx.api.getReady(
          'search',
          params,
          AbortSignal.any([controller.signal, this.ctx.signal]),
        );
        if (controller.signal.aborted) return;
        this.searchResp = resp;
        this.hits = searchHits(resp, this.tracks?.start_us ?? 0, this.multi);
        this.hitIndex = this.hits.length
          ? firstHitFrom(this.hits, timeline.viewport.start) - (dir > 0 ? 1 : -1)
          : -1;
        this.renderSearch();
      } catch (error) {
        if (isAbort(error) || controller.signal.aborted) return;
        this.query = '';
        this.searchCount.textContent = 'search failed';
        replaceChildren(
          this.bodies.search,
          h('p', { class: 'ks-error-message' }, describeError(error)),
        );
        this.showTab('search');
        return;
      }
    }
    if (!this.hits.length) {
      this.showTab('search');
      return;
    }
    this.goToHit(stepHit(this.hitIndex, this.hits.length, dir));
  }

  /** Selects a match; from the list, the list stays shown (its details are a tab away). */
  private goToHit(index: number, fromList = false): void {
    const hit = this.hits[index];
    if (!hit || !this.timeline) return;
    this.hitIndex = index;
    this.updateSearchCount();
    for (const el of this.bodies.search.querySelectorAll('.ks-active'))
      el.classList.remove('ks-active');
    const li = this.bodies.search.querySelector(`[data-hit="${index}"]`);
    li?.classList.add('ks-active');
    this.timeline.select({
      trackId: hit.track,
      worker: hit.worker,
      row: hit.row,
      depth: hit.depth,
      start: hit.ts,
      dur: hit.dur,
      name: hit.name,
    });
    if (fromList) this.showTab('search');
  }

  private updateSearchCount(): void {
    const resp = this.searchResp;
    const n = this.hits.length;
    if (!resp || n === 0) {
      this.searchCount.textContent = resp ? 'no matches' : '';
      return;
    }
    const more = resp.total > n ? ` (first ${formatCount(n)} of ${formatCount(resp.total)})` : '';
    this.searchCount.textContent = `${this.hitIndex + 1} / ${formatCount(n)}${more}`;
  }

  private renderSearch(): void {
    const resp = this.searchResp;
    if (!resp) return;
    this.updateSearchCount();
    const names = resp.names.slice(0, 12);
    replaceChildren(
      this.bodies.search,
      h(
        'div',
        {
          class: 'ks-search-results',
          testid: 'trace-search-results',
          dataset: { total: String(resp.total) },
        },
        h(
          'p',
          { class: 'ks-range-head' },
          h('strong', null, `${formatCount(resp.total)} events`),
          ` match “${resp.query}” in ${formatCount(resp.names.length)} name${resp.names.length === 1 ? '' : 's'}`,
          resp.truncated ? `; the first ${formatCount(this.hits.length)} by time are listed` : '',
          '. Enter / Shift+Enter step through them.',
        ),
        names.length
          ? h(
              'div',
              { class: 'ks-search-names' },
              names.map((n) =>
                h(
                  'span',
                  { class: 'ks-search-name', title: n.name },
                  h('span', null, n.name),
                  h('b', null, formatCount(n.count)),
                ),
              ),
            )
          : null,
        h(
          'ol',
          { class: 'ks-search-hits' },
          this.hits.map((hit, i) =>
            h(
              'li',
              { dataset: { hit: String(i) }, class: i === this.hitIndex ? 'ks-active' : undefined },
              h(
                'button',
                {
                  attrs: { type: 'button' },
                  testid: 'trace-search-hit',
                  on: { click: () => this.goToHit(i, true) },
                },
                h('span', { class: 'ks-hit-time' }, formatTimePrecise(hit.ts)),
                h('span', { class: 'ks-hit-dur' }, formatSpan(hit.dur)),
                h('span', { class: 'ks-hit-name', title: hit.name }, hit.name),
                h('span', { class: 'ks-hit-track' }, this.trackName(hit.track)),
              ),
            ),
          ),
        ),
      ),
    );
    this.showTab('search');
  }

  private trackName(id: string): string {
    const t = this.timeline?.trackOf(id);
    return t ? trackLabel(t) : id;
  }

  // ----- area summary -----

  private async showRange(area: AreaSelection | null): Promise<void> {
    this.rangeController?.abort();
    if (!area) return;
    const origin = this.tracks?.start_us ?? 0;
    const controller = new AbortController();
    this.rangeController = controller;
    this.showTab('range');
    replaceChildren(
      this.bodies.range,
      h('p', { class: 'ks-muted ks-trace-empty' }, `Summing up ${formatSpan(area.t1 - area.t0)}…`),
    );
    if (area.trackIds.length === 0) {
      replaceChildren(
        this.bodies.range,
        h('p', { class: 'ks-muted ks-trace-empty' }, 'The selection covers no event tracks.'),
      );
      return;
    }
    try {
      const params = {
        ...this.keyParams(),
        t0: String(area.t0 + origin),
        t1: String(area.t1 + origin),
        tracks: area.trackIds.join(','),
        limit: '2000',
      };
      const resp = await this.ctx.api.getReady(
        'range_summary',
        params,
        AbortSignal.any([controller.signal, this.ctx.signal]),
      );
      if (controller.signal.aborted) return;
      this.rangeTable?.destroy();
      const { element, table } = renderRangeSummary(resp, area.trackIds.length);
      this.rangeTable = table as unknown as VirtualTable<unknown>;
      replaceChildren(this.bodies.range, element);
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      replaceChildren(
        this.bodies.range,
        h('p', { class: 'ks-error-message' }, describeError(error)),
      );
    }
  }

  // ----- interop -----

  private openPerfetto(): void {
    const url = this.ctx.api.url('download', { ...this.ctx.key });
    const { run, worker, span } = this.ctx.key;
    openInPerfetto(
      async () => {
        const response = await fetch(url);
        if (!response.ok) throw new Error(`download: HTTP ${response.status}`);
        return response.arrayBuffer();
      },
      `${run} · ${worker} · span ${span}`,
      this.fileName || `${worker}.pt.trace.json`,
      (text) => {
        this.perfettoStatus.textContent = text;
      },
    ).catch((error: unknown) => {
      // Offline, the file can still be opened by hand: offer it right there.
      const offline = error instanceof PerfettoTimeout;
      replaceChildren(
        this.perfettoStatus,
        offline ? describeError(error) : `Perfetto: ${describeError(error)}`,
        offline
          ? [
              '. ',
              h(
                'a',
                { testid: 'trace-perfetto-download', attrs: { href: url, download: '' } },
                'Download the trace',
              ),
              ' and open it in Perfetto or chrome://tracing.',
            ]
          : null,
      );
    });
  }

  /** Anchors: "window:<t0>:<t1>" (absolute µs) or "row:<n>". */
  scrollTo(anchor: string): boolean {
    const timeline = this.timeline;
    const origin = this.tracks?.start_us;
    if (!timeline || origin === undefined) return false;
    const win = /^window:([^:]+):([^:]+)$/.exec(anchor);
    if (win) {
      const t0 = Number(win[1]);
      const t1 = Number(win[2]);
      if (!(t1 > t0)) return false;
      timeline.setViewport({ start: t0 - origin, end: t1 - origin });
      return true;
    }
    const row = /^row:(\d+)$/.exec(anchor);
    if (row) {
      void this.jump({
        row: Number(row[1]),
        track: null,
        worker: this.multi ? this.ctx.key.worker : null,
      });
      return true;
    }
    return false;
  }

  dispose(): void {
    for (const fn of this.cleanups) fn();
    this.loadController?.abort();
    this.detailsController?.abort();
    this.rangeController?.abort();
    this.searchController?.abort();
    this.rangeTable?.destroy();
    this.timeline?.dispose();
    this.element.remove();
  }
}

async function renderTrace(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureStyle('trace', css);
  const page = new TracePage(ctx);
  container.appendChild(page.element);
  try {
    await page.start();
  } catch (error) {
    page.dispose();
    throw error;
  }
  return {
    dispose: () => page.dispose(),
    scrollTo: (anchor) => page.scrollTo(anchor),
  };
}

export const traceView: ViewDef = {
  id: 'trace',
  label: 'Trace',
  render: renderTrace,
};
