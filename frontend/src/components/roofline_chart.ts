// A card with the roofline chart (log-log: FLOP/byte across, achieved TFLOP/s up): one dot
// per operator or kernel sized by its time and coloured by what bounds it, under the roofs
// of the trace's GPU (one per data type of the dots), the ridge marked on each. A click on
// a dot reports its row's name. Numbers: docs/metrics.md#roofline.

import type { EChartsCoreOption } from 'echarts/core';

import type { Roof, RooflineFields } from '../api/types';
import { createChart, type ChartHandle } from './chart';
import { h } from './dom';
import { escapeHtml, formatDuration, formatPercent, plural } from './format';
import {
  dotSize,
  HIDDEN_SHARE,
  rooflineData,
  type RoofLine,
  type RooflineData,
  type RoofPoint,
} from './roofline_model';
import type { Theme, ThemeWatcher } from './theme';

const BOUND_COLORS: Record<string, string> = { compute: '#1e88e5', memory: '#e65100' };
const ROOF_COLORS = ['#2e7d32', '#6a1b9a', '#00838f', '#ad1457', '#5d4037'];
/** The dots' series, one per bound (the legend shows each colour with its meaning). */
const DOT_SERIES = [
  { id: 'dots-compute', name: 'compute bound', bound: 'compute' },
  { id: 'dots-memory', name: 'memory bound', bound: 'memory' },
  { id: 'dots-unknown', name: 'bound unknown', bound: null },
] as const;

function tip(p: RoofPoint): string {
  const pct = p.pct === null ? '—' : formatPercent(p.pct, 1);
  return [
    `<b>${escapeHtml(p.name)}</b>`,
    `${p.tflops.toPrecision(4)} TFLOP/s at ${p.intensity.toPrecision(3)} FLOP/B`,
    `${pct} of its roof${p.bound ? ` (${p.bound} bound)` : ''}${p.dtype ? `, ${p.dtype}` : ''}`,
    `time ${formatDuration(p.timeUs)}`,
    ...(p.limitedBy ? [`occupancy limited by ${escapeHtml(p.limitedBy)}`] : []),
  ].join('<br>');
}

function roofName(line: RoofLine): string {
  if (line.dtype === null || line.peakTflops === null || line.ridge === null) {
    return 'memory roof (data type unknown: no compute roof)';
  }
  return `${line.dtype} roof (${line.peakTflops} TFLOP/s, ridge ${line.ridge.toPrecision(3)})`;
}

function roofSeries(line: RoofLine, i: number): Record<string, unknown> {
  const color = ROOF_COLORS[i % ROOF_COLORS.length];
  return {
    id: `roof-${line.dtype ?? 'memory'}`,
    name: roofName(line),
    type: 'line',
    data: line.points,
    symbol: 'none',
    silent: true,
    // The legend draws a series' item colour: the line's, not the palette's.
    itemStyle: { color },
    lineStyle: { color, width: 1.5 },
    ...(line.ridge !== null && line.peakTflops !== null
      ? {
          markPoint: {
            symbol: 'circle',
            symbolSize: 6,
            itemStyle: { color },
            label: { show: false },
            data: [{ coord: [line.ridge, line.peakTflops], name: 'ridge' }],
          },
        }
      : {}),
  };
}

function dotsOf(data: RooflineData, bound: string | null): RoofPoint[] {
  return data.points.filter((p) => (BOUND_COLORS[p.bound ?? ''] ? p.bound : null) === bound);
}

/** The chart's ECharts option (exported for the chart test, drawn by ECharts itself). */
export function rooflineOption(data: RooflineData, theme: Theme): EChartsCoreOption {
  const maxUs = Math.max(...data.points.map((p) => p.timeUs), 0);
  const axis = (name: string, min?: number, max?: number) => ({
    type: 'log',
    name,
    nameLocation: 'middle',
    nameGap: 28,
    ...(min !== undefined ? { min, max } : {}),
    axisLabel: { color: theme.textMuted },
    nameTextStyle: { color: theme.textMuted },
    splitLine: { lineStyle: { color: theme.gridLine } },
  });
  const dots = DOT_SERIES.map((s) => ({ ...s, points: dotsOf(data, s.bound) })).filter(
    (s) => s.points.length > 0,
  );
  return {
    animation: false,
    grid: { left: 64, right: 24, top: 36, bottom: 48 },
    legend: { top: 0, textStyle: { color: theme.text } },
    tooltip: {
      trigger: 'item',
      backgroundColor: theme.tooltipBg,
      textStyle: { color: theme.text },
    },
    xAxis: axis('FLOP per byte', data.axes?.xMin, data.axes?.xMax),
    yAxis: axis('TFLOP/s', data.axes?.yMin, data.axes?.yMax),
    series: [
      ...data.lines.map(roofSeries),
      ...dots.map((s) => ({
        id: s.id,
        name: s.name,
        type: 'scatter',
        itemStyle: { color: BOUND_COLORS[s.bound ?? ''] ?? theme.textMuted, opacity: 0.75 },
        data: s.points.map((p) => ({
          value: [p.intensity, p.tflops],
          symbolSize: dotSize(p.timeUs, maxUs),
          tooltip: { formatter: () => tip(p) },
        })),
      })),
    ],
  };
}

export class RooflineCard {
  readonly element: HTMLElement;
  private readonly chartEl: HTMLElement;
  private readonly note: HTMLElement;
  private chart: ChartHandle | undefined;
  private data: RooflineData | undefined;
  private disposed = false;

  constructor(
    testid: string,
    private readonly themes: ThemeWatcher,
    private readonly onSelect: (name: string) => void,
  ) {
    this.chartEl = h('div', { class: 'ks-chart-roofline', testid: `${testid}-chart` });
    this.chartEl.style.height = '380px';
    this.note = h('p', { class: 'ks-muted ks-note', testid: `${testid}-note` });
    this.element = h('div', { class: 'ks-card ks-chart-card', testid }, this.chartEl, this.note);
  }

  /** Shows these rows (those with known work) under the roofs; settles once drawn. */
  async set<R extends RooflineFields & { name: string }>(
    rows: readonly R[],
    roofs: readonly Roof[],
    time: (row: R) => number,
  ): Promise<void> {
    const data = rooflineData(rows, roofs, time);
    this.data = data;
    this.element.dataset.points = String(data.points.length);
    this.element.dataset.roofs = data.lines.map((l) => l.dtype ?? 'memory').join(',');
    this.element.dataset.hidden = String(data.hidden);
    this.note.textContent = noteText(data);
    this.chartEl.hidden = data.points.length === 0;
    if (this.disposed || data.points.length === 0) return;
    if (this.chart) {
      this.chart.update((theme) => rooflineOption(data, theme));
    } else {
      this.chart = await createChart(
        this.chartEl,
        (theme) => rooflineOption(data, theme),
        this.themes,
        (e) => {
          const series = DOT_SERIES.find((s) => s.name === e.seriesName);
          const point =
            series && this.data ? dotsOf(this.data, series.bound)[e.dataIndex] : undefined;
          if (point) this.onSelect(point.name);
        },
      );
      await this.chart.drawn; // the longest dot is placed on the chart drawn
    }
    this.markLongest(data);
  }

  /** `longestDot()` on the chart element: where the longest row's dot is drawn now
   *  (name, x, y in px), for the browser tests; `data-longest-dot` names it. */
  private markLongest(data: RooflineData): void {
    const longest = [...data.points].sort((a, b) => b.timeUs - a.timeUs)[0];
    if (!longest) return;
    this.chartEl.dataset.longestDot = longest.name;
    Object.assign(this.chartEl, {
      longestDot: () => {
        const series = DOT_SERIES.find((s) => dotsOf(data, s.bound).includes(longest));
        const at = series && this.chart?.toPixel?.(series.id, [longest.intensity, longest.tflops]);
        return at ? { name: longest.name, x: at[0], y: at[1] } : null;
      },
    });
  }

  dispose(): void {
    this.disposed = true;
    this.chart?.dispose();
    this.element.remove();
  }
}

const MATCH_NOTE: Record<string, string> = {
  family: ' (matched by model family from the device name)',
  unnamed: ' (the device has no name: matched by memory size and CU count)',
};

function noteText(data: RooflineData): string {
  const parts: string[] = [];
  if (data.points.length === 0)
    parts.push('No row has known work (shapes need record_shapes=True).');
  if (data.device && data.memoryGbps) {
    const how = MATCH_NOTE[data.match ?? ''] ?? '';
    parts.push(
      `Roofs of ${data.device}${how}: ${data.memoryGbps} GB/s memory, dense peak per data type.`,
    );
  } else if (data.points.length) {
    parts.push('This GPU’s peaks are not known: no roofs, and no % of peak.');
  }
  if (data.offChart) {
    parts.push(`${plural(data.offChart, 'row')} with no FLOPs (copies, embedding) not shown.`);
  }
  if (data.hidden) {
    parts.push(
      `${plural(data.hidden, 'row')} far below the others, each under ${formatPercent(HIDDEN_SHARE * 100, 1)} of the time, off the chart (in the table).`,
    );
  }
  parts.push('Dot size: time; colour: what bounds it. Click a dot to select its row.');
  return parts.join(' ');
}
