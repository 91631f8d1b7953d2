// The Trends page (logdir-level): every run of the logdir in trace start order, its step
// time and memory peak run by run, and what changed (regressions, improvements), each with
// a link to the Diff of its first run against the run before it. The route does its own
// loading (202 with the files summarised) and this page polls it. Offered with every run
// of a logdir of several runs; the run chosen in the side bar does not matter to it.

import type { TrendLoading, TrendView } from '../../api/types';
import { createChart, type ChartHandle } from '../../components/chart';
import { h, replaceChildren } from '../../components/dom';
import { binaryByteTicks } from '../../components/chart_option';
import {
  formatBytes,
  formatBytesAxis,
  formatDuration,
  formatDurationAxis,
  plural,
} from '../../components/format';
import { ensureStyle } from '../../components/view_style';
import { loadRunPage, section } from '../page_kit';
import type { RunViewContext, RunViewDef, ViewHandle } from '../types';

import { runChartOption, type RunChart } from './chart';
import {
  changeName,
  changeRows,
  changeText,
  diffLinkState,
  metricLabel,
  ruleText,
  runSeries,
  type ChangeRow,
  type RunSeries,
} from './model';
import css from './trends.css';

function progressText(p: TrendLoading): string {
  return `Summarising the runs' traces… ${p.files_done} of ${p.files_total} files`;
}

function valueText(row: ChangeRow, value: number): string {
  return row.unit === 'bytes' ? formatBytes(value) : `${formatDuration(value)} / step`;
}

function diffCell(row: ChangeRow, view: TrendView, ctx: RunViewContext): HTMLElement {
  const state = diffLinkState(row, view);
  if (state === null) return h('span', { class: 'ks-muted' }, '—');
  return h(
    'a',
    {
      testid: 'trend-diff-link',
      title: `Open the Diff of ${row.diff_target_run} against ${row.diff_base_run}`,
      attrs: { href: ctx.link(state), target: '_top' },
    },
    `${row.diff_base_run} → ${row.diff_target_run}`,
  );
}

function changeTable(view: TrendView, ctx: RunViewContext): HTMLElement {
  const rows = changeRows(view);
  if (rows.length === 0) {
    return h('p', { class: 'ks-muted', testid: 'trend-no-changes' }, 'No change was named.');
  }
  const head = ['', 'Metric', 'Name', 'First run', 'Change', 'Before', 'After', 'Diff'];
  return h(
    'table',
    { class: 'ks-trend-table', testid: 'trend-changes' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        head.map((t) => h('th', null, t)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((row) =>
        h(
          'tr',
          {
            class: `ks-trend-${row.kind}`,
            testid: 'trend-change',
            dataset: { kind: row.kind, metric: row.metric, name: row.name, run: row.first_run },
          },
          h('td', null, row.kind === 'regression' ? '▲' : '▼'),
          h('td', null, metricLabel(row.metric)),
          h('td', { class: 'ks-trend-name', title: row.name }, changeName(row)),
          h('td', null, row.first_run),
          h(
            'td',
            {
              class: 'ks-num ks-trend-pct',
              title: row.confirmed
                ? undefined
                : 'At the last run of its workload: not yet confirmed by a later run',
            },
            row.confirmed ? changeText(row.change_pct) : `${changeText(row.change_pct)} ?`,
          ),
          h('td', { class: 'ks-num' }, valueText(row, row.baseline)),
          h('td', { class: 'ks-num' }, valueText(row, row.value)),
          h('td', null, diffCell(row, view, ctx)),
        ),
      ),
    ),
  );
}

function runErrors(view: TrendView): HTMLElement | null {
  const broken = view.runs.filter((r) => r.errors.length > 0);
  if (!broken.length) return null;
  return h(
    'div',
    { class: 'ks-notice', testid: 'trend-errors', role: 'alert' },
    h('strong', null, `${plural(broken.length, 'run')} had files that could not be read:`),
    h(
      'ul',
      null,
      broken.map((r) => h('li', null, `${r.run}: ${r.errors.join('; ')}`)),
    ),
  );
}

function stepChart(series: RunSeries): RunChart {
  const { runs, stepUs: values, stepMarks: marks, workloadOf, workloads } = series;
  const format = formatDuration;
  const axisFormat = formatDurationAxis;
  const title = 'Step time (median)';
  return { title, runs, values, marks, workloadOf, workloads, format, axisFormat };
}

function peakChart(series: RunSeries): RunChart {
  const { runs, peakBytes: values, peakMarks: marks, workloadOf, workloads } = series;
  return {
    title: 'Memory peak',
    runs,
    values,
    marks,
    workloadOf,
    workloads,
    format: formatBytes,
    axisFormat: formatBytesAxis,
    ticks: binaryByteTicks,
  };
}

/** In place of a chart none of whose runs has a value: what is missing, and why. */
function emptyChart(testid: string, title: string, why: string): HTMLElement {
  return h(
    'div',
    { class: 'ks-trend-chart ks-trend-empty', testid },
    h('strong', null, title),
    h('p', { class: 'ks-muted' }, why),
  );
}

function notesList(view: TrendView): HTMLElement | null {
  if (!view.notes.length) return null;
  return h(
    'div',
    { class: 'ks-notice', testid: 'trend-notes' },
    h(
      'strong',
      null,
      `${plural(view.workloads.length, 'workload')}: each run is compared only with runs of its own workload.`,
    ),
    h(
      'ul',
      null,
      view.notes.map((n) => h('li', null, n)),
    ),
  );
}

class TrendsPage {
  private readonly charts: ChartHandle[] = [];

  constructor(
    private readonly root: HTMLElement,
    private readonly ctx: RunViewContext,
  ) {}

  start(): Promise<void> {
    const { ctx } = this;
    const loading = h(
      'div',
      { class: 'ks-panel ks-loading', testid: 'trend-loading' },
      'Reading the runs…',
    );
    const onWaiting = (p: TrendLoading): void => {
      loading.textContent = progressText(p);
    };
    return loadRunPage(this.root, ctx.signal, {
      loading,
      fetch: () => ctx.api.getReady('trend', { span: ctx.span }, ctx.signal, onWaiting),
      show: (view) => this.show(view),
      errorTestid: 'trend-error',
      errorTitle: 'Could not compute the trend',
    });
  }

  dispose(): void {
    for (const chart of this.charts.splice(0)) chart.dispose();
    this.root.remove();
  }

  private async show(view: TrendView): Promise<void> {
    const series = runSeries(view);
    const stepEl = h('div', { class: 'ks-trend-chart', testid: 'trend-step-chart' });
    const peakEl = h('div', { class: 'ks-trend-chart', testid: 'trend-peak-chart' });
    const summary = `${plural(view.runs.length, 'run')} · ${plural(view.regressions.length, 'regression')} · ${plural(view.improvements.length, 'improvement')}`;
    replaceChildren(
      this.root,
      h(
        'header',
        { class: 'ks-view-head' },
        h('h2', null, 'Trends'),
        h('p', { class: 'ks-muted', testid: 'trend-summary' }, summary),
      ),
      runErrors(view),
      notesList(view),
      section(
        {
          anchor: 'runs',
          testid: 'trend-charts',
          title: 'Run by run',
          intro:
            'Median step time and the highest memory peak of each run; a pin marks a run where a change was first seen.',
        },
        h('div', { class: 'ks-trend-charts' }, stepEl, peakEl),
      ),
      section(
        {
          anchor: 'changes',
          testid: 'trend-changes-section',
          title: 'What changed',
          intro: ruleText(view),
        },
        changeTable(view, this.ctx),
      ),
    );
    const charts: [HTMLElement, RunChart][] = [
      [stepEl, stepChart(series)],
      [peakEl, peakChart(series)],
    ];
    if (series.peakBytes.every((v) => v === null)) {
      charts.pop();
      peakEl.replaceWith(
        emptyChart(
          'trend-peak-empty',
          'Memory peak',
          'No run has memory events: record with profile_memory=True to see the peak run by run.',
        ),
      );
    }
    for (const [el, chart] of charts) {
      this.charts.push(await createChart(el, runChartOption(chart), this.ctx.themes));
      if (this.ctx.signal.aborted) return;
    }
    this.root.dataset.ready = 'true';
  }
}

export const trendsView: RunViewDef = {
  id: 'trends',
  label: 'Trends',
  order: 40,
  absent: 'the logdir has a single run (the page compares the runs of a logdir)',
  render(container: HTMLElement, ctx: RunViewContext): Promise<ViewHandle> {
    ensureStyle('trends', css);
    const root = h('div', { class: 'ks-view ks-trends', testid: 'trends' });
    container.appendChild(root);
    const page = new TrendsPage(root, ctx);
    // Mounted at once: the page shows its own progress while the server summarises.
    void page.start();
    return Promise.resolve({ dispose: () => page.dispose() });
  },
};
