// The Overview page: GPU summary, step-time breakdown (charts + table), recommendations.

import { isStillLoading, ViewNotReady } from '../../api/client';
import { CATEGORIES, type OverviewResponse, type Recommendation } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { CATEGORY_COLOR, CATEGORY_HELP, CATEGORY_LABEL } from '../../components/categories';
import { createChart, type ChartHandle, type OptionBuilder } from '../../components/chart';
import { axisColors, BAR_TOOLTIP, chartFrame, scrollLegend } from '../../components/chart_option';
import { h, type Child, type Children } from '../../components/dom';
import { recommendationCard as card } from '../../components/recommendation';
import {
  formatCount,
  formatDuration,
  formatDurationAxis,
  formatPercent,
  plural,
} from '../../components/format';
import { VirtualTable, type Column } from '../../components/table';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import {
  averageRow,
  deviceFields,
  droppedLines,
  evidenceParts,
  pieSlices,
  rowShare,
  severityRank,
  stackedSeries,
  stepRow,
  topCategory,
  type BreakdownRow,
} from './model';

function section(anchor: string, title: string, ...children: Children[]): HTMLElement {
  return h(
    'section',
    { class: 'ks-section', dataset: { anchor }, testid: `overview-${anchor}` },
    h('h3', { class: 'ks-section-title' }, title),
    ...children,
  );
}

function tile(label: string, value: string, detail?: string): HTMLElement {
  return h(
    'div',
    { class: 'ks-tile' },
    h('div', { class: 'ks-tile-label' }, label),
    h('div', { class: 'ks-tile-value' }, value),
    detail ? h('div', { class: 'ks-tile-detail' }, detail) : null,
  );
}

function summaryTiles(ov: OverviewResponse): HTMLElement {
  const top = topCategory(ov);
  const gpus = ov.devices.length;
  return h(
    'div',
    { class: 'ks-tiles', testid: 'overview-summary' },
    tile(
      'Average step time',
      formatDuration(ov.average_step_us),
      `over ${plural(ov.step_count, 'step')}`,
    ),
    tile(
      'Steps',
      formatCount(ov.step_count),
      ov.steps_source === 'profiler_steps'
        ? 'ProfilerStep ranges'
        : ov.steps_source.replace(/_/g, ' '),
    ),
    top
      ? tile(
          'Largest share',
          CATEGORY_LABEL[top.category],
          `${formatPercent(top.percent)} of step time`,
        )
      : null,
    tile(
      'Device',
      ov.device_type === 'CPU' ? 'CPU only' : `${gpus} GPU${gpus === 1 ? '' : 's'}`,
      ov.device_type === 'CPU'
        ? 'no GPU activity in this trace'
        : (ov.devices[0]?.name ?? undefined),
    ),
  );
}

function deviceSection(ov: OverviewResponse): HTMLElement {
  if (ov.device_type === 'CPU' || ov.devices.length === 0) {
    return section(
      'gpu',
      'GPU summary',
      h('p', { class: 'ks-muted ks-note', testid: 'no-gpu' }, 'No GPU in this trace.'),
    );
  }
  const cards = ov.devices.map((device) =>
    h(
      'div',
      { class: 'ks-card ks-device', testid: `gpu-${device.id}` },
      h(
        'div',
        { class: 'ks-device-head' },
        h('span', { class: 'ks-device-id' }, `GPU ${device.id}`),
        h('span', { class: 'ks-device-name' }, device.name ?? 'name not in the trace'),
      ),
      h(
        'dl',
        { class: 'ks-fields' },
        deviceFields(device).map(([label, value]) => [
          h('dt', null, label),
          h('dd', { class: value === '—' ? 'ks-muted' : undefined }, value),
        ]),
      ),
    ),
  );
  return section('gpu', 'GPU summary', h('div', { class: 'ks-devices' }, cards));
}

function recommendationCard(rec: Recommendation, ctx: ViewContext): HTMLElement {
  const link = rec.link;
  let linkEl: HTMLElement | null = null;
  if (link && ctx.views.includes(link.view)) {
    const label = ctx.viewLabel(link.view);
    const anchorText = link.anchor ? ` › ${link.anchor.replace(/_/g, ' ')}` : '';
    linkEl = h(
      'button',
      {
        class: 'ks-link-button',
        testid: `recommendation-link-${rec.id}`,
        attrs: { type: 'button' },
        on: { click: () => ctx.navigate(link.view, link.anchor ?? undefined) },
      },
      `Show in ${label}${anchorText}`,
    );
  }
  const docs = rec.docs_url
    ? h(
        'a',
        {
          class: 'ks-external',
          attrs: { href: rec.docs_url, target: '_blank', rel: 'noopener noreferrer' },
        },
        'Documentation ↗',
      )
    : null;
  return card(rec, evidenceParts(rec.evidence), linkEl, docs);
}

function recommendationSection(ov: OverviewResponse, ctx: ViewContext): HTMLElement {
  const recs = ov.recommendations
    .slice()
    .sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  return section(
    'recommendations',
    'Recommendations',
    recs.length
      ? h(
          'div',
          { class: 'ks-recs' },
          recs.map((r) => recommendationCard(r, ctx)),
        )
      : h(
          'p',
          { class: 'ks-muted ks-note' },
          'No recommendations: nothing stood out in this trace.',
        ),
  );
}

function valueCell(row: BreakdownRow, value: number, pct: number | null): Child {
  return h(
    'span',
    { class: value === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
    h('span', { class: 'ks-num' }, formatDuration(value)),
    row.total > 0 ? h('span', { class: 'ks-pct' }, formatPercent(pct)) : null,
  );
}

function breakdownColumns(): Column<BreakdownRow>[] {
  const testid = (row: BreakdownRow, what: string): string => `breakdown-${row.name}-${what}`;
  const columns: Column<BreakdownRow>[] = [
    {
      key: 'step',
      label: 'Step',
      minWidth: 140,
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
  for (const category of CATEGORIES) {
    columns.push({
      key: category,
      label: CATEGORY_LABEL[category],
      swatch: CATEGORY_COLOR[category],
      title: `${CATEGORY_HELP[category]} (click to sort)`,
      align: 'right',
      minWidth: category === 'communication' ? 120 : 86,
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

function stackedOption(ov: OverviewResponse): OptionBuilder {
  const data = stackedSeries(ov.steps);
  return (theme) => ({
    ...chartFrame(theme, {
      ...BAR_TOOLTIP,
      valueFormatter: (v: unknown) => (typeof v === 'number' ? formatDuration(v) : String(v)),
      formatter: undefined,
    }),
    legend: scrollLegend(theme),
    grid: { left: 8, right: 12, top: 36, bottom: 4 },
    xAxis: {
      type: 'category',
      name: 'Step',
      nameLocation: 'middle',
      nameGap: 26,
      data: data.labels,
      ...axisColors(theme),
    },
    yAxis: {
      type: 'value',
      axisLabel: {
        color: theme.textMuted,
        formatter: (v: number) => formatDurationAxis(v),
      },
      splitLine: { lineStyle: { color: theme.gridLine } },
    },
    series: data.series.map((s) => ({
      name: CATEGORY_LABEL[s.category],
      type: 'bar',
      stack: 'step',
      barMaxWidth: 56,
      itemStyle: { color: CATEGORY_COLOR[s.category] },
      emphasis: { focus: 'series' },
      data: s.data,
    })),
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
    legend: {
      orient: 'vertical',
      right: 0,
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
        center: ['32%', '50%'],
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
    'breakdown',
    'Step time breakdown',
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

function partialNotice(ctx: ViewContext): HTMLElement | null {
  if (!ctx.status.partial) return null;
  return h(
    'div',
    { class: 'ks-notice ks-notice-warn', testid: 'partial-trace', role: 'note' },
    h('strong', null, 'This trace file was cut short; what could be read is shown.'),
    ctx.status.warnings.length
      ? h(
          'ul',
          null,
          ctx.status.warnings.map((w) => h('li', null, w)),
        )
      : null,
  );
}

async function renderOverview(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  const result = await ctx.api.get('overview', ctx.key, ctx.signal);
  if (isStillLoading(result)) throw new ViewNotReady();
  const ov = result;

  const table = new VirtualTable<BreakdownRow>({
    columns: breakdownColumns(),
    rows: ov.steps.map(stepRow),
    footer: [averageRow(ov)],
    footerAttrs: () => ({ 'data-testid': 'breakdown-average' }),
    rowAttrs: (row) => ({ 'data-step': row.name }),
    testid: 'breakdown-table',
    caption: 'Step time breakdown per step',
    emptyText: 'No complete steps in this trace.',
    maxHeight: 420,
  });

  const stepChartEl = h('div', { class: 'ks-chart', testid: 'step-chart' });
  const pieChartEl = h('div', { class: 'ks-chart', testid: 'average-chart' });
  const page = h(
    'div',
    {
      class: 'ks-view ks-overview',
      testid: 'overview',
      dataset: { run: ctx.key.run, worker: ctx.key.worker, span: ctx.key.span },
    },
    h(
      'header',
      { class: 'ks-view-head' },
      h('h2', null, 'Overview'),
      h(
        'p',
        { class: 'ks-muted' },
        `${ctx.key.run} · ${ctx.key.worker} · span ${ctx.key.span} · ${formatCount(ctx.status.event_count)} events`,
      ),
    ),
    partialNotice(ctx),
    summaryTiles(ov),
    recommendationSection(ov, ctx),
    deviceSection(ov),
    breakdownSection(ov, stepChartEl, pieChartEl, table),
  );
  container.appendChild(page);

  const charts: ChartHandle[] = [];
  if (ov.steps.length) {
    charts.push(await createChart(stepChartEl, stackedOption(ov), ctx.themes));
  } else {
    stepChartEl.replaceWith(h('p', { class: 'ks-muted ks-note' }, 'No complete steps to chart.'));
  }
  if (pieSlices(ov.average_breakdown_us).length) {
    charts.push(await createChart(pieChartEl, pieOption(ov), ctx.themes));
  } else {
    pieChartEl.replaceWith(h('p', { class: 'ks-muted ks-note' }, 'No time recorded.'));
  }
  page.dataset.ready = 'true';

  return {
    dispose(): void {
      for (const chart of charts) chart.dispose();
      table.destroy();
      page.remove();
    },
    scrollTo: (anchor: string) => scrollToAnchor(page, anchor),
  };
}

export const overviewView: ViewDef = {
  id: 'overview',
  label: 'Overview',
  render: renderOverview,
};
