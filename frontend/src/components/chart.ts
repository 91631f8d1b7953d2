// A chart bound to a container: loads ECharts on first use, resizes with its container,
// and rebuilds its option when the theme changes.

import type { EChartsCoreOption, EChartsType } from 'echarts/core';

import type { Theme, ThemeWatcher } from './theme';

export type OptionBuilder = (theme: Theme) => EChartsCoreOption;

export interface ChartHandle {
  update(build: OptionBuilder): void;
  dispose(): void;
}

let loader: Promise<typeof import('./echarts_setup')> | undefined;

function loadECharts(): Promise<typeof import('./echarts_setup')> {
  loader ??= import('./echarts_setup');
  return loader;
}

export async function createChart(
  el: HTMLElement,
  build: OptionBuilder,
  themes: ThemeWatcher,
): Promise<ChartHandle> {
  const { echarts } = await loadECharts();
  let current = build;
  let chart: EChartsType | undefined = echarts.init(el, undefined, { renderer: 'canvas' });
  chart.setOption(current(themes.current), { notMerge: true });

  const resize = new ResizeObserver(() => chart?.resize());
  resize.observe(el);
  const unsubscribe = themes.subscribe((theme) =>
    chart?.setOption(current(theme), { notMerge: true }),
  );

  return {
    update(next: OptionBuilder): void {
      current = next;
      chart?.setOption(current(themes.current), { notMerge: true });
    },
    dispose(): void {
      unsubscribe();
      resize.disconnect();
      chart?.dispose();
      chart = undefined;
    },
  };
}
