// Pieces of the ECharts options that the views' charts share, so each look is written once:
// the frame every chart starts from, the legend above bar charts, the colours of an axis,
// the round binary ticks of a byte axis.

import type { Theme } from './theme';

type Option = Record<string, unknown>;

/** A chart's frame: transparent over the card, the page's font, a tooltip in the theme's
 *  colours; `tooltip` adds the chart's own trigger and formatter. No animation: a chart
 *  appears drawn, not grown (ECharts' entry animation repainted the whole canvas each
 *  frame for 300 ms, 10-30 paints per chart, on the cores the page's first draw needs). */
export function chartFrame(theme: Theme, tooltip: Option): Option {
  return {
    backgroundColor: 'transparent',
    animation: false,
    textStyle: { fontFamily: 'inherit' },
    tooltip: {
      backgroundColor: theme.tooltipBg,
      borderColor: theme.border,
      textStyle: { color: theme.text },
      ...tooltip,
    },
  };
}

/** The tooltip of a stacked bar chart: one per category, over a shaded band. */
export const BAR_TOOLTIP: Option = { trigger: 'axis', axisPointer: { type: 'shadow' } };

/** The legend above a stacked bar chart, scrolling when its series do not fit one line. */
export function scrollLegend(theme: Theme): Option {
  return {
    top: 0,
    type: 'scroll',
    textStyle: { color: theme.text },
    pageTextStyle: { color: theme.textMuted },
    itemWidth: 14,
    itemHeight: 10,
  };
}

/** An axis's label, line, ticks and name in the theme's colours. */
export function axisColors(theme: Theme): Option {
  return {
    axisLabel: { color: theme.textMuted },
    axisLine: { lineStyle: { color: theme.border } },
    axisTick: { lineStyle: { color: theme.border } },
    nameTextStyle: { color: theme.textMuted },
  };
}

/** The x axis of a chart with one bar (or stack of bars) per step. */
export function stepAxis(theme: Theme, labels: readonly string[]): Option {
  return {
    type: 'category',
    name: 'Step',
    nameLocation: 'middle',
    nameGap: 26,
    data: labels,
    ...axisColors(theme),
  };
}

/** One series of the per-step stacked bars. */
export function stepStackSeries(name: string, color: string, data: readonly number[]): Option {
  return {
    name,
    type: 'bar',
    stack: 'step',
    barMaxWidth: 56,
    itemStyle: { color },
    emphasis: { focus: 'series' },
    data,
  };
}

/** A byte axis's bounds and step: ticks 2^k bytes apart (1, 2, 4, 8, 16 ... MiB: round in
 *  binary units), at most `target` steps across [lo, hi], the bounds widened to whole
 *  steps. For a value axis: `{ min, max, interval }`. */
export function binaryByteTicks(
  lo: number,
  hi: number,
  target = 5,
): { min: number; max: number; interval: number } {
  const low = Math.max(0, Math.min(lo, hi));
  const high = Math.max(lo, hi, low + 1);
  const interval = 2 ** Math.max(0, Math.ceil(Math.log2((high - low) / target)));
  const min = Math.floor(low / interval) * interval;
  const max = Math.max(Math.ceil(high / interval) * interval, min + interval);
  return { min, max, interval };
}
