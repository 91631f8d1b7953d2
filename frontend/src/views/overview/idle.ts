// The Overview's "Why is the GPU idle?" section (in the devices' own word: "Why is the
// MTIA idle?"), fed by the `gpu_idle` route: per device a
// stacked bar per step (busy and the three idle classes as shares of the step), the totals
// with a line on what each class means, the per-step and per-stream tables; then the
// longest idle intervals and the longest launch delays, each linking into the trace view
// at its time. It loads after the rest of the page (its own request); `data-state` on the
// section says where it is (loading, ready, unavailable, error). A trace the route cannot
// analyse shows the route's reason, never zeros.

import { describeError, isAbort } from '../../api/client';
import type { DeviceIdle, GpuIdleView } from '../../api/types';
import { createChart, type ChartHandle, type OptionBuilder } from '../../components/chart';
import {
  BAR_TOOLTIP,
  chartFrame,
  scrollLegend,
  stepAxis,
  stepStackSeries,
} from '../../components/chart_option';
import { colAttrs, toColumns, type ColumnSpec } from '../../components/columns';
import { h, replaceChildren, type Children } from '../../components/dom';
import { formatCount, formatDuration, formatPercent, plural } from '../../components/format';
import { VirtualTable } from '../../components/table';
import type { ThemeWatcher } from '../../components/theme';
import { ensureStyle } from '../../components/view_style';
import { section } from '../page_kit';
import type { ViewContext } from '../types';
import {
  intervalColumns,
  outlierColumns,
  stepColumns,
  streamColumns,
  type TraceLink,
} from './idle_columns';
import {
  classNs,
  classPercent,
  deviceNamer,
  IDLE_CLASSES,
  IDLE_COLOR,
  idleHeadline,
  idleHelp,
  idleSeries,
  idleStepRows,
  idleTotalRow,
  intervalRows,
  outlierRows,
  PART_LABEL,
  shortStepName,
  stepPercent,
  traceWindow,
  type IdleClass,
  type StepPart,
} from './idle_model';
import css from './idle.css';

/** The route sends the 10 longest of each class per device; all of them fit one table. */
const TOP_INTERVALS = 100;
const TOP_OUTLIERS = 10;

function stackedOption(view: GpuIdleView, device: DeviceIdle): OptionBuilder {
  const series = idleSeries(device);
  const labels = view.steps.map((s) => shortStepName(s.name));
  return (theme) => ({
    ...chartFrame(theme, {
      ...BAR_TOOLTIP,
      valueFormatter: (v: unknown) => (typeof v === 'number' ? formatPercent(v) : String(v)),
    }),
    legend: scrollLegend(theme),
    grid: { left: 8, right: 12, top: 36, bottom: 4, containLabel: true },
    xAxis: stepAxis(theme, labels),
    yAxis: {
      type: 'value',
      max: 100,
      axisLabel: { color: theme.textMuted, formatter: '{value} %' },
      splitLine: { lineStyle: { color: theme.gridLine } },
    },
    series: series.map((s) => stepStackSeries(PART_LABEL[s.key], IDLE_COLOR[s.key], s.data)),
  });
}

function table<R>(
  testid: string,
  caption: string,
  specs: ColumnSpec<R>[],
  rows: readonly R[],
  extra: { footer?: R[]; emptyText?: string; maxHeight?: number } = {},
): VirtualTable<R> {
  return new VirtualTable<R>({
    columns: toColumns(specs, colAttrs),
    rows,
    testid,
    caption,
    maxHeight: extra.maxHeight ?? 360,
    ...(extra.footer ? { footer: extra.footer, footerAttrs: () => ({ 'data-total': '' }) } : {}),
    ...(extra.emptyText ? { emptyText: extra.emptyText } : {}),
  });
}

/** The totals of a device: busy, then each class with its time, share and meaning. */
function totalsCard(view: GpuIdleView, device: DeviceIdle): HTMLElement {
  const total = device.total;
  const line = (key: StepPart, help: string) =>
    h(
      'li',
      {
        class: 'ks-idle-class',
        testid: `idle-total-${device.device}-${key}`,
        dataset: { value: String(classNs(total, key)) },
      },
      h('span', { class: 'ks-swatch', style: `background: ${IDLE_COLOR[key]}` }),
      h('span', { class: 'ks-idle-name' }, PART_LABEL[key]),
      h('span', { class: 'ks-num ks-idle-time' }, formatDuration(classNs(total, key) / 1000)),
      h('span', { class: 'ks-num ks-idle-pct' }, formatPercent(partPercent(key))),
      h('span', { class: 'ks-idle-help' }, help),
    );
  // Busy has no share in the route; the classes show the route's own shares.
  const partPercent = (key: StepPart): number | null =>
    key === 'busy' ? stepPercent(total.busy_ns, total) : classPercent(total, key);
  return h(
    'div',
    { class: 'ks-card' },
    h(
      'h4',
      { class: 'ks-card-title' },
      `All ${plural(view.steps.length, 'step')}: ${formatDuration(total.step_ns / 1000)}`,
    ),
    h(
      'ul',
      { class: 'ks-idle-classes' },
      line('busy', `The ${view.device_word} ran kernels, copies or fills.`),
      IDLE_CLASSES.map((cls) =>
        line(cls, idleHelp(cls, view.kernel_wait_threshold_ns, view.device_word)),
      ),
    ),
  );
}

/** The whole section's body for an analysable trace. */
class IdleBody {
  readonly element: HTMLElement;
  private readonly tables: VirtualTable<unknown>[] = [];
  private readonly chartEls: [HTMLElement, DeviceIdle][] = [];

  constructor(
    private readonly ctx: ViewContext,
    private readonly view: GpuIdleView,
  ) {
    this.element = h(
      'div',
      { class: 'ks-idle' },
      view.devices.map((d) => this.deviceBlock(d)),
      this.intervalsBlock(),
      this.outliersBlock(),
    );
  }

  private keep<R>(t: VirtualTable<R>): HTMLElement {
    this.tables.push(t as VirtualTable<unknown>);
    return t.element;
  }

  private deviceBlock(device: DeviceIdle): HTMLElement {
    const view = this.view;
    const chartEl = h('div', { class: 'ks-chart', testid: `idle-chart-${device.device}` });
    this.chartEls.push([chartEl, device]);
    const help = (cls: IdleClass): string =>
      idleHelp(cls, view.kernel_wait_threshold_ns, view.device_word);
    return h(
      'div',
      {
        class: 'ks-idle-device',
        testid: `idle-device-${device.device}`,
        dataset: { device: String(device.device) },
      },
      h('h4', { class: 'ks-subtitle' }, device.label),
      h(
        'p',
        { class: 'ks-small', testid: `idle-headline-${device.device}` },
        idleHeadline(device, view.device_word),
      ),
      h(
        'div',
        { class: 'ks-charts' },
        h(
          'div',
          { class: 'ks-card ks-chart-card' },
          h('h4', { class: 'ks-card-title' }, 'Share of each step'),
          chartEl,
        ),
        totalsCard(view, device),
      ),
      this.keep(
        table(
          `idle-steps-${device.device}`,
          `Idle time per step on ${device.label}`,
          stepColumns(help, view.device_word),
          idleStepRows(view, device),
          {
            footer: [idleTotalRow(device.total)],
            maxHeight: 300,
          },
        ),
      ),
      device.streams.length
        ? [
            h('h4', { class: 'ks-subtitle' }, 'Per stream: idle time and queue length'),
            this.keep(
              table(
                `idle-streams-${device.device}`,
                `Streams of ${device.label}`,
                streamColumns(),
                device.streams,
                {
                  maxHeight: 220,
                },
              ),
            ),
          ]
        : null,
    );
  }

  private readonly traceLink: TraceLink = (startUs, endUs, title) =>
    h(
      'a',
      {
        class: 'ks-idle-link',
        testid: 'idle-trace-link',
        title,
        // A plain link to TensorBoard's page: only its hash changes, and the shell follows.
        attrs: {
          href: this.ctx.link({ ...this.ctx.key, view: 'trace', ...traceWindow(startUs, endUs) }),
          target: '_top',
        },
      },
      'Trace',
    );

  /** A titled list under the devices: heading (an anchor), a line on what it shows, a table. */
  private listBlock<R>(anchor: string, title: string, intro: string, t: VirtualTable<R>): Children {
    return [
      h('h4', { class: 'ks-subtitle', dataset: { anchor } }, title),
      h('p', { class: 'ks-muted ks-small' }, intro),
      this.keep(t),
    ];
  }

  private intervalsBlock(): Children {
    const title = 'Longest idle intervals';
    const columns = intervalColumns(this.traceLink, deviceNamer(this.view));
    const rows = intervalRows(this.view, TOP_INTERVALS);
    return this.listBlock(
      'idle_intervals',
      title,
      `The longest idle times of each class (the whole ${this.view.device_word} idle, inside the steps), longest first; "Trace" opens the trace view around one.`,
      table('idle-intervals', title, columns, rows, {
        emptyText: `The ${this.view.device_word} was never idle inside the steps.`,
      }),
    );
  }

  private outliersBlock(): Children {
    const delay = this.view.launch_delay;
    if (!delay) return null;
    const title = 'Longest launch delays';
    const linked = `${formatCount(delay.linked)} linked ${delay.linked === 1 ? 'activity' : 'activities'}`;
    return this.listBlock(
      'launch_delay',
      title,
      `From the launch call's start to the kernel's start, of ${linked}; the Kernels page has the mean and p90 per kernel.`,
      table(
        'idle-launch-outliers',
        title,
        outlierColumns(this.traceLink, deviceNamer(this.view)),
        outlierRows(this.view, TOP_OUTLIERS),
        {
          emptyText: 'No launch delays: no activity is linked to its launch call.',
        },
      ),
    );
  }

  /** Starts the charts into `sink`, one by one; stops (and drops its chart) once `stopped`. */
  async startCharts(
    themes: ThemeWatcher,
    sink: ChartHandle[],
    stopped: () => boolean,
  ): Promise<void> {
    for (const [el, device] of this.chartEls) {
      const chart = await createChart(el, stackedOption(this.view, device), themes);
      if (stopped()) {
        chart.dispose();
        return;
      }
      sink.push(chart);
    }
  }

  dispose(): void {
    for (const t of this.tables) t.destroy();
  }
}

/** The section; `start` fetches the route and fills it (once the section is in the page). */
export class IdleSection {
  readonly element: HTMLElement;
  private readonly body = h(
    'div',
    { class: 'ks-idle-body' },
    h('p', { class: 'ks-muted ks-note' }, 'Analysing the idle time…'),
  );
  private content: IdleBody | null = null;
  private readonly charts: ChartHandle[] = [];
  private disposed = false;

  /** `word`: what the devices are called ("GPU", "MTIA", ...), the overview's. */
  constructor(
    private readonly ctx: ViewContext,
    private readonly word = 'GPU',
  ) {
    ensureStyle('overview-idle', css);
    this.element = section(
      {
        anchor: 'gpu_idle',
        testid: 'overview-gpu-idle',
        title: `Why is the ${word} idle?`,
        intro: `Time inside the steps when the ${word} ran nothing, by why it waited: host wait, kernel wait or other. Shares are of the step time.`,
      },
      this.body,
    );
    this.element.dataset.state = 'loading';
  }

  /** Loads and shows the analysis; never rejects: a failure shows in the section. */
  async start(): Promise<void> {
    try {
      await this.load();
    } catch (error) {
      if (isAbort(error) || this.disposed) return;
      this.show(
        'error',
        h(
          'div',
          { class: 'ks-notice ks-notice-warn', role: 'alert', testid: 'idle-error' },
          `Could not load the ${this.word} idle analysis: ${describeError(error)}`,
        ),
      );
    }
  }

  private async load(): Promise<void> {
    const view = await this.ctx.api.getReady('gpu_idle', { ...this.ctx.key }, this.ctx.signal);
    if (this.disposed) return;
    if (!view.available) {
      this.show(
        'unavailable',
        h(
          'p',
          { class: 'ks-muted ks-note', testid: 'idle-unavailable' },
          `Not available for this trace: ${view.reason ?? 'no reason given'}.`,
        ),
      );
      return;
    }
    this.content = new IdleBody(this.ctx, view);
    this.show('ready', this.content.element);
    await this.content.startCharts(this.ctx.themes, this.charts, () => this.disposed);
  }

  private show(state: string, child: HTMLElement): void {
    replaceChildren(this.body, child);
    this.element.dataset.state = state;
  }

  dispose(): void {
    this.disposed = true;
    for (const chart of this.charts.splice(0)) chart.dispose();
    this.content?.dispose();
    this.content = null;
  }
}
