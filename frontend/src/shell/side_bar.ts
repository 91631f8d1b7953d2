// Pieces of the shell's side bar: the Runs / Workers / Spans / Views selectors, whose
// options follow the listing, and the chosen span's file and size.

import type { SpanInfo } from '../api/types';
import { h, replaceChildren, type Children } from '../components/dom';
import { formatBytes } from '../components/format';
import { selectField, type SelectField } from '../components/table_tools';

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
