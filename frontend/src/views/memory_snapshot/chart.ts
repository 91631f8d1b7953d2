// The ECharts option of a snapshot's active memory over time: active and reserved bytes
// as step lines (each value holds until the next point), each stream's active bytes when
// there are several, the peak and the OOMs marked.

import type { SnapshotDevice } from '../../api/types';
import type { OptionBuilder } from '../../components/chart';
import { formatBytes } from '../../components/format';
import type { Theme } from '../../components/theme';
import { timelineSeries, type TimeOrigin } from './model';

const COLORS = {
  light: ['#4e79a7', '#e8741c', '#59a14f', '#b07aa1', '#9c755f'],
  dark: ['#7aa6d6', '#f5a25d', '#8cd17d', '#d4a6c8', '#c9a88f'],
};

function marks(device: SnapshotDevice, origin: TimeOrigin, theme: Theme): unknown[] {
  const red = theme.dark ? '#ff7b7d' : '#d62728';
  const lines: unknown[] = [];
  if (device.peak_time_us !== null) {
    lines.push({
      xAxis: (device.peak_time_us - origin.us) / 1000,
      name: `peak ${formatBytes(device.peak_allocated_bytes)}`,
      lineStyle: { color: red, type: 'dashed' },
    });
  }
  for (const oom of device.ooms) {
    if (oom.time_us === null) continue;
    lines.push({
      xAxis: (oom.time_us - origin.us) / 1000,
      name: 'OOM',
      lineStyle: { color: red, width: 2 },
    });
  }
  return lines;
}

/** The trace's own window (ms on the page's axis) shaded, when the snapshot is aligned. */
function traceArea(window: [number, number] | null, theme: Theme): unknown {
  if (window === null) return undefined;
  return {
    silent: true,
    itemStyle: { color: theme.dark ? 'rgba(122,166,214,0.15)' : 'rgba(78,121,167,0.10)' },
    label: { show: true, position: 'insideTop', formatter: 'trace' },
    data: [[{ xAxis: window[0] }, { xAxis: window[1] }]],
  };
}

export function timelineOption(
  device: SnapshotDevice,
  origin: TimeOrigin,
  traceWindow: [number, number] | null,
): OptionBuilder {
  const series = timelineSeries(device.timeline, origin);
  return (theme) => {
    const text = theme.dark ? '#ddd' : '#333';
    return {
      animation: false,
      color: theme.dark ? COLORS.dark : COLORS.light,
      grid: { left: 76, right: 28, top: 44, bottom: 46 },
      legend: { top: 8, textStyle: { color: text } },
      tooltip: {
        trigger: 'axis',
        valueFormatter: (value: unknown) => formatBytes(typeof value === 'number' ? value : null),
      },
      xAxis: {
        type: 'value',
        name: origin.label,
        nameLocation: 'middle',
        nameGap: 28,
        axisLabel: { color: text },
        nameTextStyle: { color: text },
        scale: true,
      },
      yAxis: {
        type: 'value',
        axisLabel: { color: text, formatter: (v: number) => formatBytes(v) },
      },
      dataZoom: [{ type: 'inside' }],
      series: series.map((s, i) => ({
        name: s.name,
        type: 'line',
        step: 'end',
        showSymbol: false,
        data: s.points,
        lineStyle: { width: i < 2 ? 2 : 1 },
        ...(i === 0
          ? {
              markLine: {
                symbol: 'none',
                // A mark line's label shows its value unless told to show its name.
                label: { color: text, formatter: '{b}' },
                data: marks(device, origin, theme),
              },
              markArea: traceArea(traceWindow, theme),
            }
          : {}),
      })),
    };
  };
}
