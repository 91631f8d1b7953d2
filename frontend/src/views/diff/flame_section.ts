// The Diff page's differential flame graph: the `flamegraph` route of both sides merged by
// call path (components/flame_model.ts diffTree). A frame is as wide as the larger of its
// two times, red where the target spends more than the base, green where less; hover says
// both. GPU kernel time when both sides ran kernels, else CPU time; search and zoom as on
// the Flame graph page.

import { h } from '../../components/dom';
import { FLAME_CSS, FlameChart } from '../../components/flame_canvas';
import { buildTree, diffTree } from '../../components/flame_model';
import { formatDuration } from '../../components/format';
import { searchField, selectField, toolButton } from '../../components/table_tools';
import { ensureStyle } from '../../components/view_style';
import * as kit from '../page_kit';
import type { ViewContext } from '../types';
import type { Target } from './state';

type Metric = 'cpu' | 'gpu';

export class DiffFlameSection {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'ks-diff-flame-body' });
  private readonly caption = h('p', { class: 'ks-muted', testid: 'diff-flame-caption' });
  private chart: FlameChart | undefined;
  private query = '';
  private readonly search: ReturnType<typeof searchField>;

  constructor(
    private readonly ctx: ViewContext,
    private readonly target: Target,
    bothGpu: boolean,
  ) {
    ensureStyle('flamegraph', FLAME_CSS);
    const metric: Metric = bothGpu ? 'gpu' : 'cpu';
    const metrics: [string, string][] = [['cpu', 'CPU time']];
    if (bothGpu) metrics.unshift(['gpu', 'GPU kernel time']);
    const sel = selectField('Time', 'diff-flame-metric', metrics, metric, (v) => {
      void this.load(v === 'gpu' ? 'gpu' : 'cpu');
    });
    this.search = searchField('Search', 'diff-flame-search', 'frame name or file', '', (q) => {
      this.query = q;
      this.chart?.search(q);
    });
    const reset = toolButton('Reset zoom', 'diff-flame-reset', () => this.chart?.resetZoom());
    this.element = kit.section(
      {
        anchor: 'flame',
        testid: 'diff-flame',
        title: 'Flame graph (differential)',
        intro:
          'Both traces by call path (Python frames, operators, launches): a frame is as wide as the larger of its two times; red: the target spends more time there, green: less. Click to zoom, hover for both times.',
      },
      h('div', { class: 'ks-toolbar' }, sel.el, this.search.el, reset),
      this.caption,
      this.body,
    );
    void this.load(metric);
  }

  dispose(): void {
    this.search.dispose();
    this.chart?.dispose();
  }

  private async load(metric: Metric): Promise<void> {
    this.element.dataset.ready = 'false';
    const signal = this.ctx.signal;
    const other = {
      run: this.target.run,
      worker: this.target.worker,
      span: this.target.span ?? '',
    };
    const [base, target] = await Promise.all([
      this.ctx.api.getReady('flamegraph', { ...this.ctx.key, metric }, signal),
      this.ctx.api.getReady('flamegraph', { ...other, metric }, signal),
    ]);
    const merged = diffTree(buildTree(base), buildTree(target));
    this.chart?.dispose();
    this.chart = new FlameChart(merged, { testid: 'diff-flame-chart' });
    this.body.replaceChildren(this.chart.element);
    this.chart.search(this.query);
    this.caption.textContent = `${metric === 'gpu' ? 'Kernel' : 'Host'} time: base ${formatDuration(base.total_us)}, target ${formatDuration(target.total_us)}.`;
    this.element.dataset.metric = metric;
    this.element.dataset.ready = 'true';
  }
}
