// The ECharts option of the memory curve: allocated and reserved as step lines (each
// value holds until the next point), the peak marked with the op running at it.

import type { MemoryCurveResponse, MemoryDevice } from '../../api/types';
import type { OptionBuilder } from '../../components/chart';
import { formatBytes, formatDurationAxis } from '../../components/format';
import type { Theme } from '../../components/theme';
import {
  bytesAxis,
  curveSeries,
  escapeHtml,
  formatAbsTime,
  formatBytesAxis,
  formatBytesExact,
  formatRelTime,
  peakX,
  stepIndex,
  type CurveSeries,
  type TimeRange,
} from './model';

/** Plot margins in px: the zoom band and the curve width use the same numbers. */
export const GRID = { left: 76, right: 28, top: 44, bottom: 46 };

export function curveColors(theme: Theme): { allocated: string; reserved: string; peak: string } {
  return theme.dark
    ? { allocated: '#7aa6d6', reserved: '#f5a25d', peak: '#ff7b7d' }
    : { allocated: '#4e79a7', reserved: '#e8741c', peak: '#d62728' };
}

export interface CurveInput {
  curve: MemoryCurveResponse;
  device: MemoryDevice | undefined;
  origin: number;
  range: TimeRange | null;
}

function axisValueOf(params: unknown): number | undefined {
  const first: unknown = Array.isArray(params) ? params[0] : params;
  if (typeof first === 'object' && first !== null && 'axisValue' in first) {
    const value = first.axisValue;
    if (typeof value === 'number') return value;
    if (typeof value === 'string' && value !== '') return Number(value);
  }
  return undefined;
}

function tooltipHtml(
  input: CurveInput,
  x: number,
  colors: { allocated: string; reserved: string },
): string {
  const { curve, origin } = input;
  const t = x + origin;
  const i = stepIndex(curve.t_us, t);
  const dot = (color: string): string =>
    `<span style="display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:6px;background:${color}"></span>`;
  const lines = [
    `<div><b>${escapeHtml(formatRelTime(x))}</b> <span style="opacity:.7">(${escapeHtml(formatAbsTime(t))})</span></div>`,
  ];
  if (i < 0) {
    lines.push('<div style="opacity:.7">before this device\'s first memory event</div>');
  } else {
    lines.push(
      `<div>${dot(colors.allocated)}Allocated: ${escapeHtml(formatBytesExact(curve.allocated_bytes[i]))}</div>`,
    );
    const reserved = curve.reserved_bytes?.[i];
    if (reserved !== undefined) {
      lines.push(
        `<div>${dot(colors.reserved)}Reserved: ${escapeHtml(formatBytesExact(reserved))}</div>`,
      );
    }
  }
  if (curve.downsampled) {
    lines.push(
      `<div style="opacity:.7;font-size:11px">${curve.points.toLocaleString('en-US')} points, drawn per pixel (extremes kept)</div>`,
    );
  }
  return lines.join('');
}

export function curveOption(input: CurveInput): { build: OptionBuilder; series: CurveSeries } {
  const series = curveSeries(input.curve, input.origin, input.range);
  const { device, origin, range } = input;
  const peakAt = device ? peakX(device, range) : null;
  const peakBytes = device?.peak_allocated_bytes ?? series.peak;
  const op = device?.peak_op;
  const computed = device?.allocated_source === 'computed';
  const allocatedName = computed ? 'Allocated (lower bound)' : 'Allocated';
  let top = Math.max(series.peak, peakBytes);
  for (const [, r] of series.reserved ?? []) if (r > top) top = r;
  const yAxis = bytesAxis(top);
  const opLabel = op ? ` · ${op.name.length > 48 ? `${op.name.slice(0, 47)}…` : op.name}` : '';
  const peakFrac =
    peakAt === null ? 0.5 : (peakAt - origin - series.min) / (series.max - series.min);

  const build: OptionBuilder = (theme) => {
    const colors = curveColors(theme);
    const markPoint =
      peakAt === null
        ? undefined
        : {
            symbol: 'circle',
            symbolSize: 9,
            itemStyle: { color: colors.peak, borderColor: theme.surface, borderWidth: 2 },
            label: { show: false },
            tooltip: {
              formatter: () =>
                [
                  `<b>Peak allocated: ${escapeHtml(formatBytesExact(peakBytes))}</b>`,
                  `at ${escapeHtml(formatRelTime(peakAt - origin))} (${escapeHtml(formatAbsTime(peakAt))})`,
                  op ? `in ${escapeHtml(op.ops.join(' › ') || op.name)}` : 'outside every operator',
                ].join('<br/>'),
            },
            data: [{ name: 'peak', coord: [peakAt - origin, peakBytes], value: peakBytes }],
          };
    const markLine =
      peakAt === null
        ? undefined
        : {
            symbol: 'none',
            silent: true,
            animation: false,
            lineStyle: { color: colors.peak, type: 'dashed', width: 1 },
            label: {
              position: 'end',
              // Near an edge the label leans inwards instead of leaving the plot.
              align: peakFrac > 0.85 ? 'right' : peakFrac < 0.15 ? 'left' : 'center',
              color: colors.peak,
              fontWeight: 500,
              formatter: () => `peak ${formatBytes(peakBytes)}${opLabel}`,
            },
            data: [{ xAxis: peakAt - origin }],
          };
    return {
      backgroundColor: 'transparent',
      animation: false,
      textStyle: { fontFamily: 'inherit' },
      legend: {
        top: 0,
        left: GRID.left - 8,
        textStyle: { color: theme.text },
        itemWidth: 16,
        itemHeight: 8,
        data: [allocatedName, ...(series.reserved ? ['Reserved'] : [])],
      },
      tooltip: {
        trigger: 'axis',
        axisPointer: { type: 'line', snap: false, lineStyle: { color: theme.textMuted } },
        backgroundColor: theme.tooltipBg,
        borderColor: theme.border,
        textStyle: { color: theme.text, fontSize: 12 },
        formatter: (params: unknown) => {
          const x = axisValueOf(params);
          return x === undefined ? '' : tooltipHtml(input, x, colors);
        },
      },
      grid: { left: GRID.left, right: GRID.right, top: GRID.top, bottom: GRID.bottom },
      xAxis: {
        type: 'value',
        min: series.min,
        max: series.max,
        name: 'Time since the first memory event',
        nameLocation: 'middle',
        nameGap: 28,
        nameTextStyle: { color: theme.textMuted },
        axisLabel: {
          color: theme.textMuted,
          hideOverlap: true,
          formatter: (v: number) => formatDurationAxis(v),
        },
        axisLine: { lineStyle: { color: theme.border } },
        axisTick: { lineStyle: { color: theme.border } },
        splitLine: { show: false },
      },
      yAxis: {
        type: 'value',
        min: 0,
        ...(yAxis ?? {}),
        axisLabel: { color: theme.textMuted, formatter: (v: number) => formatBytesAxis(v) },
        splitLine: { lineStyle: { color: theme.gridLine } },
      },
      series: [
        {
          name: allocatedName,
          type: 'line',
          step: 'end',
          showSymbol: false,
          symbol: 'none',
          sampling: undefined,
          lineStyle: { width: 1.5, color: colors.allocated },
          itemStyle: { color: colors.allocated },
          areaStyle: { color: colors.allocated, opacity: theme.dark ? 0.18 : 0.12 },
          emphasis: { disabled: true },
          data: series.allocated,
          markPoint,
          markLine,
          z: 3,
        },
        ...(series.reserved
          ? [
              {
                name: 'Reserved',
                type: 'line',
                step: 'end',
                showSymbol: false,
                symbol: 'none',
                lineStyle: { width: 1.5, color: colors.reserved, type: 'dashed' },
                itemStyle: { color: colors.reserved },
                emphasis: { disabled: true },
                data: series.reserved,
                z: 2,
              },
            ]
          : []),
      ],
    };
  };
  return { build, series };
}
