// The Trace page: our own canvas timeline over the server's level-of-detail routes, with
// event details, server-side search, area summaries, flows, several ranks at once, and
// optional hand-offs (download the file, open it in ui.perfetto.dev). Its parts:
// page_toolbar (search box, toggles, hand-offs), page_workers (the rank picker),
// page_panel (the tabbed bottom panel), page_event (event details and jumps),
// page_search (search and its results), page_range (area summaries).

import { describeError, isAbort } from '../../api/client';
import type { Routes, TracksResponse, WorkerInfo } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatCount } from '../../components/format';
import { HashParamStore } from '../../components/hash_params';
import { ensureStyle } from '../../components/view_style';
import { mountPage } from '../page_kit';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { formatSpan } from './axis';
import { CompileTrack, loadCompileView } from './compile_track';
import { windowFromKeys, workerParams, type KeyParams } from './model';
import { EventPane } from './page_event';
import { TracePanel } from './page_panel';
import { CriticalPathLayer } from './page_path';
import { RangePane } from './page_range';
import { TraceSearch } from './page_search';
import {
  bindSearchKey,
  openTraceInPerfetto,
  traceToolbar,
  type TraceToolbar,
} from './page_toolbar';
import type { TracePageHost } from './page_types';
import { renderWorkerPicker } from './page_workers';
import { loadingText } from './loading';
import { Timeline } from './timeline';
import type { Viewport } from './viewport';
import css from './trace.css';

/** The visible window in TensorBoard's URL (absolute µs of the worker's file), the
 * selected event (its row) and the search text, so a pasted link opens the same picture
 * (one worker; several on one axis keep none); plain t0/t1 (how other views link here)
 * are read once and replaced by these. A plain q (how the Diff page links here) is a
 * search run once the tracks are drawn; a plain sel (the Overview's health examples) an
 * event selected and scrolled into view. */
const URL_KEYS = ['trace.t0', 'trace.t1', 'trace.sel', 'trace.q'] as const;
const LINK_KEYS = ['t0', 't1', 'q', 'sel'] as const;

/** A box in the timeline's place: the tracks could not be loaded, or there are none. */
function notice(cls: string, testid: string, title: string, text: string): HTMLElement {
  return h('div', { class: cls, testid }, h('h3', null, title), h('p', null, text));
}

class TracePage implements TracePageHost {
  readonly element: HTMLElement;
  readonly ctx: ViewContext;
  readonly panel: TracePanel;
  private readonly url = new HashParamStore([...URL_KEYS, ...LINK_KEYS]);
  private workers: string[];
  private allWorkers: WorkerInfo[] = [];
  private fileName = '';

  private shown: Timeline | null = null;
  private tracks: TracksResponse | null = null;
  private loadController: AbortController | null = null;
  private flowsOn = false;
  private selectMode = false;
  /** A search asked for by the link that opened the page, run after the first frame. */
  private linkedQuery = '';
  /** A plain `sel` of a link: the row to select and reveal once the tracks are drawn. */
  private linkedRow: number | null = null;
  /** The selection and search of a pasted link, restored after the first frame without
   * moving the window. */
  private linkedState: { sel: number | null; q: string } | null = null;
  private restoring = false;
  /** The run's compile logs, when it has some: a compile track per shown worker. */
  private compileView: ReturnType<typeof loadCompileView> | null = null;
  private compile: CompileTrack | null = null;

  private readonly toolbar: TraceToolbar;
  private readonly search: TraceSearch;
  private readonly events: EventPane;
  private readonly range: RangePane;
  private readonly path: CriticalPathLayer;
  private readonly tlHost: HTMLElement;
  private readonly meta: HTMLElement;
  private readonly cleanups: (() => void)[] = [];

  constructor(ctx: ViewContext) {
    this.ctx = ctx;
    this.workers = [ctx.key.worker];
    this.meta = h('p', { class: 'ks-muted' });
    this.toolbar = traceToolbar(ctx.api.url('download', { ...ctx.key }), {
      search: (dir) => void this.search.step(dir),
      flows: (on) => {
        this.flowsOn = on;
        this.shown?.setFlows(on);
      },
      selectMode: (on) => {
        this.selectMode = on;
        this.shown?.setSelectMode(on);
      },
      resetZoom: () => this.shown?.resetZoom(),
      openPerfetto: () => this.openPerfetto(),
      criticalPath: (on) => this.path.toggle(on),
    });
    this.panel = new TracePanel(() => this.element.getBoundingClientRect().height);
    this.search = new TraceSearch(this, this.toolbar.searchInput, this.toolbar.searchCount);
    this.events = new EventPane(this);
    this.range = new RangePane(this);
    this.path = new CriticalPathLayer(this, () => this.tracks, this.toolbar);
    this.tlHost = h('div', { class: 'ks-trace-main' });
    this.element = h(
      'div',
      {
        class: 'ks-view ks-trace',
        testid: 'trace',
        dataset: { run: ctx.key.run, worker: ctx.key.worker, span: ctx.key.span },
      },
      h('header', { class: 'ks-view-head ks-trace-head' }, h('h2', null, 'Trace'), this.meta),
      this.toolbar.element,
      this.tlHost,
      this.panel.element,
    );
    const onScreen = (): boolean => this.element.offsetParent !== null;
    this.cleanups.push(bindSearchKey(this.toolbar.searchInput, onScreen));
    const input = this.toolbar.searchInput;
    input.addEventListener('input', () => this.keep({ 'trace.q': input.value.trim() }));
    this.cleanups.push(ctx.themes.subscribe(() => this.shown?.themeChanged()));
  }

  timeline(): Timeline | null {
    return this.shown;
  }

  origin(): number {
    return this.tracks?.start_us ?? 0;
  }

  multi(): boolean {
    return !(this.workers.length === 1 && this.workers[0] === this.ctx.key.worker);
  }

  keyParams(): KeyParams {
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
    renderWorkerPicker(this.toolbar.workerBox, {
      all: this.allWorkers,
      own: this.ctx.key.worker,
      shown: () => this.workers,
      onChange: (workers) => {
        this.workers = workers;
        void this.load(false);
      },
    });
    this.compileView = loadCompileView(this.ctx);
    await this.load(true);
  }

  private async load(first: boolean): Promise<void> {
    this.loadController?.abort();
    const controller = new AbortController();
    this.loadController = controller;
    const signal = AbortSignal.any([controller.signal, this.ctx.signal]);
    this.shown?.dispose();
    this.shown = null;
    this.clearPanels();
    replaceChildren(
      this.tlHost,
      h('div', { class: 'ks-trace-loading ks-muted', testid: 'trace-loading' }, 'Loading tracks…'),
    );
    this.element.dataset.ready = 'false';
    const tracks = await this.fetchTracks(signal, first);
    if (!tracks) return;
    this.tracks = tracks;
    this.meta.textContent = this.metaText(tracks);
    if (tracks.tracks.length === 0) {
      const text = 'This trace has no events with a time and duration.';
      replaceChildren(this.tlHost, notice('ks-panel', 'trace-empty', 'Nothing to draw', text));
      this.element.dataset.ready = 'true';
      return;
    }
    this.show(tracks, signal);
    void this.addCompileTrack(tracks, signal);
  }

  private show(tracks: TracksResponse, signal: AbortSignal, initial?: Viewport): void {
    this.shown?.dispose();
    const timeline = this.newTimeline(this.compile?.withTracks(tracks) ?? tracks, signal, initial);
    this.shown = timeline;
    timeline.setFlows(this.flowsOn);
    timeline.setSelectMode(this.selectMode);
    replaceChildren(this.tlHost, timeline.element);
  }

  /** Once the compile view answers (it may read the logs a while), the timeline again with
   *  a compile track on top, where the same window stays. */
  private async addCompileTrack(tracks: TracksResponse, signal: AbortSignal): Promise<void> {
    this.compile = null;
    const view = await this.compileView;
    if (!view || signal.aborted || this.tracks !== tracks || !this.shown) return;
    const compile = new CompileTrack(view, tracks, this.workers);
    if (compile.empty) return;
    this.compile = compile;
    this.show(tracks, signal, this.shown.viewport);
    this.element.dataset.compileTrack = 'true';
  }

  /** The tracks, or null when this load was replaced or failed (the failure said in place
   * of the timeline); the first load passes its failure on to the shell. */
  private async fetchTracks(signal: AbortSignal, first: boolean): Promise<TracksResponse | null> {
    try {
      return await this.ctx.api.getReady('tracks', this.keyParams(), signal, (status) => {
        const el = this.tlHost.querySelector('.ks-trace-loading');
        if (el) el.textContent = loadingText(status);
      });
    } catch (error) {
      if (isAbort(error) || signal.aborted) {
        if (first && this.ctx.signal.aborted) throw error;
        return null;
      }
      const why = describeError(error);
      const box = notice('ks-panel ks-error', 'trace-error', 'Could not load the tracks', why);
      replaceChildren(this.tlHost, box);
      if (first) throw error;
      return null;
    }
  }

  private metaText(tracks: TracksResponse): string {
    const { run, span, worker } = this.ctx.key;
    const slices = tracks.tracks.filter((t) => t.kind !== 'counter');
    const events = slices.reduce((n, t) => n + t.event_count, 0);
    const who = this.multi() ? `${this.workers.length} workers (epoch time)` : worker;
    return `${run} · ${who} · span ${span} · ${formatCount(tracks.tracks.length)} tracks · ${formatCount(events)} events · ${formatSpan(tracks.end_us - tracks.start_us)}`;
  }

  private newTimeline(tracks: TracksResponse, signal: AbortSignal, at?: Viewport): Timeline {
    const initial = at ?? (this.multi() ? null : this.initialWindow(tracks));
    const compile = this.compile;
    const server = (ids: string[]): string[] => ids.filter((id) => !compile?.owns(id));
    return new Timeline({
      tracks,
      initial: initial ?? undefined,
      isDark: () => this.ctx.themes.current.dark,
      fetchWindow: async (req, sig) => {
        const ids = server(req.tracks);
        if (compile && ids.length === 0) return compile.answer(req);
        const params = {
          ...this.keyParams(),
          t0: req.t0,
          t1: req.t1,
          width: req.width,
          max_items: req.maxItems,
          tracks: ids.join(','),
        };
        const resp = await this.ctx.api.getReady('trace', params, AbortSignal.any([sig, signal]));
        return compile ? compile.merged(resp, req.tracks) : resp;
      },
      fetchFlows: async (req, sig) => {
        const params: Routes['flows']['params'] = { ...this.keyParams(), t0: req.t0, t1: req.t1 };
        if (req.tracks.length) params.tracks = server(req.tracks).join(',');
        return this.ctx.api.getReady('flows', params, AbortSignal.any([sig, signal]));
      },
      onFrame: () => {
        if (this.element.dataset.ready !== 'true') this.path.refresh();
        this.element.dataset.ready = 'true';
        this.runLinkedQuery();
        this.selectLinkedRow();
        this.restoreLinkedState();
      },
      onSelect: (ev) => {
        if (ev && compile?.owns(ev.trackId)) {
          this.panel.show('details');
          this.panel.fill('details', compile.details(ev));
          return;
        }
        void this.events.show(ev);
        this.keep({ 'trace.sel': ev ? String(ev.row) : '' });
      },
      onArea: (area) => void this.range.show(area && { ...area, trackIds: server(area.trackIds) }),
      onViewport: (t0, t1) => {
        if (!this.multi()) this.url.write({ 'trace.t0': String(t0), 'trace.t1': String(t1) });
      },
    });
  }

  private runLinkedQuery(): void {
    const q = this.linkedQuery;
    if (!q) return;
    this.linkedQuery = '';
    this.toolbar.searchInput.value = q;
    this.keep({ 'trace.q': q });
    void this.search.step(1);
  }

  private selectLinkedRow(): void {
    const row = this.linkedRow;
    if (row === null) return;
    this.linkedRow = null;
    const worker = this.multi() ? this.ctx.key.worker : null;
    void this.events.jump({ row, track: null, worker });
  }

  /** Writes the selection or search to the URL (one worker only, as the window). */
  private keep(values: Partial<Record<'trace.sel' | 'trace.q', string>>): void {
    if (this.multi() || this.restoring) return; // not while a link's state is restored
    const update: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(values)) update[k] = v || undefined;
    this.url.write(update);
  }

  private restoreLinkedState(): void {
    const state = this.linkedState;
    if (!state) return;
    this.linkedState = null;
    this.restoring = true;
    const worker = this.multi() ? this.ctx.key.worker : null;
    const searched = state.q ? this.search.restore(state.q) : Promise.resolve();
    const selected =
      state.sel === null
        ? Promise.resolve()
        : this.events.jump({ row: state.sel, track: null, worker }, false);
    void Promise.allSettled([searched, selected]).then(() => {
      this.restoring = false;
    });
  }

  private initialWindow(tracks: TracksResponse): { start: number; end: number } | null {
    const keys = this.url.read();
    const link = windowFromKeys(keys, tracks.start_us, tracks.end_us);
    this.linkedQuery = keys.q?.trim() ?? '';
    const row = Number(keys.sel ?? 'NaN');
    this.linkedRow = Number.isInteger(row) && row >= 0 ? row : null;
    if (LINK_KEYS.some((k) => keys[k] !== undefined))
      this.url.write({ t0: undefined, t1: undefined, q: undefined, sel: undefined });
    if (link) return link;
    const sel = Number(keys['trace.sel'] ?? 'NaN');
    const q = keys['trace.q'] ?? '';
    if (!this.multi() && (Number.isInteger(sel) || q)) {
      this.linkedState = { sel: Number.isInteger(sel) && sel >= 0 ? sel : null, q };
    }
    const own = { t0: keys['trace.t0'] ?? '', t1: keys['trace.t1'] ?? '' };
    return windowFromKeys(own, tracks.start_us, tracks.end_us);
  }

  /** Every pane back to empty, its requests stopped (other tracks are loading). */
  private clearPanels(): void {
    this.events.reset();
    this.range.reset();
    this.search.reset();
    this.panel.reset();
  }

  private openPerfetto(): void {
    const { run, worker, span } = this.ctx.key;
    openTraceInPerfetto({
      url: this.ctx.api.url('download', { ...this.ctx.key }),
      title: `${run} · ${worker} · span ${span}`,
      fileName: this.fileName || `${worker}.pt.trace.json`,
      status: this.toolbar.perfettoStatus,
    });
  }

  /** Anchors: "window:<t0>:<t1>" (absolute µs) or "row:<n>". */
  scrollTo(anchor: string): boolean {
    const timeline = this.shown;
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
      const worker = this.multi() ? this.ctx.key.worker : null;
      void this.events.jump({ row: Number(row[1]), track: null, worker });
      return true;
    }
    return false;
  }

  dispose(): void {
    for (const fn of this.cleanups) fn();
    this.loadController?.abort();
    this.events.dispose();
    this.range.dispose();
    this.search.dispose();
    this.path.dispose();
    this.shown?.dispose();
    this.element.remove();
  }
}

async function renderTrace(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureStyle('trace', css);
  return mountPage(container, new TracePage(ctx));
}

export const traceView: ViewDef = {
  id: 'trace',
  label: 'Trace',
  order: 40,
  absent: 'it holds no events',
  render: renderTrace,
};
