// The Diff page's chart of the top changes: one horizontal bar per operator or kernel,
// the change of its time (target minus base), green when it dropped, red when it grew.

import type { OptionBuilder } from '../../components/chart';
import { axisColors, BAR_TOOLTIP, chartFrame } from '../../components/chart_option';
import { escapeHtml, formatDuration, formatDurationAxis } from '../../components/format';
import { formatValue, type ChangeBar } from './model';

const BETTER_COLOR = '#59a14f';
const WORSE_COLOR = '#e15759';
const LABEL_CHARS = 48;

function shortLabel(text: string): string {
  return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text;
}

function tooltipText(bar: ChangeBar): string {
  return [
    escapeHtml(bar.label),
    escapeHtml(bar.detail),
    `Base: ${formatValue(bar.base, 'us')}`,
    `Target: ${formatValue(bar.target, 'us')}`,
    `Change: ${bar.delta > 0 ? '+' : ''}${formatDuration(bar.delta)}`,
  ].join('<br/>');
}

/** Largest change on top (ECharts draws a category axis from the bottom). */
export function changesOption(bars: readonly ChangeBar[]): OptionBuilder {
  const shown = bars.slice().reverse();
  return (theme) => ({
    ...chartFrame(theme, {
      ...BAR_TOOLTIP,
      formatter: (params: { dataIndex: number }[]) => {
        const bar = shown[params[0]?.dataIndex ?? -1];
        return bar ? tooltipText(bar) : '';
      },
    }),
    grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
    xAxis: {
      type: 'value',
      axisLabel: { color: theme.textMuted, formatter: (v: number) => formatDurationAxis(v) },
      splitLine: { lineStyle: { color: theme.gridLine } },
    },
    yAxis: {
      type: 'category',
      data: shown.map((b) => shortLabel(b.label)),
      ...axisColors(theme),
    },
    series: [
      {
        type: 'bar',
        barMaxWidth: 22,
        data: shown.map((b) => ({
          value: b.delta,
          itemStyle: { color: b.delta < 0 ? BETTER_COLOR : WORSE_COLOR },
        })),
      },
    ],
  });
}
