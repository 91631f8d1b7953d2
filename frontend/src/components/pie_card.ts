// A card holding a top-N pie (components/table_tools.ts pieOption), with optional
// controls in its title row. The chart is created on the first non-empty data, and a
// note replaces it while there is nothing to show.

import type { ThemeWatcher } from './theme';
import { createChart, type ChartHandle } from './chart';
import { h } from './dom';
import { pieOption, type PieOptions } from './table_tools';
import type { Slice } from './topn';

export class PieCard {
  readonly element: HTMLElement;
  private readonly chartEl: HTMLElement;
  private readonly note: HTMLElement;
  private readonly themes: ThemeWatcher;
  private chart: ChartHandle | undefined;
  private pending: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(
    title: string,
    testid: string,
    themes: ThemeWatcher,
    controls?: HTMLElement | null,
    emptyText = 'No time recorded.',
  ) {
    this.themes = themes;
    this.chartEl = h('div', { class: 'ks-chart-pie', testid: `${testid}-chart` });
    this.note = h('p', { class: 'ks-muted ks-note', testid: `${testid}-empty` }, emptyText);
    this.note.hidden = true;
    this.element = h(
      'div',
      { class: 'ks-card ks-chart-card', testid },
      h('div', { class: 'ks-chart-head' }, h('h4', { class: 'ks-card-title' }, title), controls),
      this.chartEl,
      this.note,
    );
  }

  /** Shows the slices (queued after any previous update); settles once they are drawn. A
   *  page built hidden must not wait for it before it is shown (see ChartHandle.drawn). */
  set(slices: readonly Slice[], opts: PieOptions): Promise<void> {
    this.pending = this.pending.then(() => this.apply(slices, opts));
    return this.pending;
  }

  dispose(): void {
    this.disposed = true;
    this.chart?.dispose();
    this.chart = undefined;
    this.element.remove();
  }

  private isDisposed(): boolean {
    return this.disposed;
  }

  private async apply(slices: readonly Slice[], opts: PieOptions): Promise<void> {
    if (this.disposed) return;
    const empty = slices.length === 0;
    this.chartEl.hidden = empty;
    this.note.hidden = !empty;
    this.element.dataset.slices = String(slices.length);
    this.element.dataset.top = slices[0]?.name ?? '';
    if (empty) return;
    const build = pieOption(slices, opts);
    if (this.chart) {
      this.chart.update(build);
      return;
    }
    const chart = await createChart(this.chartEl, build, this.themes);
    if (this.isDisposed()) {
      chart.dispose();
      return;
    }
    this.chart = chart;
    await chart.drawn; // set() settles once the pie is drawn (a page's data-ready follows)
  }
}
