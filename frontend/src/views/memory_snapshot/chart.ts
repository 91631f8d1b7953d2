// The ECharts option of a snapshot's active memory over time: active and reserved bytes
// as step lines (each value holds until the next point), each stream's active bytes when
// there are several, the peak and the OOMs marked. When the snapshot is aligned with a
// trace, the chart opens on the trace's window (its history often starts seconds before
// it) with the peak and the OOMs; the slider under it shows the rest. Byte ticks are round binary steps.

import type { SnapshotDevice } from '../../api/types';
import type { OptionBuilder } from '../../components/chart';
import { binaryByteTicks } from '../../components/chart_option';
import { formatBytes, formatBytesAxis } from '../../components/format';
import type { Theme } from '../../components/theme';
import { timelineSeries, type TimeOrigin } from './model';

const COLORS = {
  light: ['#4e79a7', '#e8741c', '#59a14f', '#b07aa1', '#9c755f'],
  dark: ['#7aa6d6', '#f5a25d', '#8cd17d', '#d4a6c8', '#c9a88f'],
};

function marks(device: SnapshotDevice, origin: TimeOrigin, theme: Theme): unknown[] {
  const red = theme.dark ? '#ff7b7d' : '#d62728';
  const lines: unknown[] = [];
  // Labels run along their lines, the peak's left of its line and the OOMs' right of
  // theirs: a peak just before an OOM no longer prints over it.
  if (device.peak_time_us !== null) {
    lines.push({
      xAxis: (device.peak_time_us - origin.us) / 1000,
      name: `peak ${formatBytes(device.peak_allocated_bytes)}`,
      lineStyle: { color: red, type: 'dashed' },
      label: { position: 'insideEndTop' },
    });
  }
  for (const oom of device.ooms) {
    if (oom.time_us === null) continue;
    lines.push({
      xAxis: (oom.time_us - origin.us) / 1000,
      name: 'OOM',
      lineStyle: { color: red, width: 2 },
      label: { position: 'insideEndBottom' },
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
    label: { show: true, position: 'insideBottom', formatter: 'trace' },
    data: [[{ xAxis: window[0] }, { xAxis: window[1] }]],
  };
}

/** Where the chart's marks are (ms on its axis): the peak and the OOMs. */
function markTimes(device: SnapshotDevice, origin: TimeOrigin): number[] {
  const times = [device.peak_time_us, ...device.ooms.map((o) => o.time_us)];
  return times.filter((t): t is number => t !== null).map((t) => (t - origin.us) / 1000);
}

/** The x axis's extent: the history and the marks (an OOM comes after the last entry). */
function xExtent(points: number[], marks: number[]): { min: number; max: number } | object {
  const all = [...points, ...marks];
  if (!all.length) return {};
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const pad = Math.max((hi - lo) * 0.02, 0.001);
  return { min: lo - pad, max: hi + pad };
}

/** The window the chart opens on when the snapshot is aligned: the trace's window with the
 *  peak and the OOMs, a tenth of it either side; else the whole history. */
export function openingWindow(
  traceWindow: [number, number] | null,
  marks: readonly number[] = [],
): { startValue: number; endValue: number } | object {
  if (traceWindow === null) return {};
  const lo = Math.min(traceWindow[0], ...marks);
  const hi = Math.max(traceWindow[1], ...marks);
  const pad = Math.max((hi - lo) / 10, 0.001);
  return { startValue: lo - pad, endValue: hi + pad };
}

/** The y axis's binary ticks, the x axis's extent and the window the chart opens on. */
function axesOf(
  device: SnapshotDevice,
  series: { points: [number, number][] }[],
  origin: TimeOrigin,
  traceWindow: [number, number] | null,
): { ticks: object; extent: object; opening: object } {
  const top = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p[1])));
  const marked = markTimes(device, origin);
  return {
    ticks: binaryByteTicks(0, Math.max(top, device.peak_allocated_bytes ?? 0)),
    extent: xExtent(
      series.flatMap((c) => c.points.map((p) => p[0])),
      marked,
    ),
    opening: openingWindow(traceWindow, marked),
  };
}

export function timelineOption(
  device: SnapshotDevice,
  origin: TimeOrigin,
  traceWindow: [number, number] | null,
): OptionBuilder {
  const series = timelineSeries(device.timeline, origin);
  const { ticks, extent, opening } = axesOf(device, series, origin, traceWindow);
  return (theme) => {
    const text = theme.dark ? '#ddd' : '#333';
    return {
      animation: false,
      color: theme.dark ? COLORS.dark : COLORS.light,
      grid: { left: 76, right: 28, top: 44, bottom: 84 },
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
        // The window's edges are not round numbers: only the ticks between are labelled.
        axisLabel: { color: text, showMinLabel: false, showMaxLabel: false },
        nameTextStyle: { color: text },
        scale: true,
        ...extent,
      },
      yAxis: {
        type: 'value',
        ...ticks,
        axisLabel: { color: text, formatter: (v: number) => formatBytesAxis(v) },
      },
      dataZoom: [
        { type: 'inside', filterMode: 'none', ...opening },
        { type: 'slider', filterMode: 'none', bottom: 8, height: 18, ...opening },
      ],
      series: series.map((s, i) => ({
        id: s.name,
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
