// Building blocks of the table pages (Operator and Kernel views): toolbar fields, a
// search box, buttons, sort-change tracking for the virtual table, and a top-N pie.

import type { Theme } from './theme';
import type { OptionBuilder } from './chart';
import { chartFrame } from './chart_option';
import { h } from './dom';
import { escapeHtml } from './format';
import type { Column, VirtualTable } from './table';
import css from './table_tools.css';
import type { Slice } from './topn';
import type { SortSpec } from './url_values';
import { ensureStyle } from './view_style';

export function ensureTableToolsStyle(): void {
  ensureStyle('table-tools', css);
}

export interface SelectField {
  el: HTMLElement;
  select: HTMLSelectElement;
}

export function selectField(
  label: string,
  testid: string,
  options: readonly (readonly [string, string])[],
  value: string,
  onChange: (value: string) => void,
): SelectField {
  const select = h(
    'select',
    {
      class: 'ks-select',
      testid,
      attrs: { 'aria-label': label },
      on: { change: () => onChange(select.value) },
    },
    options.map(([v, text]) => h('option', { attrs: { value: v } }, text)),
  );
  select.value = value;
  return { el: labelled(label, select), select };
}

/** A control with its visible label, one `<label>` so a click on the text focuses it. */
function labelled(label: string, control: HTMLElement, extraClass = ''): HTMLElement {
  const cls = extraClass ? `ks-field ${extraClass}` : 'ks-field';
  return h('label', { class: cls }, h('span', { class: 'ks-field-label' }, label), control);
}

export interface SearchField {
  el: HTMLElement;
  input: HTMLInputElement;
  dispose: () => void;
}

/** A search box calling onChange after typing pauses (and at once on Enter). */
export function searchField(
  label: string,
  testid: string,
  placeholder: string,
  value: string,
  onChange: (value: string) => void,
  delayMs = 150,
): SearchField {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = value;
  const fire = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (input.value === last) return;
    last = input.value;
    onChange(input.value);
  };
  const input = h('input', {
    class: 'ks-input',
    testid,
    attrs: { type: 'search', placeholder, 'aria-label': label, spellcheck: 'false' },
    on: {
      input: () => {
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(fire, delayMs);
      },
      keydown: (event) => {
        if (event.key === 'Enter') fire();
      },
    },
  });
  input.addEventListener('search', fire); // the field's clear (×) button
  input.value = value;
  const el = labelled(label, input, 'ks-toolbar-grow');
  return {
    el,
    input,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

export function toolButton(
  label: string,
  testid: string,
  onClick: () => void,
  title?: string,
): HTMLButtonElement {
  return h(
    'button',
    { class: 'ks-btn', testid, title, attrs: { type: 'button' }, on: { click: onClick } },
    label,
  );
}

/** "Yes" / "No" with colour, for boolean columns. */
/** Yes / No, or Unknown for null: what the trace cannot tell is never shown as "No". */
export function yesNo(value: boolean | null): HTMLElement {
  if (value === null) return h('span', { class: 'ks-unknown' }, 'Unknown');
  return h('span', { class: value ? 'ks-yes' : 'ks-no' }, value ? 'Yes' : 'No');
}

/**
 * Reports the table's sort after the user clicks (or presses Enter/Space on) a header:
 * read back from aria-sort, which the table sets on the sorted column.
 */
export function onSortChange<R>(
  table: VirtualTable<R>,
  columns: readonly Column<R>[],
  onChange: (sort: SortSpec | undefined) => void,
): void {
  const report = (event: Event): void => {
    if (!(event.target instanceof Element) || !event.target.closest('[role="columnheader"]')) {
      return;
    }
    if (event instanceof KeyboardEvent && event.key !== 'Enter' && event.key !== ' ') return;
    const headers = Array.from(table.element.querySelectorAll('[role="columnheader"]'));
    const index = headers.findIndex((el) => el.hasAttribute('aria-sort'));
    const column = columns[index];
    if (!column) {
      onChange(undefined);
      return;
    }
    const dir = headers[index]?.getAttribute('aria-sort') === 'ascending' ? 'asc' : 'desc';
    onChange({ key: column.key, dir });
  };
  table.element.addEventListener('click', report);
  table.element.addEventListener('keydown', report);
}

/** Tableau 10 without its grey, which is kept for "Other". */
export const PIE_COLORS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#86bcb6',
  '#d37295',
];
export const OTHER_COLOR = '#9c9c9c';

export interface PieOptions {
  /** Formats a slice value for the tooltip. */
  format: (value: number) => string;
  /** Short legend label of a slice name (kernel names are long). */
  label?: (name: string) => string;
  /** Fixed colours by slice name (else the palette in order, grey for "Other"). */
  colors?: Record<string, string>;
  legendWidth?: number;
}

/** A donut of top-N slices with a scrollable legend on the right. */
export function pieOption(slices: readonly Slice[], opts: PieOptions): OptionBuilder {
  const label = opts.label ?? ((name: string) => name);
  let next = 0;
  const colorOf = new Map<string, string>();
  for (const s of slices) {
    const fixed = opts.colors?.[s.name];
    colorOf.set(
      s.name,
      fixed ?? (s.other ? OTHER_COLOR : (PIE_COLORS[next++ % PIE_COLORS.length] ?? OTHER_COLOR)),
    );
  }
  const byName = new Map(slices.map((s) => [s.name, s]));
  const legendWidth = opts.legendWidth ?? 230;
  return (theme: Theme) => ({
    ...chartFrame(theme, {
      trigger: 'item',
      confine: true,
      extraCssText: 'max-width: 460px; white-space: normal; overflow-wrap: anywhere;',
      formatter: (p: { name: string; value: number; percent: number }) =>
        `${escapeHtml(p.name)}<br/><b>${escapeHtml(opts.format(p.value))}</b> (${p.percent.toFixed(2)} %)`,
    }),
    legend: {
      type: 'scroll',
      orient: 'vertical',
      right: 0,
      top: 'middle',
      width: legendWidth,
      textStyle: { color: theme.text, width: legendWidth - 30, overflow: 'truncate' },
      pageTextStyle: { color: theme.textMuted },
      pageIconColor: theme.textMuted,
      itemWidth: 12,
      itemHeight: 10,
      tooltip: { show: true },
      formatter: (name: string) => {
        const s = byName.get(name);
        return s ? `${s.percent.toFixed(1)} %  ${label(name)}` : label(name);
      },
    },
    series: [
      {
        type: 'pie',
        // The pie's box leaves the legend's width free on the right.
        left: 0,
        right: legendWidth + 8,
        radius: ['40%', '72%'],
        avoidLabelOverlap: true,
        label: { show: false },
        itemStyle: { borderColor: theme.surface, borderWidth: 1 },
        data: slices.map((s) => ({
          name: s.name,
          value: s.value,
          itemStyle: { color: colorOf.get(s.name) },
        })),
      },
    ],
  });
}
