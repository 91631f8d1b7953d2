// The ECharts option of the memory curve: allocated and reserved as step lines (each
// value holds until the next point), the peak marked with the op running at it.

import type { MemoryCurveResponse, MemoryDevice } from '../../api/types';
import type { OptionBuilder } from '../../components/chart';
import { escapeHtml, formatBytes, formatDurationAxis } from '../../components/format';
import type { Theme } from '../../components/theme';
import {
  bytesAxis,
  curveSeries,
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

/** The peak as the chart marks it: its time relative to the origin, bytes and operator. */
interface Peak {
  x: number;
  at: number;
  bytes: number;
  op: MemoryDevice['peak_op'] | undefined;
  /** Where x lies across the plot (0 to 1), for the label's alignment. */
  frac: number;
}

/** The peak's dot (with its tooltip) and its dashed line with a label. */
function peakMarks(peak: Peak | null, color: string, theme: Theme) {
  if (peak === null) return { markPoint: undefined, markLine: undefined };
  const { op, bytes } = peak;
  const opLabel = op ? ` · ${op.name.length > 48 ? `${op.name.slice(0, 47)}…` : op.name}` : '';
  const markPoint = {
    symbol: 'circle',
    symbolSize: 9,
    itemStyle: { color, borderColor: theme.surface, borderWidth: 2 },
    label: { show: false },
    tooltip: {
      formatter: () =>
        [
          `<b>Peak allocated: ${escapeHtml(formatBytesExact(bytes))}</b>`,
          `at ${escapeHtml(formatRelTime(peak.x))} (${escapeHtml(formatAbsTime(peak.at))})`,
          op ? `in ${escapeHtml(op.ops.join(' › ') || op.name)}` : 'outside every operator',
        ].join('<br/>'),
    },
    data: [{ name: 'peak', coord: [peak.x, bytes], value: bytes }],
  };
  const markLine = {
    symbol: 'none',
    silent: true,
    animation: false,
    lineStyle: { color, type: 'dashed', width: 1 },
    label: {
      position: 'end',
      // Near an edge the label leans inwards instead of leaving the plot.
      align: peak.frac > 0.85 ? 'right' : peak.frac < 0.15 ? 'left' : 'center',
      color,
      fontWeight: 500,
      formatter: () => `peak ${formatBytes(bytes)}${opLabel}`,
    },
    data: [{ xAxis: peak.x }],
  };
  return { markPoint, markLine };
}

/** Time across (the series' extent), bytes up on round binary steps up to `top`. */
function curveAxes(series: CurveSeries, top: number, theme: Theme) {
  const xAxis = {
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
  };
  const yAxis = {
    type: 'value',
    min: 0,
    ...(bytesAxis(top) ?? {}),
    axisLabel: { color: theme.textMuted, formatter: (v: number) => formatBytesAxis(v) },
    splitLine: { lineStyle: { color: theme.gridLine } },
  };
  return { xAxis, yAxis };
}

/** The allocated step line (filled, with the peak marks) and the reserved one, if known. */
function curveLines(
  series: CurveSeries,
  allocatedName: string,
  peak: Peak | null,
  theme: Theme,
): object[] {
  const colors = curveColors(theme);
  const allocated = {
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
    ...peakMarks(peak, colors.peak, theme),
    z: 3,
  };
  if (!series.reserved) return [allocated];
  const reserved = {
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
  };
  return [allocated, reserved];
}

/** The peak to mark (null when the device has no peak time). */
function peakOf(input: CurveInput, series: CurveSeries): Peak | null {
  const { device, origin, range } = input;
  const at = device ? peakX(device, range) : null;
  if (at === null) return null;
  const x = at - origin;
  const bytes = device?.peak_allocated_bytes ?? series.peak;
  return { x, at, bytes, op: device?.peak_op, frac: (x - series.min) / (series.max - series.min) };
}

export function curveOption(input: CurveInput): { build: OptionBuilder; series: CurveSeries } {
  const series = curveSeries(input.curve, input.origin, input.range);
  const device = input.device;
  const peak = peakOf(input, series);
  const computed = device?.allocated_source === 'computed';
  const allocatedName = computed ? 'Allocated (lower bound)' : 'Allocated';
  let top = Math.max(series.peak, device?.peak_allocated_bytes ?? series.peak);
  for (const [, r] of series.reserved ?? []) if (r > top) top = r;

  const build: OptionBuilder = (theme) => {
    const colors = curveColors(theme);
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
      ...curveAxes(series, top, theme),
      series: curveLines(series, allocatedName, peak, theme),
    };
  };
  return { build, series };
}
