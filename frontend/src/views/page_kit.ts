// The page kit: pieces the pages share (the page head, tiles, sections) and, for the table
// pages (Operators, Kernels), the toolbar's row count, busy label and error box, and the
// reload lifecycle that swaps the page's data for another grouping or filter (busy while
// any request runs; an older answer never lands over a newer one; a failure shows in the
// error box); and mounting a page object as a view (mountPage).

import { describeError, isAbort, ViewNotReady } from '../api/client';
import type { SpanKey, StatusResponse } from '../api/types';
import { scrollToAnchor } from '../components/anchor';
import { h, replaceChildren, type Children } from '../components/dom';
import { FetchSlot } from '../components/fetch_slot';
import { formatCount } from '../components/format';
import type { ViewHandle } from './types';

/** "Kernels" + "run · worker · span 1 · <summary>". */
export function viewHead(title: string, key: SpanKey, summary: string): HTMLElement {
  return h(
    'header',
    { class: 'ks-view-head' },
    h('h2', null, title),
    h('p', { class: 'ks-muted' }, `${key.run} · ${key.worker} · span ${key.span} · ${summary}`),
  );
}

/** A table page's root: `ks-view ks-<name>`, its span and grouping as data attributes. */
export function tablePageRoot(
  name: string,
  key: SpanKey,
  groupBy: string,
  extra: Record<string, string> = {},
): HTMLElement {
  return h('div', {
    class: `ks-view ks-${name}`,
    testid: name,
    dataset: {
      run: key.run,
      worker: key.worker,
      span: key.span,
      groupBy,
      busy: 'false',
      ...extra,
    },
  });
}

/** The notice for a trace file that was cut short, or null. */
export function partialNotice(status: StatusResponse): HTMLElement | null {
  return status.partial
    ? h(
        'div',
        { class: 'ks-notice ks-notice-warn', testid: 'partial-trace', role: 'note' },
        'This trace file was cut short; what could be read is shown.',
      )
    : null;
}

export function tile(label: string, value: string, detail?: string, testid?: string): HTMLElement {
  return h(
    'div',
    { class: 'ks-tile', testid },
    h('div', { class: 'ks-tile-label' }, label),
    h('div', { class: 'ks-tile-value' }, value),
    detail ? h('div', { class: 'ks-tile-detail', title: detail }, detail) : null,
  );
}

export interface SectionSpec {
  anchor: string;
  testid: string;
  title: string;
  /** A short muted paragraph under the title. */
  intro?: string;
}

export function section(spec: SectionSpec, ...children: Children[]): HTMLElement {
  return h(
    'section',
    { class: 'ks-section', dataset: { anchor: spec.anchor }, testid: spec.testid },
    h('h3', { class: 'ks-section-title' }, spec.title),
    spec.intro ? h('p', { class: 'ks-muted ks-small' }, spec.intro) : null,
    ...children,
  );
}

/** The toolbar's live parts; test ids are `<prefix>-count`, `-busy`, `-error`. */
export interface TableChrome {
  count: HTMLElement;
  busyLabel: HTMLElement;
  errorBox: HTMLElement;
}

export function tableChrome(prefix: string): TableChrome {
  const count = h('span', {
    class: 'ks-count',
    testid: `${prefix}-count`,
    attrs: { 'aria-live': 'polite' },
  });
  const busyLabel = h('span', { class: 'ks-busy-label', testid: `${prefix}-busy` }, 'Loading…');
  busyLabel.hidden = true;
  const errorBox = h('div', {
    class: 'ks-notice ks-notice-warn',
    testid: `${prefix}-error`,
    role: 'alert',
  });
  errorBox.hidden = true;
  return { count, busyLabel, errorBox };
}

/** "12 rows" or "3 of 12 rows", with data-rows for tests. */
export function showRowCount(count: HTMLElement, shown: number, total: number): void {
  count.textContent =
    shown === total
      ? `${formatCount(total)} rows`
      : `${formatCount(shown)} of ${formatCount(total)} rows`;
  count.dataset.rows = String(shown);
}

/**
 * The slot a table page reloads its data through: the page is busy while any request
 * runs; a failure restores the controls (`onFail`) and explains itself in the error box.
 */
export function reloadSlot(
  page: HTMLElement,
  chrome: TableChrome,
  what: string,
  onFail: () => void,
): FetchSlot {
  let pending = 0;
  const setBusy = (busy: boolean): void => {
    page.dataset.busy = String(busy);
    page.classList.toggle('ks-busy', busy);
    chrome.busyLabel.hidden = !busy;
  };
  return new FetchSlot({
    onStart: () => {
      pending += 1;
      setBusy(true);
      chrome.errorBox.hidden = true;
    },
    onEnd: () => {
      pending = Math.max(0, pending - 1);
      if (pending === 0) setBusy(false);
    },
    onError: (error) => {
      onFail();
      chrome.errorBox.textContent =
        error instanceof ViewNotReady
          ? 'The trace is being reloaded; try again in a moment.'
          : `Could not load ${what}: ${describeError(error)}`;
      chrome.errorBox.hidden = false;
    },
  });
}

/** A page object a view mounts: its root, its first load (it is filled once it is in the
 *  document: its charts need a size), its teardown, and optionally its own anchor jumps. */
export interface MountablePage {
  readonly element: HTMLElement;
  start(): Promise<void>;
  dispose(): void;
  scrollTo?(anchor: string): boolean;
}

/**
 * Puts the page in the container and starts it; the view's handle once started. A page
 * that fails to start is disposed (it may hold listeners and requests) and the error passed on.
 */
export async function mountPage(container: HTMLElement, page: MountablePage): Promise<ViewHandle> {
  container.appendChild(page.element);
  try {
    await page.start();
  } catch (error) {
    page.dispose();
    throw error;
  }
  return {
    dispose: () => page.dispose(),
    scrollTo: (anchor) => page.scrollTo?.(anchor) ?? scrollToAnchor(page.element, anchor),
  };
}

/** Marks a page built hidden ready once its charts are drawn. They are drawn once the
 *  shell shows the page (see ChartHandle.drawn): its start() must not wait for them. A
 *  chart that could not be drawn (ECharts failed to load) is logged, and the page, its
 *  tables shown, is ready all the same: nothing more is coming. */
export function whenChartsDrawn(page: HTMLElement, drawn: Promise<unknown>): void {
  drawn
    .catch((error: unknown) => console.error(error))
    .finally(() => {
      page.dataset.ready = 'true';
    });
}

/** What a run-level page shows while its route computes, and if it fails. */
export interface RunPageLoad<T> {
  loading: HTMLElement;
  fetch: () => Promise<T>;
  show: (view: T) => Promise<void>;
  /** The error panel's test id and heading. */
  errorTestid: string;
  errorTitle: string;
}

/** A run-level page's data: `loading` in `root` until `fetch` answers, then `show`; a
 *  failure (not the user leaving, `signal`) replaces it with an error panel. */
export async function loadRunPage<T>(
  root: HTMLElement,
  signal: AbortSignal,
  load: RunPageLoad<T>,
): Promise<void> {
  replaceChildren(root, load.loading);
  try {
    const view = await load.fetch();
    if (signal.aborted) return;
    await load.show(view);
  } catch (error) {
    if (isAbort(error) || signal.aborted) return;
    replaceChildren(
      root,
      h(
        'div',
        { class: 'ks-panel ks-error', testid: load.errorTestid, role: 'alert' },
        h('h3', null, load.errorTitle),
        h('p', { class: 'ks-error-message' }, describeError(error)),
      ),
    );
  }
}
