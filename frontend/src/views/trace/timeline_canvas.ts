// The timeline's two canvases, the time axis and the tracks: sized to the body at the
// screen's pixel density, drawn at most once per animation frame on request.

import { h } from '../../components/dom';
import { axisTicks } from './axis';
import type { TrackFrame } from './frame';
import { itemsBetween, type Layout } from './layout';
import type { PathMark } from './path_model';
import {
  drawTracks,
  type AreaGeom,
  type FlowArrow,
  type HoverGeom,
  type SelectedGeom,
} from './render';
import { AXIS_STEPS_H, AXIS_TICKS_H, drawAxis, type StepMark } from './render_axis';
import { readPalette, type Palette } from './render_style';
import type { Viewport } from './viewport';

export const LABEL_WIDTH = 240;

/** Everything one drawing of the timeline shows. */
export interface TimelineScene {
  vp: Viewport;
  layout: Layout;
  scrollTop: number;
  frames: Map<string, TrackFrame>;
  dark: boolean;
  selected: SelectedGeom | null;
  hover: HoverGeom | null;
  area: AreaGeom | null;
  flows: readonly FlowArrow[];
  path: readonly PathMark[];
}

/** Height of the axis: the tick row, and the step band when there are steps. */
export function axisHeight(steps: StepMark[]): number {
  return steps.length ? AXIS_TICKS_H + AXIS_STEPS_H : AXIS_TICKS_H;
}

export class TimelineCanvas {
  readonly axis: HTMLCanvasElement;
  readonly tracks: HTMLCanvasElement;
  /** In CSS px. */
  width = 1;
  height = 1;
  dpr = 1;
  private palette: Palette | null = null;
  private frame = 0;

  /** `draw` draws now; `element` carries the theme's colours. */
  constructor(
    private readonly element: HTMLElement,
    private readonly steps: StepMark[],
    private readonly draw: () => void,
  ) {
    this.axis = h('canvas', { class: 'ks-tl-axis', testid: 'trace-axis' });
    this.tracks = h('canvas', {
      class: 'ks-tl-canvas',
      testid: 'trace-canvas',
      attrs: {
        'aria-label': 'Trace timeline: W/S zoom, A/D pan, F zooms to the selection',
        role: 'img',
        tabindex: -1,
      },
    });
  }

  /** Sizes both canvases to `body` beside the labels; false when nothing changed. */
  fit(body: HTMLElement, scroller: HTMLElement): boolean {
    const rect = body.getBoundingClientRect();
    const scrollbar = scroller.offsetWidth - scroller.clientWidth;
    const width = Math.max(1, Math.floor(rect.width - LABEL_WIDTH - scrollbar));
    const height = Math.max(1, Math.floor(rect.height));
    const dpr = window.devicePixelRatio || 1;
    if (width === this.width && height === this.height && dpr === this.dpr) return false;
    this.width = width;
    this.height = height;
    this.dpr = dpr;
    const axisH = axisHeight(this.steps);
    for (const [canvas, cssHeight] of [
      [this.tracks, height],
      [this.axis, axisH],
    ] as const) {
      canvas.style.width = `${width}px`;
      canvas.style.height = `${cssHeight}px`;
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(cssHeight * dpr);
    }
    return true;
  }

  /** True when the page moved to a screen of another density (or was zoomed). */
  densityChanged(): boolean {
    return (window.devicePixelRatio || 1) !== this.dpr;
  }

  requestDraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Drops a requested draw (one is being made now). */
  cancelRequest(): void {
    if (this.frame) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
  }

  themeChanged(): void {
    this.palette = null;
  }

  /** Draws the axis and the tracks; false when the canvases have no 2D context. */
  render(scene: TimelineScene): boolean {
    const ctx = this.tracks.getContext('2d');
    const axis = this.axis.getContext('2d');
    if (!ctx || !axis) return false;
    this.palette ??= readPalette(this.element);
    const { vp, scrollTop: top } = scene;
    const ticks = axisTicks(vp, this.width);
    axis.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    const axisH = this.axis.height / this.dpr;
    drawAxis(axis, this.width, axisH, vp, ticks, this.steps, this.palette, scene.area);
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    drawTracks({
      ctx,
      width: this.width,
      height: this.height,
      vp,
      layout: scene.layout,
      scrollTop: top,
      frames: scene.frames,
      palette: this.palette,
      dark: scene.dark,
      ticks,
      steps: this.steps,
      selected: scene.selected,
      hover: scene.hover,
      area: scene.area,
      flows: scene.flows,
      path: scene.path,
      items: itemsBetween(scene.layout, top, top + this.height),
    });
    return true;
  }

  dispose(): void {
    this.cancelRequest();
  }
}
