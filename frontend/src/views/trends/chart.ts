// The Trends page's run-by-run charts: one value per run (in trace start order), the runs
// where a change of that metric was first seen marked.

import type { OptionBuilder } from '../../components/chart';
import { axisColors, chartFrame } from '../../components/chart_option';

export interface RunChart {
  title: string;
  runs: string[];
  values: (number | null)[];
  marks: number[];
  format: (value: number | null) => string;
}

export function runChartOption(chart: RunChart): OptionBuilder {
  return (theme) => ({
    ...chartFrame(theme, {
      trigger: 'axis',
      valueFormatter: (value: unknown) => chart.format(typeof value === 'number' ? value : null),
    }),
    grid: { left: 84, right: 24, top: 32, bottom: 64 },
    xAxis: {
      type: 'category',
      data: chart.runs,
      name: 'Run (trace start order)',
      nameLocation: 'middle',
      nameGap: 46,
      ...axisColors(theme),
      axisLabel: { color: theme.textMuted, rotate: chart.runs.length > 8 ? 30 : 0 },
    },
    yAxis: {
      type: 'value',
      scale: true,
      ...axisColors(theme),
      axisLabel: { color: theme.textMuted, formatter: (v: number) => chart.format(v) },
    },
    series: [
      {
        id: 'values',
        name: chart.title,
        type: 'line',
        connectNulls: false,
        data: chart.values,
        showSymbol: true,
        markPoint: {
          symbol: 'pin',
          symbolSize: 36,
          label: { show: true, formatter: '!' },
          data: chart.marks
            .filter((i) => chart.values[i] !== null && chart.values[i] !== undefined)
            .map((i) => ({ coord: [i, chart.values[i]] })),
        },
      },
    ],
  });
}
