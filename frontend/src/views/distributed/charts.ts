// The per-rank charts of the Distributed page: ECharts stacked bars up to a few dozen
// ranks, compact heat strips beyond (HEAT_STRIP_MIN_RANKS).

import type { OptionBuilder } from '../../components/chart';
import { axisColors, BAR_TOOLTIP, chartFrame, scrollLegend } from '../../components/chart_option';
import {
  escapeHtml,
  formatDuration,
  formatDurationAxis,
  formatPercent,
  share,
} from '../../components/format';
import type { HeatRow } from '../../components/heat_strip';
import type { RankRow, SeriesData, ValueKey } from './model';

export interface SeriesStyle<K extends string> {
  label: Record<K, string>;
  color: Record<K, string>;
  help: Record<K, string>;
}

interface AxisParam {
  dataIndex: number;
  seriesName: string;
  value: number | null | undefined;
  color: string;
}

/** Tooltip of one rank: its worker, each part with its share of `base`. */
export function rankTooltipLines<K extends ValueKey>(
  row: RankRow | undefined,
  keys: readonly K[],
  style: SeriesStyle<K>,
  base: (row: RankRow) => number,
): string[] {
  if (!row) return [];
  const lines = [`Rank ${row.rank} · ${row.worker}`];
  if (!row.values) return [...lines, 'No data for this step'];
  const total = base(row);
  for (const key of keys) {
    const value = row.values[key];
    lines.push(
      `${style.label[key]}: ${formatDuration(value)} (${formatPercent(share(value, total))})`,
    );
  }
  return lines;
}

export function stackedByRank<K extends ValueKey>(
  data: SeriesData<K>,
  rows: readonly RankRow[],
  style: SeriesStyle<K>,
  base: (row: RankRow) => number,
  stack: string,
): OptionBuilder {
  return (theme) => ({
    ...chartFrame(theme, {
      ...BAR_TOOLTIP,
      formatter: (params: AxisParam | AxisParam[]) => {
        const list = Array.isArray(params) ? params : [params];
        const index = list[0]?.dataIndex ?? -1;
        const row = rows[index];
        if (!row) return '';
        const total = base(row);
        const head = `<strong>Rank ${row.rank}</strong> · ${escapeHtml(row.worker)}`;
        if (!row.values) return `${head}<br/>No data for this step`;
        const lines = list.map((p) => {
          const v = typeof p.value === 'number' ? p.value : null;
          const dot = `<span style="display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:6px;background:${p.color}"></span>`;
          return `${dot}${escapeHtml(p.seriesName)}: ${formatDuration(v)} (${formatPercent(share(v ?? 0, total))})`;
        });
        return [head, ...lines].join('<br/>');
      },
    }),
    legend: scrollLegend(theme),
    grid: { left: 8, right: 12, top: 36, bottom: 4, containLabel: true },
    xAxis: {
      type: 'category',
      name: 'Rank',
      nameLocation: 'middle',
      nameGap: 24,
      data: data.labels,
      ...axisColors(theme),
    },
    yAxis: {
      type: 'value',
      axisLabel: { color: theme.textMuted, formatter: (v: number) => formatDurationAxis(v) },
      splitLine: { lineStyle: { color: theme.gridLine } },
    },
    series: data.series.map((s) => ({
      name: style.label[s.key],
      type: 'bar',
      stack,
      barMaxWidth: 48,
      itemStyle: { color: style.color[s.key] },
      emphasis: { focus: 'series' },
      data: s.data,
    })),
  });
}

export function heatRows<K extends ValueKey>(
  data: SeriesData<K>,
  style: SeriesStyle<K>,
): HeatRow[] {
  return data.series.map((s) => ({
    key: s.key,
    label: style.label[s.key],
    color: style.color[s.key],
    title: style.help[s.key],
    values: s.data,
    format: (v: number) => formatDuration(v),
  }));
}
