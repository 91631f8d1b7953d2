// A chart over a value x axis where dragging across the plot selects an x range (for a
// view that zooms by asking the server again). Like chart.ts it loads ECharts lazily,
// resizes with its container and rebuilds its option on a theme change; on top it
// draws the selection band itself (a div over the canvas, no ECharts brush/toolbox) and
// reports the range in axis values. Escape cancels a drag; a double-click calls onReset.

import type { EChartsType } from 'echarts/core';

import type { ThemeWatcher } from './theme';
import { themedOption, type OptionBuilder } from './chart';
import { h } from './dom';

export interface ZoomChartOptions {
  /** Plot margins in px; the option's grid.left / grid.right must be the same. */
  gridLeft: number;
  gridRight: number;
  /** Top and bottom plot margins in px: the selection band spans the plot's height. */
  gridTop?: number;
  gridBottom?: number;
  /** A drag ended: x-axis values, from < to. */
  onSelect: (from: number, to: number) => void;
  /** Double-click on the plot. */
  onReset?: () => void;
  /** The plot width changed (px, after the chart resized). */
  onResize?: (plotWidth: number) => void;
  /** Drags shorter than this (px) are clicks. Default 5. */
  minDragPx?: number;
}

export interface ZoomChart {
  update(build: OptionBuilder): void;
  /** Width of the plot area in CSS px (0 while hidden). */
  plotWidth(): number;
  dispose(): void;
}

interface Drag {
  pointer: number;
  startX: number;
  x: number;
}

export async function createZoomChart(
  el: HTMLElement,
  build: OptionBuilder,
  themes: ThemeWatcher,
  opts: ZoomChartOptions,
): Promise<ZoomChart> {
  const { echarts } = await import('./echarts_setup');
  const host = h('div', { class: 'ks-zoom-host' });
  const band = h('div', { class: 'ks-zoom-band', attrs: { 'aria-hidden': 'true' } });
  band.hidden = true;
  band.style.top = `${opts.gridTop ?? 0}px`;
  band.style.bottom = `${opts.gridBottom ?? 0}px`;
  el.classList.add('ks-zoom-chart');
  el.append(host, band);

  let chart: EChartsType | undefined;
  let disposed = false;
  const option = themedOption(themes, build, () => chart);
  /** ECharts starts once the container has a size (a hidden view has none yet). */
  const ensureChart = (): void => {
    if (chart || disposed || el.clientWidth === 0 || el.clientHeight === 0) return;
    chart = echarts.init(host, undefined, { renderer: 'canvas' });
    option.apply();
  };
  ensureChart();
  const minDrag = opts.minDragPx ?? 5;
  let drag: Drag | undefined;

  const plotLeft = (): number => opts.gridLeft;
  const plotRight = (): number => Math.max(opts.gridLeft, el.clientWidth - opts.gridRight);
  const plotWidth = (): number => Math.max(0, Math.round(plotRight() - plotLeft()));
  const localX = (event: PointerEvent | MouseEvent): number =>
    event.clientX - el.getBoundingClientRect().left;
  const clampX = (x: number): number => Math.min(plotRight(), Math.max(plotLeft(), x));

  const drawBand = (): void => {
    if (!drag) return;
    const a = clampX(Math.min(drag.startX, drag.x));
    const b = clampX(Math.max(drag.startX, drag.x));
    band.style.left = `${a}px`;
    band.style.width = `${b - a}px`;
    band.hidden = b - a < 1;
  };

  const endDrag = (): void => {
    if (drag && el.hasPointerCapture(drag.pointer)) el.releasePointerCapture(drag.pointer);
    drag = undefined;
    band.hidden = true;
    el.classList.remove('ks-zoom-dragging');
  };

  const onDown = (event: PointerEvent): void => {
    if (!chart || event.button !== 0 || !event.isPrimary) return;
    const x = localX(event);
    const y = event.clientY - el.getBoundingClientRect().top;
    if (!chart.containPixel({ gridIndex: 0 }, [x, y])) return;
    event.preventDefault();
    drag = { pointer: event.pointerId, startX: x, x };
    el.setPointerCapture(event.pointerId);
    el.classList.add('ks-zoom-dragging');
    chart.dispatchAction({ type: 'hideTip' });
  };

  const onMove = (event: PointerEvent): void => {
    if (drag?.pointer !== event.pointerId) return;
    drag.x = localX(event);
    drawBand();
  };

  const onUp = (event: PointerEvent): void => {
    if (drag?.pointer !== event.pointerId) return;
    const a = clampX(Math.min(drag.startX, localX(event)));
    const b = clampX(Math.max(drag.startX, localX(event)));
    endDrag();
    if (!chart || b - a < minDrag) return;
    const from = chart.convertFromPixel({ xAxisIndex: 0 }, a) as unknown;
    const to = chart.convertFromPixel({ xAxisIndex: 0 }, b) as unknown;
    if (typeof from === 'number' && typeof to === 'number' && to > from) {
      opts.onSelect(from, to);
    }
  };

  const onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Escape' && drag) endDrag();
  };

  const onDouble = (event: MouseEvent): void => {
    if (!chart || !opts.onReset) return;
    const y = event.clientY - el.getBoundingClientRect().top;
    if (chart.containPixel({ gridIndex: 0 }, [localX(event), y])) opts.onReset();
  };

  // One signal takes every listener off again in dispose().
  const listening = new AbortController();
  const { signal } = listening;
  el.addEventListener('pointerdown', onDown, { signal });
  el.addEventListener('pointermove', onMove, { signal });
  el.addEventListener('pointerup', onUp, { signal });
  el.addEventListener('pointercancel', endDrag, { signal });
  el.addEventListener('dblclick', onDouble, { signal });
  window.addEventListener('keydown', onKey, { signal });

  let lastWidth = plotWidth();
  const resize = new ResizeObserver(() => {
    if (chart) chart.resize();
    else ensureChart();
    const width = plotWidth();
    if (width !== lastWidth) {
      lastWidth = width;
      opts.onResize?.(width);
    }
  });
  resize.observe(el);

  return {
    update: option.update,
    plotWidth,
    dispose(): void {
      disposed = true;
      option.stop();
      resize.disconnect();
      listening.abort();
      chart?.dispose();
      chart = undefined;
      host.remove();
      band.remove();
    },
  };
}
