// A compact heat strip for many columns (e.g. hundreds of ranks): one row per metric, one
// column per item, the colour's opacity showing the value against the row's largest. It
// draws on one canvas, so a thousand columns cost the same as ten; columns narrower than
// a few pixels make it scroll sideways. Hover shows the column's numbers, click selects it.

import type { Theme, ThemeWatcher } from './theme';
import { h, replaceChildren } from './dom';
import { Redraw } from './redraw';
import { columnAt, intensity, layoutColumns, rgba, rowMax, tickEvery } from './heat_strip_model';
import { ensureStyle } from './view_style';

export interface HeatRow {
  key: string;
  label: string;
  color: string;
  /** One value per column; null: missing (drawn hatched). */
  values: readonly (number | null)[];
  /** Formats the row's largest value next to its label. */
  format: (value: number) => string;
  title?: string;
}

export interface HeatStripOptions {
  /** Column labels (drawn on the axis every few columns). */
  columns: readonly string[];
  rows: readonly HeatRow[];
  axisName?: string;
  /** Tooltip lines of a column. */
  tooltip: (column: number) => string[];
  onSelect?: (column: number) => void;
  selected?: number | undefined;
  testid?: string;
}

const ROW_H = 20;
const ROW_GAP = 3;
const AXIS_H = 20;

const CSS = `
.ks-heat { position: relative; display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 0 10px; }
.ks-heat-labels { display: flex; flex-direction: column; gap: ${ROW_GAP}px; font-size: 12px; }
.ks-heat-label { height: ${ROW_H}px; display: flex; align-items: center; gap: 6px; white-space: nowrap; }
.ks-heat-max { color: var(--ks-muted); font-size: 11px; }
.ks-heat-scroll { overflow-x: auto; overflow-y: hidden; }
.ks-heat-canvas { display: block; cursor: crosshair; }
.ks-heat-tip { position: absolute; z-index: 5; pointer-events: none; padding: 6px 9px; font-size: 12px;
  background: var(--ks-surface); color: var(--ks-text); border: 1px solid var(--ks-border-strong);
  border-radius: 4px; box-shadow: var(--ks-shadow); white-space: nowrap; line-height: 1.4; }
.ks-heat-tip div:first-child { font-weight: 500; }
`;

export class HeatStrip {
  readonly element: HTMLElement;
  private opts: HeatStripOptions;
  private readonly labels: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly tip: HTMLElement;
  private readonly redraw: Redraw;
  private cell = 8;
  private hover = -1;

  constructor(opts: HeatStripOptions, themes: ThemeWatcher) {
    ensureStyle('heat-strip', CSS);
    this.opts = opts;
    this.labels = h('div', { class: 'ks-heat-labels' });
    this.canvas = h('canvas', {
      class: 'ks-heat-canvas',
      role: 'img',
      on: {
        mousemove: (e) => this.onMove(e),
        mouseleave: () => this.onLeave(),
        click: (e) => this.onClick(e),
      },
    });
    this.scroller = h('div', { class: 'ks-heat-scroll' }, this.canvas);
    this.tip = h('div', { class: 'ks-heat-tip' });
    this.tip.hidden = true;
    this.element = h(
      'div',
      { class: 'ks-heat', testid: opts.testid, dataset: { columns: String(opts.columns.length) } },
      this.labels,
      this.scroller,
      this.tip,
    );
    this.redraw = new Redraw(themes, this.scroller, (theme) => this.draw(theme));
    this.renderLabels();
  }

  update(opts: Partial<HeatStripOptions>): void {
    this.opts = { ...this.opts, ...opts };
    this.element.dataset.columns = String(this.opts.columns.length);
    this.renderLabels();
    this.redraw.schedule();
  }

  destroy(): void {
    this.redraw.stop();
    this.element.remove();
  }

  private renderLabels(): void {
    replaceChildren(
      this.labels,
      this.opts.rows.map((row) =>
        h(
          'div',
          { class: 'ks-heat-label', title: row.title },
          h('span', { class: 'ks-swatch', style: `background:${row.color}` }),
          row.label,
          h('span', { class: 'ks-heat-max' }, `max ${row.format(rowMax(row.values))}`),
        ),
      ),
      h(
        'div',
        { class: 'ks-heat-label ks-muted', style: `height:${AXIS_H}px` },
        this.opts.axisName,
      ),
    );
    this.canvas.setAttribute(
      'aria-label',
      `${this.opts.rows.map((r) => r.label).join(', ')} for ${this.opts.columns.length} ${this.opts.axisName ?? 'columns'}`,
    );
  }

  private draw(theme: Theme): void {
    const { columns, rows, selected } = this.opts;
    const available = this.scroller.clientWidth || 600;
    const layout = layoutColumns(columns.length, available);
    this.cell = layout.cell;
    const height = rows.length * (ROW_H + ROW_GAP) + AXIS_H;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.max(1, Math.round(layout.width * ratio));
    this.canvas.height = Math.round(height * ratio);
    this.canvas.style.width = `${layout.width}px`;
    this.canvas.style.height = `${height}px`;
    const ctx = this.canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, layout.width, height);
    const gap = layout.cell >= 6 ? 1 : 0;
    rows.forEach((row, r) => {
      const y = r * (ROW_H + ROW_GAP);
      const max = rowMax(row.values);
      ctx.fillStyle = theme.gridLine;
      ctx.fillRect(0, y, layout.width, ROW_H);
      for (let c = 0; c < columns.length; c++) {
        const alpha = intensity(row.values[c] ?? null, max);
        const x = c * layout.cell;
        if (alpha === null) {
          ctx.fillStyle = theme.border;
          ctx.fillRect(x, y + ROW_H / 2 - 1, layout.cell - gap, 2);
          continue;
        }
        if (alpha === 0) continue;
        ctx.fillStyle = rgba(row.color, alpha);
        ctx.fillRect(x, y, layout.cell - gap, ROW_H);
      }
    });
    // Axis: a label every k columns.
    const axisY = rows.length * (ROW_H + ROW_GAP);
    const every = tickEvery(layout.cell);
    ctx.fillStyle = theme.textMuted;
    ctx.strokeStyle = theme.border;
    ctx.font = '11px Roboto, "Helvetica Neue", Arial, sans-serif';
    ctx.textBaseline = 'top';
    ctx.textAlign = 'center';
    for (let c = 0; c < columns.length; c += every) {
      const x = c * layout.cell + layout.cell / 2;
      ctx.beginPath();
      ctx.moveTo(x + 0.5, axisY);
      ctx.lineTo(x + 0.5, axisY + 4);
      ctx.stroke();
      const label = columns[c] ?? '';
      const clamped = Math.min(
        Math.max(x, ctx.measureText(label).width / 2),
        layout.width - ctx.measureText(label).width / 2,
      );
      ctx.fillText(label, clamped, axisY + 5);
    }
    for (const c of [selected, this.hover]) {
      if (c === undefined || c < 0 || c >= columns.length) continue;
      ctx.strokeStyle = c === selected ? theme.text : theme.textMuted;
      ctx.lineWidth = c === selected ? 2 : 1;
      ctx.strokeRect(c * layout.cell + 1, 1, Math.max(1, layout.cell - 2), axisY - ROW_GAP - 1);
      ctx.lineWidth = 1;
    }
  }

  private column(event: MouseEvent): number {
    const rect = this.canvas.getBoundingClientRect();
    return columnAt(event.clientX - rect.left, this.cell, this.opts.columns.length);
  }

  private onMove(event: MouseEvent): void {
    const c = this.column(event);
    if (c !== this.hover) {
      this.hover = c;
      this.redraw.schedule();
    }
    if (c < 0) {
      this.tip.hidden = true;
      return;
    }
    replaceChildren(
      this.tip,
      this.opts.tooltip(c).map((line) => h('div', null, line)),
    );
    this.tip.hidden = false;
    const host = this.element.getBoundingClientRect();
    const x = event.clientX - host.left + 14;
    const maxX = host.width - this.tip.offsetWidth - 4;
    this.tip.style.left = `${Math.max(0, x > maxX ? event.clientX - host.left - this.tip.offsetWidth - 14 : x)}px`;
    this.tip.style.top = `${event.clientY - host.top + 14}px`;
  }

  private onLeave(): void {
    this.tip.hidden = true;
    if (this.hover !== -1) {
      this.hover = -1;
      this.redraw.schedule();
    }
  }

  private onClick(event: MouseEvent): void {
    const c = this.column(event);
    if (c >= 0) this.opts.onSelect?.(c);
  }
}
