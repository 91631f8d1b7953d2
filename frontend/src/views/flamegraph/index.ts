// The Flame graph page: the `flamegraph` route as a canvas icicle (components/
// flame_canvas.ts), CPU time per thread or GPU time by launching call path. Search
// highlights frames (name or file), a click zooms into a frame, "Reset zoom" goes back to
// the whole. The metric, the search and the zoomed path live in the URL
// (p.kinetoscope.flame.*), so a link opens the same picture.

import type { FlameGraphView } from '../../api/types';
import { h } from '../../components/dom';
import { FLAME_CSS, FlameChart, flameLegend } from '../../components/flame_canvas';
import { sourceAnchor, stackLinkNote } from '../../components/editor_links';
import { buildTree, nodeAt, pathOf, sourceOf, type FlameNode } from '../../components/flame_model';
import { formatDuration, formatPercent, plural } from '../../components/format';
import { HashParamStore, type HashParams } from '../../components/hash_params';
import {
  ensureTableToolsStyle,
  searchField,
  selectField,
  toolButton,
} from '../../components/table_tools';
import { ensureStyle } from '../../components/view_style';
import * as kit from '../page_kit';
import type { ViewContext, ViewDef, ViewHandle } from '../types';

const K = { metric: 'flame.metric', q: 'flame.q', zoom: 'flame.zoom' } as const;
type Metric = 'cpu' | 'gpu';
const PATH_SEP = '\u001f'; // between the zoomed path's names in the URL

interface State {
  metric: Metric;
  q: string;
  zoom: string[];
}

function readState(p: HashParams, hasGpu: boolean): State {
  const metric: Metric = p[K.metric] === 'gpu' && hasGpu ? 'gpu' : 'cpu';
  return { metric, q: p[K.q] ?? '', zoom: p[K.zoom]?.split(PATH_SEP) ?? [] };
}

function summary(data: FlameGraphView): string {
  const what = data.metric === 'gpu' ? 'kernel time' : 'host time';
  const from = data.stacks ? `Python frames from ${data.stacks}` : 'no Python frames';
  return `${formatDuration(data.total_us)} ${what}; ${from}`;
}

class FlamePage {
  readonly element: HTMLElement;
  private readonly chart: FlameChart;
  private readonly search: ReturnType<typeof searchField>;
  private readonly caption = h('p', { class: 'ks-muted', testid: 'flame-caption' });
  private head: HTMLElement;
  private readonly where = h('p', { class: 'ks-small', testid: 'flame-zoomed' });
  private readonly matched = h('p', { class: 'ks-small', testid: 'flame-matches' });
  private legend: HTMLElement = h('div');

  constructor(
    private readonly ctx: ViewContext,
    private readonly store: HashParamStore,
    private readonly state: State,
    private data: FlameGraphView,
    hasGpu: boolean,
  ) {
    this.element = h('div', {
      class: 'ks-view ks-flamegraph',
      testid: 'flamegraph',
      dataset: { metric: state.metric, ready: 'false' },
    });
    this.chart = new FlameChart(buildTree(data), {
      testid: 'flame-chart',
      onZoom: (node) => {
        this.state.zoom = pathOf(node);
        this.showZoomed(node);
        this.save();
      },
    });
    this.search = searchField('Search', 'flame-search', 'frame name or file', state.q, (q) => {
      this.state.q = q;
      this.runSearch();
      this.save();
    });
    const metrics: [string, string][] = [['cpu', 'CPU time (per thread)']];
    if (hasGpu) metrics.push(['gpu', 'GPU kernel time']);
    const metricSel = selectField('Time', 'flame-metric', metrics, state.metric, (v) => {
      void this.switchMetric(v === 'gpu' ? 'gpu' : 'cpu');
    });
    const reset = toolButton(
      'Reset zoom',
      'flame-reset',
      () => this.chart.resetZoom(),
      'The whole',
    );
    this.head = kit.viewHead('Flame graph', ctx.key, summary(data));
    this.element.append(
      this.head,
      h('div', { class: 'ks-toolbar' }, metricSel.el, this.search.el, reset),
      this.matched,
      this.caption,
      this.legend,
      this.where,
      this.chart.element,
    );
  }

  start(): Promise<void> {
    this.show();
    this.element.dataset.ready = 'true';
    return Promise.resolve();
  }

  dispose(): void {
    this.search.dispose();
    this.chart.dispose();
    this.element.remove();
  }

  private show(): void {
    const root = buildTree(this.data);
    const head = kit.viewHead('Flame graph', this.ctx.key, summary(this.data));
    this.head.replaceWith(head);
    this.head = head;
    this.chart.setRoot(root);
    const legend = flameLegend(root);
    this.legend.replaceWith(legend);
    this.legend = legend;
    this.runSearch();
    this.chart.zoom(nodeAt(root, this.state.zoom));
    const gpu = this.data.metric === 'gpu';
    const lost = this.data.no_launcher_us ?? 0;
    this.caption.textContent =
      (gpu
        ? 'Each kernel under the call that launched it, that call’s operator and its Python frames.'
        : 'Each thread’s operators (self time) and runtime calls under their Python frames.') +
      (gpu && lost > 0 ? ` ${formatDuration(lost)} of kernels with no known launch call.` : '') +
      ' Click a frame to zoom; hover for its file and line.';
  }

  /** Highlights the search's frames and says how many and what share of the time. */
  private runSearch(): void {
    const q = this.state.q.trim();
    const found = this.chart.search(q);
    const what = this.data.metric === 'gpu' ? 'kernel time' : 'host time';
    this.matched.hidden = q === '';
    this.matched.textContent = found.nodes
      ? `${plural(found.nodes, 'frame')} match “${q}”: ${formatPercent(found.share * 100, 1)} of the ${what} (${formatDuration(found.share * this.data.total_us)}).`
      : `No frame matches “${q}”.`;
  }

  /** The zoomed frame, its file:line a link to the editor. */
  private showZoomed(node: FlameNode): void {
    if (!node.parent) {
      this.where.replaceChildren();
      return;
    }
    const place = sourceOf(node.frame);
    const link = place ? sourceAnchor(node.frame.file, node.frame.line, place) : null;
    this.where.replaceChildren(
      `Zoomed into ${node.frame.name} (${formatDuration(node.total)})`,
      ...(place ? [' at ', link ?? h('code', null, place)] : []),
    );
    this.where.append(stackLinkNote(this.where));
  }

  private async switchMetric(metric: Metric): Promise<void> {
    this.element.dataset.busy = 'true';
    this.data = await this.ctx.api.getReady(
      'flamegraph',
      { ...this.ctx.key, metric },
      this.ctx.signal,
    );
    this.state.metric = metric;
    this.state.zoom = [];
    this.element.dataset.metric = metric;
    this.show();
    this.save();
    this.element.dataset.busy = 'false';
  }

  private save(): void {
    this.store.write({
      [K.metric]: this.state.metric === 'cpu' ? undefined : this.state.metric,
      [K.q]: this.state.q || undefined,
      [K.zoom]: this.state.zoom.length ? this.state.zoom.join(PATH_SEP) : undefined,
    });
  }
}

async function renderFlame(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  ensureStyle('flamegraph', FLAME_CSS);
  const store = new HashParamStore(Object.values(K));
  const hasGpu = ctx.status.views.includes('kernels');
  const state = readState(store.read(), hasGpu);
  const data = await ctx.api.getReady(
    'flamegraph',
    { ...ctx.key, metric: state.metric },
    ctx.signal,
  );
  return kit.mountPage(container, new FlamePage(ctx, store, state, data, hasGpu));
}

export const flamegraphView: ViewDef = {
  id: 'flamegraph',
  label: 'Flame graph',
  order: 80,
  absent: 'it holds no operators or annotations (host ranges)',
  render: renderFlame,
};
