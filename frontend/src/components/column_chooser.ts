// "Columns" menu of a table: a checkbox per column (the first, the row's name, always
// stays). Tables hide some columns when narrow or when they mean nothing for the trace;
// this is how the user gets them back.

import { h, replaceChildren } from './dom';

export interface ChooserColumn {
  key: string;
  label: string;
}

export class ColumnChooser {
  readonly element: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly boxes = new Map<string, HTMLInputElement>();

  constructor(
    columns: readonly ChooserColumn[],
    onToggle: (key: string, shown: boolean) => void,
    testid?: string,
  ) {
    this.summary = h('summary', { class: 'ks-col-chooser-summary' }, 'Columns');
    const items = columns.slice(1).map((column) => {
      const box = h('input', {
        attrs: { type: 'checkbox' },
        dataset: { col: column.key },
        on: { change: () => onToggle(column.key, box.checked) },
      });
      this.boxes.set(column.key, box);
      return h('label', { class: 'ks-col-chooser-item' }, box, column.label);
    });
    this.element = h(
      'details',
      { class: 'ks-col-chooser', testid: testid ? `${testid}-columns` : undefined },
      this.summary,
      h('div', { class: 'ks-col-chooser-menu' }, items),
    );
  }

  /** Ticks the shown columns and counts the hidden ones in the summary. */
  update(shown: ReadonlySet<string>): void {
    let hidden = 0;
    for (const [key, box] of this.boxes) {
      box.checked = shown.has(key);
      if (!box.checked) hidden += 1;
    }
    replaceChildren(this.summary, hidden ? `Columns (${hidden} hidden)` : 'Columns');
  }
}
