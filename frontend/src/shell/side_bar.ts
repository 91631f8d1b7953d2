// Pieces of the shell's side bar: the Runs / Workers / Spans / Views selectors, whose
// options follow the listing, and the chosen span's file and size.

import type { RunInfo, SpanInfo } from '../api/types';
import { h, replaceChildren, type Children } from '../components/dom';
import { formatBytes } from '../components/format';
import { selectField, type SelectField } from '../components/table_tools';
import { findRun, findWorker, runLabel, spanLabel, workerLabel, type Selection } from './selection';

/** A selector of the side bar: its options come later (setOptions). */
export function selector(
  label: string,
  testid: string,
  onChange: (value: string) => void,
): SelectField {
  return selectField(label, testid, [], '', onChange);
}

/** Shows these options (rebuilt only when they changed) with `value` chosen. */
export function setOptions(
  select: HTMLSelectElement,
  options: [string, string][],
  value: string,
): void {
  const same =
    select.options.length === options.length &&
    options.every(
      ([v, text], i) => select.options[i]?.value === v && select.options[i].text === text,
    );
  if (!same) {
    replaceChildren(
      select,
      options.map(([v, text]) => h('option', { attrs: { value: v } }, text)),
    );
  }
  select.value = value;
  select.disabled = options.length === 0;
}

/** The chosen span's file and size, or nothing. */
export function spanInfo(span: SpanInfo | undefined): Children {
  return span
    ? [
        h('div', { class: 'ks-side-file', title: span.file }, span.file),
        h('div', { class: 'ks-muted' }, formatBytes(span.size)),
      ]
    : null;
}

/** The Runs / Workers / Spans selectors and the span's file. */
export interface SelectorFields {
  run: SelectField;
  worker: SelectField;
  span: SelectField;
  info: HTMLElement;
}

/** Fills the selectors from the listing with `sel` chosen; a worker that could not be
 *  loaded (`failed`) says so in its label; a run without traces shows no Workers/Spans. */
export function fillSelectors(
  fields: SelectorFields,
  runs: readonly RunInfo[],
  sel: Selection | null,
  failed: (worker: string) => boolean,
): void {
  setOptions(
    fields.run.select,
    runs.map((r) => [r.name, runLabel(r)]),
    sel?.run ?? '',
  );
  const run = sel ? findRun(runs, sel.run) : undefined;
  setOptions(
    fields.worker.select,
    (run?.workers ?? []).map((w) => [
      w.name,
      `${workerLabel(w)}${failed(w.name) ? ' — failed' : ''}`,
    ]),
    sel?.worker ?? '',
  );
  const worker = sel ? findWorker(runs, sel) : undefined;
  setOptions(
    fields.span.select,
    (worker?.spans ?? []).map((s) => [s.name, spanLabel(s)]),
    sel?.span ?? '',
  );
  // A run of compile logs or memory snapshots alone has no trace: no empty boxes for it.
  const traced = (run?.workers.length ?? 0) > 0;
  fields.worker.el.hidden = !traced;
  fields.span.el.hidden = !traced;
  replaceChildren(fields.info, spanInfo(worker?.spans.find((s) => s.name === sel?.span)));
}
