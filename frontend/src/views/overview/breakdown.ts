// The Overview's step-time breakdown: a stacked bar per step and a pie of the average
// step (ECharts), the per-step table with the average as its footer, and the steps left
// out as incomplete.

import { describeError } from '../../api/client';
import type { Category, OverviewResponse } from '../../api/types';
import { CATEGORY_COLOR, CATEGORY_HELP, CATEGORY_LABEL } from '../../components/categories';
import {
  afterShown,
  createChart,
  type ChartHandle,
  type OptionBuilder,
} from '../../components/chart';
import {
  BAR_TOOLTIP,
  chartFrame,
  scrollLegend,
  stepAxis,
  stepStackSeries,
} from '../../components/chart_option';
import { h, type Child } from '../../components/dom';
import { formatDuration, formatDurationAxis, formatPercent } from '../../components/format';
import { VirtualTable, type Column } from '../../components/table';
import type { ThemeWatcher } from '../../components/theme';
import { section } from '../page_kit';
import {
  averageRow,
  droppedLines,
  pieSlices,
  rowShare,
  shownCategories,
  stackedSeries,
  stepRow,
  stepTooltipTitle,
  type BreakdownRow,
  type StackedSeries,
} from './model';

function valueCell(row: BreakdownRow, value: number, pct: number | null): Child {
  return h(
    'span',
    { class: value === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
    h('span', { class: 'ks-num' }, formatDuration(value)),
    row.total > 0 ? h('span', { class: 'ks-pct' }, formatPercent(pct)) : null,
  );
}

function breakdownColumns(categories: readonly Category[]): Column<BreakdownRow>[] {
  const testid = (row: BreakdownRow, what: string): string => `breakdown-${row.name}-${what}`;
  const columns: Column<BreakdownRow>[] = [
    {
      key: 'step',
      label: 'Step',
      minWidth: 120,
      grow: 1.3,
      cell: (row) => (row.kind === 'average' ? h('strong', null, 'Average') : row.name),
      sortValue: (row) => row.number ?? row.name,
      cellAttrs: (row) => ({ 'data-testid': testid(row, 'name') }),
    },
    {
      key: 'total',
      label: 'Step time',
      align: 'right',
      minWidth: 88,
      cell: (row) => h('span', { class: 'ks-num' }, formatDuration(row.total)),
      sortValue: (row) => row.total,
      cellAttrs: (row) => ({
        'data-testid': testid(row, 'total'),
        'data-value': String(row.total),
      }),
    },
  ];
  for (const category of categories) {
    columns.push({
      key: category,
      label: CATEGORY_LABEL[category],
      swatch: CATEGORY_COLOR[category],
      title: `${CATEGORY_HELP[category]} (click to sort)`,
      align: 'right',
      minWidth: headerWidth(CATEGORY_LABEL[category]),
      grow: category === 'communication' ? 1.35 : 1,
      cell: (row) => valueCell(row, row.values[category], rowShare(row, category)),
      sortValue: (row) => row.values[category],
      cellAttrs: (row) => ({
        'data-testid': testid(row, category),
        'data-value': String(row.values[category]),
      }),
    });
  }
  return columns;
}

/** A category column wide enough for its swatch and its label's first word on one line
 *  (the header wraps only at spaces): 86 px, more for "Communication", "DataLoader". */
function headerWidth(label: string): number {
  const first = label.split(' ')[0] ?? label;
  return Math.max(86, 40 + 7 * first.length);
}

/** The text of a tooltip line; ECharts sets the tooltip as HTML, so names are escaped. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface AxisItem {
  dataIndex: number;
  marker?: string;
  seriesName?: string;
  value?: unknown;
}

/** "ProfilerStep#5 · 187.95 ms", then each category of the step (not the axis label "5"). */
function stepTooltip(data: StackedSeries): (items: AxisItem | AxisItem[]) => string {
  return (items) => {
    const list = Array.isArray(items) ? items : [items];
    const first = list[0];
    if (!first) return '';
    const lines = list.map((p) => {
      const value = typeof p.value === 'number' ? formatDuration(p.value) : String(p.value);
      const name = escapeHtml(p.seriesName ?? '');
      return `${p.marker ?? ''}${name}<span style="float:right;margin-left:16px"><b>${value}</b></span>`;
    });
    return [`<b>${escapeHtml(stepTooltipTitle(data, first.dataIndex))}</b>`, ...lines].join(
      '<br/>',
    );
  };
}

function stackedOption(ov: OverviewResponse, categories: readonly Category[]): OptionBuilder {
  const data = stackedSeries(ov.steps, categories);
  return (theme) => ({
    ...chartFrame(theme, { ...BAR_TOOLTIP, formatter: stepTooltip(data) }),
    // Every category in view (a paged legend hid "CPU Exec" at 1280 px): the legend wraps
    // onto a second line when the card is narrow, and the plot starts below it.
    legend: { ...scrollLegend(theme), type: 'plain' },
    grid: { left: 8, right: 12, top: categories.length > 5 ? 58 : 36, bottom: 4 },
    xAxis: stepAxis(theme, data.labels),
    yAxis: {
      type: 'value',
      axisLabel: {
        color: theme.textMuted,
        formatter: (v: number) => formatDurationAxis(v),
      },
      splitLine: { lineStyle: { color: theme.gridLine } },
    },
    series: data.series.map((s) =>
      stepStackSeries(CATEGORY_LABEL[s.category], CATEGORY_COLOR[s.category], s.data),
    ),
  });
}

function pieOption(ov: OverviewResponse): OptionBuilder {
  const slices = pieSlices(ov.average_breakdown_us);
  return (theme) => ({
    ...chartFrame(theme, {
      trigger: 'item',
      formatter: (p: { name: string; value: number; percent: number }) =>
        `${p.name}<br/>${formatDuration(p.value)} (${p.percent.toFixed(2)} %)`,
    }),
    // The legend sits beside the donut (with `right: 0` a wide card left a third empty).
    legend: {
      orient: 'vertical',
      left: '64%',
      top: 'middle',
      textStyle: { color: theme.text },
      itemWidth: 14,
      itemHeight: 10,
      formatter: (name: string) => {
        const slice = slices.find((s) => CATEGORY_LABEL[s.category] === name);
        return slice ? `${name}  ${slice.percent.toFixed(2)} %` : name;
      },
    },
    series: [
      {
        type: 'pie',
        radius: ['42%', '70%'],
        center: ['34%', '50%'],
        avoidLabelOverlap: true,
        label: { show: false },
        itemStyle: { borderColor: theme.surface, borderWidth: 2 },
        data: slices.map((s) => ({
          name: CATEGORY_LABEL[s.category],
          value: s.value,
          itemStyle: { color: CATEGORY_COLOR[s.category] },
        })),
      },
    ],
  });
}

function breakdownSection(
  ov: OverviewResponse,
  stepChartEl: HTMLElement,
  pieChartEl: HTMLElement,
  table: VirtualTable<BreakdownRow>,
): HTMLElement {
  const dropped = droppedLines(ov.dropped_steps);
  return section(
    { anchor: 'breakdown', testid: 'overview-breakdown', title: 'Step time breakdown' },
    h(
      'div',
      { class: 'ks-charts' },
      h(
        'div',
        { class: 'ks-card ks-chart-card ks-chart-wide' },
        h('h4', { class: 'ks-card-title' }, 'Time per step'),
        stepChartEl,
      ),
      h(
        'div',
        { class: 'ks-card ks-chart-card' },
        h('h4', { class: 'ks-card-title' }, 'Average step'),
        pieChartEl,
      ),
    ),
    dropped.length
      ? h(
          'div',
          { class: 'ks-notice', testid: 'dropped-steps', role: 'note' },
          h(
            'strong',
            null,
            `${dropped.length} incomplete step${dropped.length === 1 ? ' was' : 's were'} left out: `,
          ),
          h(
            'ul',
            null,
            dropped.map((line) => h('li', null, line)),
          ),
        )
      : null,
    h('h4', { class: 'ks-subtitle', dataset: { anchor: 'steps' } }, 'Per-step numbers'),
    h(
      'p',
      { class: 'ks-muted ks-small' },
      'Time of each category and its share of the step time. Click a column header to sort.',
    ),
    table.element,
  );
}

/** The breakdown section; its charts start once it is shown (for their sizes). */
export class Breakdown {
  readonly element: HTMLElement;
  private readonly table: VirtualTable<BreakdownRow>;
  private readonly stepChartEl = h('div', { class: 'ks-chart', testid: 'step-chart' });
  private readonly pieChartEl = h('div', { class: 'ks-chart', testid: 'average-chart' });
  private readonly charts: ChartHandle[] = [];

  constructor(private readonly ov: OverviewResponse) {
    this.table = new VirtualTable<BreakdownRow>({
      columns: breakdownColumns(shownCategories(ov)),
      rows: ov.steps.map(stepRow),
      footer: [averageRow(ov)],
      footerAttrs: () => ({ 'data-testid': 'breakdown-average' }),
      rowAttrs: (row) => ({ 'data-step': row.name }),
      testid: 'breakdown-table',
      caption: 'Step time breakdown per step',
      emptyText: 'No complete steps in this trace.',
      maxHeight: 420,
    });
    this.element = breakdownSection(ov, this.stepChartEl, this.pieChartEl, this.table);
  }

  /** Draws the charts once the section is shown (see afterShown); resolves when they are
   *  drawn, or at once when `signal` aborts (the user left the page). */
  async start(themes: ThemeWatcher, signal: AbortSignal): Promise<void> {
    if (!(await afterShown(this.element, signal))) return;
    const { ov } = this;
    if (ov.steps.length) {
      const categories = shownCategories(ov);
      await this.draw(this.stepChartEl, stackedOption(ov, categories), themes, signal);
    } else {
      this.stepChartEl.replaceWith(
        h('p', { class: 'ks-muted ks-note' }, 'No complete steps to chart.'),
      );
    }
    if (pieSlices(ov.average_breakdown_us).length) {
      await this.draw(this.pieChartEl, pieOption(ov), themes, signal);
    } else {
      this.pieChartEl.replaceWith(h('p', { class: 'ks-muted ks-note' }, 'No time recorded.'));
    }
  }

  /** What replaces the charts not drawn when ECharts could not be loaded or drawn. */
  chartsFailed(error: unknown): void {
    console.error(error);
    for (const el of [this.stepChartEl, this.pieChartEl]) {
      if (!el.isConnected || el.childElementCount > 0) continue; // drawn, or replaced
      el.replaceWith(
        h('p', { class: 'ks-muted ks-note' }, `Could not draw the chart: ${describeError(error)}`),
      );
    }
  }

  private async draw(
    el: HTMLElement,
    build: OptionBuilder,
    themes: ThemeWatcher,
    signal: AbortSignal,
  ): Promise<void> {
    const chart = await createChart(el, build, themes);
    if (signal.aborted)
      chart.dispose(); // left while ECharts loaded: dispose() has run
    else this.charts.push(chart);
  }

  dispose(): void {
    for (const chart of this.charts) chart.dispose();
    this.table.destroy();
  }
}
