// The Trace page's toolbar: the worker picker's place, the search box, the flow and area
// toggles, reset zoom, and the hand-offs (download the file, open it in ui.perfetto.dev).

import { describeError } from '../../api/client';
import { h, replaceChildren } from '../../components/dom';
import { isTypingTarget } from './keys';
import { openInPerfetto, PerfettoTimeout } from './perfetto';
import { keyDocuments } from './timeline';

export interface ToolbarActions {
  /** Next (1) or previous (-1) search match. */
  search: (dir: 1 | -1) => void;
  flows: (on: boolean) => void;
  selectMode: (on: boolean) => void;
  resetZoom: () => void;
  openPerfetto: () => void;
  criticalPath: (on: boolean) => void;
}

export interface TraceToolbar {
  element: HTMLElement;
  searchInput: HTMLInputElement;
  searchCount: HTMLElement;
  /** Where the worker picker goes (page_workers.ts). */
  workerBox: HTMLElement;
  /** Where the Perfetto hand-off says how it goes. */
  perfettoStatus: HTMLElement;
  /** What the critical path toggle shows (its length by kind). */
  pathStatus: HTMLElement;
  /** The path's legend and its ◀ ▶ stepping, filled while the path is on. */
  pathTools: HTMLElement;
}

const FLOWS_TITLE =
  "Draw every flow arrow in view (CPU launches → GPU kernels, forward → backward). Off: only the selected event's flows and those chained to them, or all when there are few";
const PATH_TITLE =
  "Highlight the critical path: the chain of work that set each step's length (with several ranks shown, across ranks)";
const PERFETTO_TITLE =
  'Open this trace in ui.perfetto.dev (needs internet): the file is sent to that page in a new tab, which opens it in your browser';

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

function searchStepButton(dir: 1 | -1, actions: ToolbarActions): HTMLElement {
  const next = dir > 0;
  return h(
    'button',
    {
      class: 'ks-trace-icon',
      testid: next ? 'trace-search-next' : 'trace-search-prev',
      title: next ? 'Next match (Enter)' : 'Previous match (Shift+Enter)',
      attrs: { type: 'button', 'aria-label': next ? 'Next match' : 'Previous match' },
      on: { click: () => actions.search(dir) },
    },
    next ? '›' : '‹',
  );
}

function searchForm(
  input: HTMLInputElement,
  count: HTMLElement,
  actions: ToolbarActions,
): HTMLFormElement {
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.shiftKey) {
      e.preventDefault();
      actions.search(-1);
    } else if (e.key === 'Escape') {
      input.blur();
    }
  });
  const submit = (e: SubmitEvent): void => {
    e.preventDefault();
    actions.search(1);
  };
  return h(
    'form',
    { class: 'ks-trace-search', attrs: { role: 'search' }, on: { submit } },
    input,
    searchStepButton(-1, actions),
    searchStepButton(1, actions),
    count,
  );
}

function viewTools(actions: ToolbarActions): HTMLElement {
  return h(
    'div',
    { class: 'ks-trace-tools' },
    toggleButton('All flows', 'trace-flows-toggle', FLOWS_TITLE, actions.flows),
    toggleButton(
      'Select area',
      'trace-select-toggle',
      'Drag to select a time range and sum up its events (Shift+drag works too)',
      actions.selectMode,
    ),
    toggleButton('Critical path', 'trace-path-toggle', PATH_TITLE, actions.criticalPath),
    h(
      'button',
      {
        class: 'ks-trace-button',
        testid: 'trace-reset-zoom',
        title: 'Show the whole trace (0)',
        attrs: { type: 'button' },
        on: { click: () => actions.resetZoom() },
      },
      'Reset zoom',
    ),
  );
}

function handOffTools(
  downloadUrl: string,
  status: HTMLElement,
  actions: ToolbarActions,
): HTMLElement {
  const download = h(
    'a',
    {
      class: 'ks-trace-button',
      testid: 'trace-download',
      title: 'Download the original trace file',
      attrs: { href: downloadUrl, download: '' },
    },
    'Download trace',
  );
  const perfetto = h(
    'button',
    {
      class: 'ks-trace-button',
      testid: 'trace-open-perfetto',
      title: PERFETTO_TITLE,
      attrs: { type: 'button' },
      on: { click: () => actions.openPerfetto() },
    },
    'Open in Perfetto ↗',
  );
  return h('div', { class: 'ks-trace-tools' }, status, download, perfetto);
}

export function traceToolbar(downloadUrl: string, actions: ToolbarActions): TraceToolbar {
  const searchInput = h('input', {
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
  const searchCount = h('span', { class: 'ks-trace-search-count', testid: 'trace-search-count' });
  const workerBox = h('div', { class: 'ks-trace-workers-wrap' });
  const perfettoStatus = h('span', { class: 'ks-muted ks-small', role: 'status' });
  const pathStatus = h('span', {
    class: 'ks-muted ks-small ks-trace-path-status',
    testid: 'trace-path-status',
    role: 'status',
  });
  const pathTools = h('span', { class: 'ks-trace-path-tools', testid: 'trace-path-tools' });
  const element = h(
    'div',
    { class: 'ks-trace-toolbar' },
    workerBox,
    searchForm(searchInput, searchCount, actions),
    viewTools(actions),
    pathStatus,
    pathTools,
    h('div', { class: 'ks-trace-spacer' }),
    handOffTools(downloadUrl, perfettoStatus, actions),
  );
  return { element, searchInput, searchCount, workerBox, perfettoStatus, pathStatus, pathTools };
}

/** "/" focuses the search box while `shown()`, unless one is typing; returns the unbinding. */
export function bindSearchKey(input: HTMLInputElement, shown: () => boolean): () => void {
  const onKey = (e: KeyboardEvent): void => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
    if (isTypingTarget(e.target) || !shown()) return;
    e.preventDefault();
    input.focus();
    input.select();
  };
  const docs = keyDocuments();
  for (const doc of docs) doc.addEventListener('keydown', onKey);
  return () => {
    for (const doc of docs) doc.removeEventListener('keydown', onKey);
  };
}

export interface PerfettoHandOff {
  /** The download route of the trace file. */
  url: string;
  /** What Perfetto titles the trace. */
  title: string;
  fileName: string;
  status: HTMLElement;
}

/** Opens the file in ui.perfetto.dev; offline, offers the file to open by hand instead. */
export function openTraceInPerfetto(handOff: PerfettoHandOff): void {
  const { url, status } = handOff;
  const fetchFile = async (): Promise<ArrayBuffer> => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`download: HTTP ${response.status}`);
    return response.arrayBuffer();
  };
  const progress = (text: string): void => {
    status.textContent = text;
  };
  openInPerfetto(fetchFile, handOff.title, handOff.fileName, progress).catch((error: unknown) => {
    const offline = error instanceof PerfettoTimeout;
    replaceChildren(
      status,
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
