// A chart bound to a container: loads ECharts on first use, resizes with its container,
// and rebuilds its option when the theme changes.

import type { EChartsCoreOption, EChartsType } from 'echarts/core';

import type { Theme, ThemeWatcher } from './theme';

export type OptionBuilder = (theme: Theme) => EChartsCoreOption;

export interface ChartHandle {
  update(build: OptionBuilder): void;
  dispose(): void;
  /** Settles once the chart is drawn, or disposed first. A chart whose element has no size
   *  yet (in a view built hidden, or not yet in the document) starts once it has one, after
   *  the frame that gave it one: laid out and drawn once, at its size. */
  drawn: Promise<void>;
  /** Where a data point of a series is drawn, in px from the chart's corner. */
  toPixel?(seriesId: string, point: [number, number]): [number, number] | undefined;
}

let loader: Promise<typeof import('./echarts_setup')> | undefined;

function loadECharts(): Promise<typeof import('./echarts_setup')> {
  loader ??= import('./echarts_setup');
  return loader;
}

/** Starts fetching ECharts now (while a trace loads: the first view draws charts). */
export function preloadCharts(): void {
  void loadECharts().catch(() => undefined); // a failure shows where a chart is drawn
}

/** Resolves true once `el` has a size and the frame that gave it one is painted; false if
 *  `signal` aborts first. A view is built hidden and shown once built: a chart started
 *  then is laid out and drawn once, at its size (started hidden, ECharts draws it at no
 *  size and again on the resize), and the page's text is on screen before the charts. */
export function afterShown(el: HTMLElement, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const settle = (shown: boolean): void => {
      observer.disconnect();
      signal.removeEventListener('abort', onAbort);
      resolve(shown && !signal.aborted);
    };
    const onAbort = (): void => settle(false);
    // Observers run after layout and before paint: the next animation frame comes after
    // this frame's paint.
    const observer = new ResizeObserver(() => {
      if (el.clientWidth === 0 || el.clientHeight === 0) return;
      observer.disconnect();
      requestAnimationFrame(() => settle(true));
    });
    signal.addEventListener('abort', onAbort, { once: true });
    observer.observe(el);
  });
}

/** The option builder a chart shows, applied again on every theme change. `chart` gives
 *  the ECharts instance, if it has started (a zoom chart starts once it has a size). */
export interface ThemedOption {
  /** Shows `next` from now on. */
  update: (next: OptionBuilder) => void;
  /** Applies the current builder (to a chart that has just started). */
  apply: () => void;
  /** Stops following the theme. */
  stop: () => void;
}

export function themedOption(
  themes: ThemeWatcher,
  build: OptionBuilder,
  chart: () => EChartsType | undefined,
): ThemedOption {
  let current = build;
  const show = (theme: Theme): void => {
    chart()?.setOption(current(theme), { notMerge: true });
  };
  const stop = themes.subscribe(show);
  return {
    update: (next) => {
      current = next;
      show(themes.current);
    },
    apply: () => show(themes.current),
    stop,
  };
}

/** What a click on a data item of a chart reports (ECharts' event, the fields we read). */
export interface ChartClick {
  seriesType?: string;
  seriesName?: string;
  dataIndex: number;
}

export async function createChart(
  el: HTMLElement,
  build: OptionBuilder,
  themes: ThemeWatcher,
  onClick?: (event: ChartClick) => void,
): Promise<ChartHandle> {
  const { echarts } = await loadECharts();
  let chart: EChartsType | undefined;
  const option = themedOption(themes, build, () => chart);
  const disposed = new AbortController();
  // Started at no size, ECharts lays out and draws the chart empty, then all again once
  // the element is shown: a chart starts at its size instead.
  const start = (): void => {
    if (disposed.signal.aborted) return;
    chart = echarts.init(el, undefined, { renderer: 'canvas' });
    option.apply();
    if (onClick) chart.on('click', (event) => onClick(event as unknown as ChartClick));
  };
  let drawn = Promise.resolve();
  if (el.clientWidth > 0 && el.clientHeight > 0) start();
  else drawn = afterShown(el, disposed.signal).then((shown) => (shown ? start() : undefined));

  // The observer reports the size it starts with too: ECharts' resize() lays out and
  // draws the whole chart again whatever the size, so only a new size is passed on.
  const resize = new ResizeObserver(() => {
    if (chart && (chart.getWidth() !== el.clientWidth || chart.getHeight() !== el.clientHeight))
      chart.resize();
  });
  resize.observe(el);

  return {
    update: option.update,
    drawn,
    toPixel(seriesId: string, point: [number, number]): [number, number] | undefined {
      const at: unknown = chart?.convertToPixel({ seriesId }, point);
      return Array.isArray(at) && at.length === 2 ? [Number(at[0]), Number(at[1])] : undefined;
    },
    dispose(): void {
      disposed.abort();
      option.stop();
      resize.disconnect();
      chart?.dispose();
      chart = undefined;
    },
  };
}
