// The Trace page's worker (rank) picker: a drop-down of check boxes, shown when the run
// has several workers with this span. Several workers share one time axis (epoch µs).

import type { WorkerInfo } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { workerLabel } from '../../components/labels';

/** Ticks settle this long before the page reloads, so a few clicks reload once. */
const SETTLE_MS = 250;

export interface WorkerPickerOptions {
  /** The workers that have the page's span, in their order. */
  all: readonly WorkerInfo[];
  /** The page's own worker: kept when every box is cleared. */
  own: string;
  /** The workers shown now. */
  shown: () => readonly string[];
  /** Called with a new choice (never empty, in the order of `all`). */
  onChange: (workers: string[]) => void;
}

interface WorkerBox {
  box: HTMLInputElement;
  label: HTMLElement;
}

function workerBox(worker: WorkerInfo, chosen: Set<string>, changed: () => void): WorkerBox {
  const box = h('input', {
    attrs: { type: 'checkbox', value: worker.name, checked: chosen.has(worker.name) },
    on: {
      change: () => {
        if (box.checked) chosen.add(worker.name);
        else chosen.delete(worker.name);
        changed();
      },
    },
  });
  const label = h(
    'label',
    { class: 'ks-trace-worker', testid: `trace-worker-${worker.name}` },
    box,
    workerLabel(worker),
  );
  return { box, label };
}

function linkButton(label: string, click: () => void): HTMLElement {
  return h('button', { class: 'ks-link-button', attrs: { type: 'button' }, on: { click } }, label);
}

/** Fills `host` with the picker, or empties it when there is no other worker to pick. */
export function renderWorkerPicker(host: HTMLElement, opts: WorkerPickerOptions): void {
  if (opts.all.length < 2) {
    replaceChildren(host, null);
    return;
  }
  const chosen = new Set(opts.shown());
  const summaryText = (): string =>
    chosen.size === 1
      ? `Workers: ${[...chosen][0] ?? ''}`
      : `Workers: ${chosen.size} of ${opts.all.length}`;
  const summary = h(
    'summary',
    { class: 'ks-trace-button', testid: 'trace-workers' },
    summaryText(),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const changed = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const next = opts.all.map((w) => w.name).filter((n) => chosen.has(n));
      if (next.length === 0) next.push(opts.own);
      if (next.join(',') === opts.shown().join(',')) return;
      summary.textContent = summaryText();
      opts.onChange(next);
    }, SETTLE_MS);
  };
  const boxes = opts.all.map((w) => workerBox(w, chosen, changed));
  const setAll = (names: string[]): void => {
    chosen.clear();
    for (const n of names) chosen.add(n);
    for (const { box } of boxes) box.checked = chosen.has(box.value);
    changed();
  };
  const menu = h(
    'div',
    { class: 'ks-trace-workers-menu' },
    h(
      'div',
      { class: 'ks-trace-workers-actions' },
      linkButton('All', () => setAll(opts.all.map((w) => w.name))),
      linkButton(`Only ${opts.own}`, () => setAll([opts.own])),
    ),
    h(
      'div',
      { class: 'ks-trace-workers-list' },
      boxes.map((b) => b.label),
    ),
    h(
      'p',
      { class: 'ks-muted ks-small' },
      'Several workers share one time axis (epoch µs); tracks are labelled by rank.',
    ),
  );
  replaceChildren(host, h('details', { class: 'ks-trace-workers' }, summary, menu));
}
