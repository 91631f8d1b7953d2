// The critical path's tools beside the Trace page's toggle: a legend of the kinds the path
// holds (the colours its bands are drawn in) and ◀ ▶ to step along its segments in time
// order, each step bringing the segment into view (its track scrolled to, its time zoomed
// to) and naming it. Turning the path on shows the first step's whole path.

import { PATH_KIND_LABEL, pathKindColor } from '../../components/critical_path';
import { h, replaceChildren } from '../../components/dom';
import { formatDuration } from '../../components/format';
import type { PathMark } from './path_model';

/** The kinds present in `marks`, each once, in the order they first come. */
export function pathLegendKinds(marks: readonly PathMark[]): string[] {
  return [...new Set(marks.map((m) => m.kind))];
}

/**
 * The first step's whole path, what turning the path on shows: from its first segment
 * for the step's length (a first segment alone can be a 40 µs gap, too small to read).
 */
export function firstStepWindow(marks: readonly PathMark[], stepUs: number): PathMark | null {
  const first = marks[0];
  if (!first) return null;
  const end = Math.max(first.start + stepUs, first.start + first.dur);
  const inStep = marks.filter((m) => m.start < end);
  return {
    ...first,
    dur: end - first.start,
    name: `the first step's path (${inStep.length} segments)`,
  };
}

/** "3 of 120: aten::mm (CPU, 1.2 ms)". */
export function stepText(marks: readonly PathMark[], at: number): string {
  const mark = marks[at];
  if (!mark) return '';
  const kind = PATH_KIND_LABEL[mark.kind] ?? mark.kind;
  return `${at + 1} of ${marks.length}: ${mark.name} (${kind}, ${formatDuration(mark.dur)})`;
}

export class PathTools {
  private marks: PathMark[] = [];
  private at = 0;
  private readonly where: HTMLElement;

  constructor(
    private readonly element: HTMLElement,
    private readonly reveal: (mark: PathMark) => void,
  ) {
    this.where = h('span', { class: 'ks-small', testid: 'trace-path-step' });
  }

  /**
   * The path's marks (any order), the first step's whole path (`stepUs` long) brought
   * into view, ▶ then steps from its first segment; empty: no tools.
   */
  show(marks: readonly PathMark[], stepUs = 0): void {
    this.marks = [...marks].sort((a, b) => a.start - b.start);
    this.at = -1;
    if (!this.marks.length) {
      replaceChildren(this.element, null);
      return;
    }
    replaceChildren(
      this.element,
      legend(this.marks),
      stepButton('◀', 'trace-path-prev', 'Previous segment of the path', () => this.step(-1)),
      stepButton('▶', 'trace-path-next', 'Next segment of the path', () => this.step(1)),
      this.where,
    );
    const whole = firstStepWindow(this.marks, stepUs);
    if (!whole) return;
    this.where.textContent = `Showing ${whole.name}: ▶ steps along it`;
    this.where.dataset.at = '-1';
    this.reveal(whole);
  }

  clear(): void {
    this.show([]);
  }

  private step(by: number): void {
    this.go(Math.min(Math.max(this.at + by, 0), this.marks.length - 1));
  }

  private go(at: number): void {
    const mark = this.marks[at];
    if (!mark) return;
    this.at = at;
    this.where.textContent = stepText(this.marks, at);
    this.where.dataset.at = String(at);
    this.reveal(mark);
  }
}

function legend(marks: readonly PathMark[]): HTMLElement {
  return h(
    'span',
    { class: 'ks-trace-path-legend', testid: 'trace-path-legend' },
    pathLegendKinds(marks).map((kind) =>
      h(
        'span',
        { class: 'ks-trace-path-key', dataset: { kind } },
        h('span', { class: 'ks-trace-path-swatch', style: `background:${pathKindColor(kind)}` }),
        PATH_KIND_LABEL[kind] ?? kind,
      ),
    ),
  );
}

function stepButton(text: string, testid: string, title: string, onClick: () => void): HTMLElement {
  return h(
    'button',
    {
      class: 'ks-button ks-small',
      testid,
      attrs: { type: 'button', title },
      on: { click: onClick },
    },
    text,
  );
}
