// The iterations as a strip on the trace's time axis, coloured by phase: per iteration its
// engine marker on the host (upper lane) and the span of the GPU work it launched (lower
// lane, paler the more of it is idle), on one canvas (thousands of decode steps cost what
// ten do). Hover shows the iteration's numbers; a click opens the trace view at it:
// a real link (target _top, as every link of the plugin) sits over the hovered box, so
// the browser follows it as any link.

import type { Iteration, ServingView } from '../../api/types';
import { h } from '../../components/dom';
import { formatDurationAxis } from '../../components/format';
import { Redraw } from '../../components/redraw';
import type { Theme, ThemeWatcher } from '../../components/theme';
import { ensureStyle } from '../../components/view_style';
import { boxAt, iterationLines, phaseColor, stripBoxes, type StripBox } from './model';

const BAR_H = 30;
const LANE_H = 12; // two lanes: the host marker above, the GPU work below
const AXIS_H = 18;
const HIT_MIN = 8; // px: the link over a box is at least this wide

const CSS = `
.ks-serving-strip { position: relative; }
.ks-serving-strip canvas { display: block; width: 100%; cursor: pointer; }
.ks-serving-hit { position: absolute; top: 0; height: ${BAR_H}px; outline: 2px solid var(--ks-text);
  outline-offset: -1px; border-radius: 2px; }
.ks-serving-hit[hidden] { display: none; }
.ks-serving-tip { position: absolute; z-index: 5; pointer-events: none; padding: 6px 9px; font-size: 12px;
  background: var(--ks-surface); color: var(--ks-text); border: 1px solid var(--ks-border-strong);
  border-radius: 4px; box-shadow: var(--ks-shadow); line-height: 1.4; max-width: 46ch; }
.ks-serving-tip div:first-child { font-weight: 500; }
`;

export class IterationStrip {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly hit: HTMLAnchorElement;
  private readonly tip: HTMLElement;
  private readonly redraw: Redraw;
  private boxes: StripBox[] = [];

  constructor(
    private readonly view: ServingView,
    themes: ThemeWatcher,
    private readonly href: (it: Iteration) => string,
  ) {
    ensureStyle('serving-strip', CSS);
    this.canvas = h('canvas', {
      role: 'img',
      attrs: { 'aria-label': `${view.iteration_count} iterations on the trace's time axis` },
      on: { mousemove: (e) => this.onMove(e), mouseleave: (e) => this.onLeaveTo(e, this.hit) },
    });
    this.hit = h('a', {
      class: 'ks-serving-hit',
      testid: 'serving-strip-link',
      attrs: { target: '_top' },
      // The link sits over the canvas: moving within it still follows the pointer.
      on: { mousemove: (e) => this.onMove(e), mouseleave: (e) => this.onLeaveTo(e, this.canvas) },
    });
    this.hit.hidden = true;
    this.tip = h('div', { class: 'ks-serving-tip', testid: 'serving-strip-tip' });
    this.tip.hidden = true;
    this.element = h(
      'div',
      { class: 'ks-serving-strip', testid: 'serving-strip', dataset: { boxes: '0' } },
      this.canvas,
      this.hit,
      this.tip,
    );
    this.redraw = new Redraw(themes, this.element, (theme) => this.draw(theme));
  }

  destroy(): void {
    this.redraw.stop();
    this.element.remove();
  }

  private draw(theme: Theme): void {
    const width = this.element.clientWidth || 800;
    const height = BAR_H + AXIS_H;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.canvas.style.height = `${height}px`;
    this.boxes = stripBoxes(this.view, width);
    this.element.dataset.boxes = String(this.boxes.length);
    this.element.dataset.width = String(width);
    const ctx = this.canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.fillStyle = theme.gridLine;
    ctx.fillRect(0, 0, width, BAR_H);
    for (const box of this.boxes) {
      const color = phaseColor(box.phase);
      ctx.fillStyle = color;
      ctx.fillRect(box.x, 2, box.hostW, LANE_H);
      if (box.gpu) {
        // The GPU lane: paler where its span holds more idle time.
        ctx.globalAlpha = 0.25 + 0.75 * box.gpu.busy;
        ctx.fillRect(box.gpu.x, BAR_H - 2 - LANE_H, box.gpu.w, LANE_H);
        ctx.globalAlpha = 1;
      }
      // A tick at the iteration's end: where the next can be told from it.
      ctx.fillRect(box.x + box.w - 1, BAR_H / 2 - 1, 1, 2);
    }
    this.drawAxis(ctx, theme, width);
  }

  private drawAxis(ctx: CanvasRenderingContext2D, theme: Theme, width: number): void {
    const [lo, hi] = this.view.window_us;
    if (lo === undefined || hi === undefined) return;
    const span = Math.max(hi - lo, 1e-9);
    const ticks = Math.max(2, Math.floor(width / 110));
    ctx.fillStyle = theme.textMuted;
    ctx.strokeStyle = theme.border;
    ctx.font = '11px Roboto, "Helvetica Neue", Arial, sans-serif';
    ctx.textBaseline = 'top';
    for (let i = 0; i <= ticks; i++) {
      const x = (i / ticks) * width;
      ctx.beginPath();
      ctx.moveTo(Math.min(x, width - 1) + 0.5, BAR_H);
      ctx.lineTo(Math.min(x, width - 1) + 0.5, BAR_H + 4);
      ctx.stroke();
      ctx.textAlign = i === 0 ? 'left' : i === ticks ? 'right' : 'center';
      ctx.fillText(formatDurationAxis((i / ticks) * span), x, BAR_H + 5);
    }
  }

  private onMove(event: MouseEvent): void {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const index = boxAt(this.boxes, x);
    const it = index >= 0 ? this.view.iterations[index] : undefined;
    const box = this.boxes[index];
    if (!it || !box) {
      this.onLeave();
      return;
    }
    const w = Math.max(HIT_MIN, box.w);
    const left = Math.min(Math.max(0, box.x + box.w / 2 - w / 2), rect.width - w);
    this.hit.hidden = false;
    this.hit.style.left = `${left}px`;
    this.hit.style.width = `${w}px`;
    this.hit.href = this.href(it);
    this.hit.dataset.iteration = String(it.index);
    this.hit.title = `Iteration ${it.index} in the trace view`;
    const origin = this.view.window_us[0] ?? 0;
    this.tip.replaceChildren(...iterationLines(it, origin).map((line) => h('div', null, line)));
    this.tip.hidden = false;
    this.tip.style.top = `${BAR_H + AXIS_H + 4}px`;
    this.tip.style.left = `${Math.min(Math.max(0, x - 60), Math.max(0, rect.width - 320))}px`;
  }

  private onLeave(): void {
    this.tip.hidden = true;
    this.hit.hidden = true;
  }

  /** Leaving the canvas for the link over it (or back) is not leaving the strip. */
  private onLeaveTo(event: MouseEvent, other: HTMLElement): void {
    if (event.relatedTarget !== other) this.onLeave();
  }
}
