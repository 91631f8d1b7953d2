// The Trends page's run-by-run charts: one value per run (in trace start order), one line
// per workload (runs of different models are never joined), the runs where a change of
// that metric was first seen marked.

import type { OptionBuilder } from '../../components/chart';
import { axisColors, chartFrame, scrollLegend } from '../../components/chart_option';

export interface RunChart {
  title: string;
  runs: string[];
  values: (number | null)[];
  marks: number[];
  /** Each run's workload (an index into `workloads`; null: the run failed). */
  workloadOf: (number | null)[];
  workloads: string[];
  format: (value: number | null) => string;
  /** The y axis's labels (default `format`). */
  axisFormat?: (value: number) => string;
  /** The y axis's bounds and step from the values' range (default: ECharts' own). */
  ticks?: (lo: number, hi: number) => { min: number; max: number; interval: number };
}

function yBounds(chart: RunChart): Record<string, number> {
  const values = chart.values.filter((v): v is number => v !== null);
  if (!chart.ticks || !values.length) return {};
  return chart.ticks(Math.min(...values), Math.max(...values));
}

export function runChartOption(chart: RunChart): OptionBuilder {
  return (theme) => ({
    ...chartFrame(theme, {
      trigger: 'axis',
      valueFormatter: (value: unknown) => chart.format(typeof value === 'number' ? value : null),
    }),
    grid: { left: 84, right: 24, top: 32, bottom: chart.workloads.length > 1 ? 88 : 64 },
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
      ...yBounds(chart),
      ...axisColors(theme),
      axisLabel: {
        color: theme.textMuted,
        formatter: (v: number) => (chart.axisFormat ?? chart.format)(v),
      },
    },
    legend:
      chart.workloads.length > 1
        ? { ...scrollLegend(theme), top: undefined, bottom: 0 }
        : undefined,
    series: chart.workloads.map((label, w) => workloadSeries(chart, label, w)),
  });
}

function workloadSeries(chart: RunChart, label: string, w: number): Record<string, unknown> {
  const mine = (i: number): boolean => chart.workloadOf[i] === w;
  const data = chart.values.map((v, i) => (mine(i) ? v : null));
  return {
    id: `workload-${w}`,
    name: chart.workloads.length > 1 ? label : chart.title,
    type: 'line',
    // Runs of other workloads sit between this one's: join across them, not across nulls
    // of its own (a failed run).
    connectNulls: true,
    data,
    showSymbol: true,
    markPoint: {
      symbol: 'pin',
      symbolSize: 36,
      label: { show: true, formatter: '!' },
      data: chart.marks
        .filter((i) => mine(i) && data[i] !== null && data[i] !== undefined)
        .map((i) => ({ coord: [i, data[i]] })),
    },
  };
}
