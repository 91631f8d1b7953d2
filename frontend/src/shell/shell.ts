// The shell: Run / Worker / Span / View selectors on the left, the view on the right.
// It owns the selection (mirrored in TensorBoard's URL), polls `runs` for new data,
// polls `status` while a worker-span loads, and calls a view route only once `ready`.

import { editorSettingsPanel, useSourceSpan } from './editor_settings';
import { describeError, isAbort, ViewNotReady, type ApiClient } from '../api/client';
import type { RunInfo, StatusResponse } from '../api/types';
import { h, replaceChildren } from '../components/dom';
import type { SelectField } from '../components/table_tools';
import { getRunView, getView, VIEW_IDS, viewLabel } from '../views/registry';
import { AbsentNotice } from './absent';
import type { RunViewContext, ViewHandle } from '../views/types';
import { Repeater } from '../api/poll';
import { settledStatus } from './status_poll';
import { isRunView, lockWorkerList, runViewInstead, runViewsOf } from './run_views';
import { chooseView, reconcile, sameSelection, type Selection } from './selection';
import type { ThemeWatcher } from '../components/theme';
import { CompareControl, DIFF_VIEW } from './compare';
import { loadingPanel, messagePanel, workerErrorPanel } from './panels';
import { HealthMarks } from './health_marks';
import { fillSelectors, selector, setOptions } from './side_bar';
import { sameState, type UrlState, type UrlStateStore } from './url_state';

export const RUNS_POLL_MS = 10_000;

function keyOf(sel: Selection): string {
  return JSON.stringify([sel.run, sel.worker, sel.span]);
}

/** What every view's context holds, worker view or run-level. */
type CommonContext = Pick<RunViewContext, 'api' | 'themes' | 'signal' | 'viewLabel' | 'link'>;

export class Shell {
  private readonly api: ApiClient;
  private readonly themes: ThemeWatcher;
  private readonly url: UrlStateStore;

  private runs: RunInfo[] = [];
  private selection: Selection | null = null;
  /** The view the user asked for (kept even while a worker cannot show it). */
  private wantedView: string | undefined;
  private currentView: string | undefined;
  private status: StatusResponse | null = null;
  private readonly failed = new Map<string, string>();
  private readonly marks = new HealthMarks(() => this.renderSelectors(this.selection));
  private loadController: AbortController | undefined;
  private viewController: AbortController | undefined;
  private viewHandle: ViewHandle | undefined;
  private readonly runsPoller: Repeater;

  private readonly runSel: SelectField;
  private readonly workerSel: SelectField;
  private readonly spanSel: SelectField;
  private readonly viewSel: SelectField;
  private readonly compare: CompareControl;
  private readonly info: HTMLElement;
  private readonly main: HTMLElement;
  private readonly banner: HTMLElement;
  private readonly absent = new AbsentNotice(); // why a view asked for is not shown

  constructor(root: HTMLElement, api: ApiClient, themes: ThemeWatcher, url: UrlStateStore) {
    this.api = api;
    this.themes = themes;
    this.url = url;
    this.runsPoller = new Repeater(RUNS_POLL_MS, () => this.refreshRuns());

    this.runSel = selector('Runs', 'run-select', (v) => this.choose({ run: v }));
    this.workerSel = selector('Workers', 'worker-select', (v) => this.choose({ worker: v }));
    this.spanSel = selector('Spans', 'span-select', (v) => this.choose({ span: v }));
    this.viewSel = selector('Views', 'view-select', (v) => this.chooseView(v));
    this.compare = new CompareControl(() => this.onCompare());
    this.info = h('div', { class: 'ks-side-info', testid: 'span-info' });
    this.banner = h('div', { class: 'ks-banner', testid: 'shell-banner', role: 'status' });
    this.banner.hidden = true;
    this.main = h('main', { class: 'ks-main', testid: 'main' });

    const side = h(
      'aside',
      { class: 'ks-side' },
      h('div', { class: 'ks-brand' }, 'PyTorch Profiler'),
      this.runSel.el,
      this.workerSel.el,
      this.spanSel.el,
      this.viewSel.el,
      this.compare.field.el,
      this.info,
      editorSettingsPanel(),
    );
    replaceChildren(
      root,
      h(
        'div',
        { class: 'ks-app' },
        side,
        h('div', { class: 'ks-content' }, this.banner, this.absent.element, this.main),
      ),
    );
  }

  async start(): Promise<void> {
    const state = this.url.read();
    this.wantedView = state.view;
    this.showLoading('Loading runs…', null);
    await this.refreshRuns(state);
    this.runsPoller.start();
    this.url.watch((next) => this.onUrlChange(next));
  }

  stop(): void {
    this.runsPoller.stop();
    this.url.unwatch();
    this.loadController?.abort();
    this.disposeView();
  }

  // ----- listing -----

  private async refreshRuns(wanted?: UrlState): Promise<void> {
    let runs: RunInfo[];
    try {
      const answer = await this.api.get('runs', {});
      if ('loading' in answer) {
        // 202: the first listing of the logdir is still under way (a slow object store).
        this.showBanner('Listing the logdir… (an object store can be slow)');
        return;
      }
      runs = answer.runs;
    } catch (error) {
      this.showBanner(`Cannot list runs: ${describeError(error)}. Retrying…`);
      if (!this.selection)
        this.showMessage('shell-error', 'Cannot reach the profiler plugin.', describeError(error));
      return;
    }
    this.hideBanner();
    this.runs = runs;
    const next = reconcile(runs, wanted ?? this.selection ?? {});
    this.renderSelectors(next);
    if (!next) {
      this.selection = null;
      this.loadController?.abort();
      this.disposeView();
      this.renderViewSelector();
      this.showMessage(
        'no-runs',
        'No profiler traces yet',
        'No *.pt.trace.json(.gz) files were found under the logdir. Runs appear here as soon as the profiler writes them; this page checks every 10 seconds.',
      );
      return;
    }
    if (!sameSelection(next, this.selection)) {
      this.selection = next;
      this.writeUrl();
      void this.loadSpan();
    } else if (
      isRunView(this.currentView) &&
      !runViewsOf(this.runs, next).includes(this.currentView ?? '')
    ) {
      void this.loadSpan(); // the run no longer offers the run-level view shown
    } else {
      this.renderViewSelector();
    }
  }

  private onUrlChange(state: UrlState): void {
    // The Compare with… target lives in the URL too: its control follows it first, so the
    // views offered below are the URL's.
    const targetMoved = this.compare.render(this.runs);
    const current: UrlState = {
      ...(this.selection ?? {}),
      view: this.currentView ?? this.wantedView,
    };
    if (sameState(state, current)) {
      if (targetMoved) this.onCompare();
      return;
    }
    this.wantedView = state.view ?? this.wantedView;
    const next = reconcile(this.runs, state);
    if (next && !sameSelection(next, this.selection)) {
      this.selection = next;
      this.renderSelectors(next);
      void this.loadSpan();
    } else if (state.view && state.view !== this.currentView) {
      this.chooseView(state.view);
    }
  }

  private choose(change: Partial<Selection>): void {
    const base = this.selection ?? { run: '', worker: '', span: '' };
    const wanted: Partial<Selection> = { ...base, ...change };
    // A new run keeps the worker and span names when it has them; a new worker keeps the span.
    const next = reconcile(this.runs, wanted);
    if (!next || sameSelection(next, this.selection)) return;
    this.selection = next;
    this.renderSelectors(next);
    this.writeUrl();
    void this.loadSpan();
  }

  private chooseView(view: string, anchor?: string): void {
    this.wantedView = view;
    if (this.selection && runViewsOf(this.runs, this.selection).includes(view)) {
      if (view === this.currentView && this.viewHandle) {
        if (anchor) this.viewHandle.scrollTo?.(anchor);
        return;
      }
      this.writeUrl(view);
      void this.renderRunView(this.selection, view, anchor);
      return;
    }
    if (this.status?.state !== 'ready' || !this.selection) {
      if (isRunView(this.currentView)) void this.loadSpan(); // back to a worker view: load it
      return;
    }
    const offered = chooseView(this.compare.offer(this.status.views), VIEW_IDS, view);
    this.absent.note(offered === view ? undefined : view, this.currentView);
    if (offered !== view) return;
    if (view === this.currentView && this.viewHandle) {
      if (anchor) this.viewHandle.scrollTo?.(anchor);
      return;
    }
    this.viewSel.select.value = view;
    this.writeUrl(view);
    void this.renderView(this.selection, this.status, view, anchor);
  }

  /** A new target (or none) in the URL: show its Diff, or leave the Diff page. */
  private onCompare(): void {
    const sel = this.selection;
    const status = this.status;
    const showing = this.currentView === DIFF_VIEW;
    if (!this.compare.target()) {
      if (showing && VIEW_IDS[0]) this.chooseView(VIEW_IDS[0]);
      else this.renderViewSelector();
    } else if (showing && sel && status?.state === 'ready') {
      void this.renderView(sel, status, DIFF_VIEW);
    } else {
      this.chooseView(DIFF_VIEW);
    }
  }

  private writeUrl(view?: string): void {
    if (!this.selection) return;
    this.url.write({ ...this.selection, view: view ?? this.currentView ?? this.wantedView });
  }

  private renderSelectors(sel: Selection | null): void {
    const { runSel, workerSel, spanSel, info } = this;
    fillSelectors({ run: runSel, worker: workerSel, span: spanSel, info }, this.runs, sel, (w) =>
      sel ? this.failed.has(keyOf({ ...sel, worker: w })) : false,
    );
    this.marks.label(workerSel.select, runSel.select, sel);
    this.compare.render(this.runs);
    this.lockWorkers();
  }

  // ----- run-level views (the run's listing offers them; no worker is loaded) -----

  private lockWorkers(): void {
    lockWorkerList(this.workerSel, this.currentView);
  }

  private async renderRunView(sel: Selection, viewId: string, anchor?: string): Promise<void> {
    const def = getRunView(viewId);
    if (!def) return;
    this.absent.hide();
    this.loadController?.abort(); // stop polling a worker: this view does its own loading
    await this.mountView(
      viewId,
      def.label,
      (container, common) => def.render(container, { ...common, run: sel.run, span: sel.span }),
      anchor,
    );
  }

  /** The worker-span's views (once ready), then the run's run-level views. */
  private renderViewSelector(): void {
    const sel = this.selection;
    const status = this.status;
    const ready = status?.state === 'ready';
    let views = ready ? this.compare.offer(status.views).filter((v) => VIEW_IDS.includes(v)) : [];
    // Shown without loading the worker: offer its default view as the way back.
    if (!views.length && isRunView(this.currentView) && VIEW_IDS[0]) views = [VIEW_IDS[0]];
    if (sel) views = views.concat(runViewsOf(this.runs, sel));
    setOptions(
      this.viewSel.select,
      views.map((v) => [v, viewLabel(v)]),
      this.currentView ?? '',
    );
  }

  // ----- loading a worker-span -----

  private async loadSpan(): Promise<void> {
    const sel = this.selection;
    if (!sel) return;
    this.loadController?.abort();
    this.disposeView();
    const controller = new AbortController();
    this.loadController = controller;
    this.status = null;
    this.currentView = undefined;
    const runView = runViewInstead(this.runs, sel, this.wantedView);
    if (runView !== undefined) {
      await this.renderRunView(sel, runView);
      return;
    }
    this.lockWorkers();
    this.renderViewSelector();
    const title = `Loading ${sel.worker}, span ${sel.span}…`;
    this.showLoading(title, null);
    try {
      const status = await settledStatus(this.api, { ...sel }, controller.signal, (s, seconds) =>
        this.showLoading(title, s, seconds),
      );
      if (!status) return;
      if (status.state === 'ready') await this.showReady(sel, status, controller.signal);
      else this.showFailed(sel, status);
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      this.showMessage('load-error', 'Could not load this trace', describeError(error));
    }
  }

  private async showReady(
    sel: Selection,
    status: StatusResponse,
    signal: AbortSignal,
  ): Promise<void> {
    this.status = status;
    this.failed.delete(keyOf(sel));
    useSourceSpan(this.api, sel);
    const view = chooseView(this.compare.offer(status.views), VIEW_IDS, this.wantedView);
    this.currentView = view;
    this.absent.note(view === this.wantedView ? undefined : this.wantedView, view);
    this.renderViewSelector();
    if (!view) {
      const why = 'This trace loaded, but holds no data any view of this version can show.';
      this.showMessage('no-views', 'Nothing to show', why);
      return; // nor has it a health answer (an Overview section): no mark to ask for
    }
    this.writeUrl(view);
    // The side bar's health mark is asked once the view has its answer, not beside it: the
    // server then computed both at once (a 1 GB trace's Overview came ~0.13 s of CPU
    // later), and after the Overview the health answer is already made (its checks).
    const mark = (): void => void this.marks.fetch(this.api, sel, signal);
    await this.renderView(sel, status, view).finally(mark);
  }

  private showFailed(sel: Selection, status: StatusResponse): void {
    this.status = status;
    this.failed.set(keyOf(sel), status.error?.message ?? 'error');
    this.renderSelectors(sel);
    this.showWorkerError(status);
  }

  private disposeView(): void {
    this.viewController?.abort();
    this.viewController = undefined;
    this.viewHandle?.dispose();
    this.viewHandle = undefined;
  }

  private async renderView(
    sel: Selection,
    status: StatusResponse,
    viewId: string,
    anchor?: string,
  ): Promise<void> {
    const def = getView(viewId);
    if (!def) return;
    await this.mountView(
      viewId,
      def.label,
      (container, common) =>
        def.render(container, {
          ...common,
          key: { ...sel },
          status,
          views: status.views.filter((v) => VIEW_IDS.includes(v)),
          runViews: runViewsOf(this.runs, sel),
          navigate: (view, target) => this.chooseView(view, target),
        }),
      anchor,
    );
  }

  /** Replaces the shown view; a worker view or a run-level one. */
  private async mountView(
    viewId: string,
    label: string,
    render: (container: HTMLElement, common: CommonContext) => Promise<ViewHandle>,
    anchor?: string,
  ): Promise<void> {
    this.disposeView();
    const controller = new AbortController();
    this.viewController = controller;
    this.currentView = viewId;
    this.renderViewSelector();
    this.lockWorkers();
    const container = h('div', { class: 'ks-view-host', dataset: { view: viewId } });
    replaceChildren(
      this.main,
      h('div', { class: 'ks-loading ks-loading-view', testid: 'loading' }, `Loading ${label}…`),
      container,
    );
    container.hidden = true;
    try {
      const { api, themes } = this;
      const handle = await render(container, {
        api,
        themes,
        signal: controller.signal,
        viewLabel,
        link: (values) => this.url.href(values),
      });
      if (controller.signal.aborted) {
        handle.dispose();
        return;
      }
      this.viewHandle = handle;
      this.main.querySelector('.ks-loading-view')?.remove();
      container.hidden = false;
      if (anchor) handle.scrollTo?.(anchor);
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      if (error instanceof ViewNotReady) {
        void this.loadSpan();
        return;
      }
      console.error(error);
      this.showMessage('view-error', `Could not show ${label}`, describeError(error));
    }
  }

  private showLoading(title: string, status: StatusResponse | null, seconds?: number): void {
    replaceChildren(this.main, loadingPanel(title, status, seconds));
  }

  private showWorkerError(status: StatusResponse): void {
    replaceChildren(this.main, workerErrorPanel(status));
  }

  private showMessage(testid: string, title: string, message: string): void {
    replaceChildren(this.main, messagePanel(testid, title, message));
  }

  private showBanner(text: string): void {
    this.banner.textContent = text;
    this.banner.hidden = false;
  }

  private hideBanner(): void {
    this.banner.hidden = true;
  }
}
