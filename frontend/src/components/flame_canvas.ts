// A canvas icicle of a flame tree (flame_model.ts): the roots on top, width = time. Hover
// shows the frame, its file:line and times; a click zooms into a frame (a click on an
// ancestor row zooms out to it); a search highlights the matching frames and dims the
// rest. In a differential tree a frame is red where the target spends more time than the
// base, green where less (as the Diff page's other charts), grey where equal. What the
// tests read is on the element's dataset: data-zoom (the zoomed frame's name),
// data-matches, data-match-pct, data-widest-match (x,y,w,h of the widest match in CSS
// px), data-grew / data-shrank.

import { h } from './dom';
import { formatDuration, formatPercent } from './format';
import { layout, searchTree, sourceOf, type FlameNode, type FlameRect } from './flame_model';

const ROW = 18;
const MIN_PX = 0.5;
const KIND_HUE: Readonly<Record<string, number>> = {
  python: 45,
  op: 20,
  runtime: 200,
  captured: 320,
  kernel: 110,
  thread: 260,
  root: 0,
  all: 0,
};

/** What each colour of a plain (not differential) flame graph is, for its legend. */
const KIND_LABEL: Readonly<Record<string, string>> = {
  thread: 'thread',
  python: 'Python frame',
  op: 'operator',
  runtime: 'runtime call',
  captured: 'captured as (CUDA graph)',
  kernel: 'GPU kernel',
};

/** A frame's colour by its kind (dimmed while a search matches others). */
function kindColour(kind: string, dim = false): string {
  const hue = KIND_HUE[kind] ?? 30;
  const sat = kind === 'thread' || kind === 'all' ? 10 : 70;
  return `hsl(${hue}, ${dim ? 10 : sat}%, ${dim ? 88 : 70}%)`;
}

/** The legend of the kinds of frames in a tree, in the colours the chart draws them. */
export function flameLegend(root: FlameNode): HTMLElement {
  const kinds = new Set<string>();
  const walk = (node: FlameNode): void => {
    kinds.add(node.frame.kind);
    node.children.forEach(walk);
  };
  walk(root);
  const shown = Object.keys(KIND_LABEL).filter((k) => kinds.has(k));
  return h(
    'div',
    { class: 'ks-flame-legend', testid: 'flame-legend' },
    shown.map((kind) =>
      h(
        'span',
        { class: 'ks-flame-legend-item', dataset: { kind } },
        h('span', { class: 'ks-swatch', attrs: { style: `background:${kindColour(kind)}` } }),
        KIND_LABEL[kind] ?? kind,
      ),
    ),
    h(
      'span',
      { class: 'ks-flame-legend-item', dataset: { kind: 'match' } },
      h('span', { class: 'ks-swatch', attrs: { style: `background:${MATCH_COLOUR}` } }),
      'search match',
    ),
  );
}

const MATCH_COLOUR = 'hsl(300, 80%, 65%)';

export interface FlameChartOptions {
  testid: string;
  onZoom?: (node: FlameNode) => void;
}

export class FlameChart {
  readonly element: HTMLElement;
  private readonly canvas = h('canvas', { class: 'ks-flame-canvas' });
  private readonly tip = h('div', { class: 'ks-flame-tip', testid: 'flame-tip', role: 'tooltip' });
  private rects: FlameRect[] = [];
  private zoomed: FlameNode;
  private matches = new Set<FlameNode>();
  private query = '';
  private readonly observer: ResizeObserver;

  constructor(
    private root: FlameNode,
    private readonly opts: FlameChartOptions,
  ) {
    this.zoomed = root;
    this.element = h('div', { class: 'ks-flame', testid: opts.testid }, this.canvas, this.tip);
    this.tip.hidden = true;
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => (this.tip.hidden = true));
    this.canvas.addEventListener('click', (e) => {
      const rect = this.rectAt(e);
      if (rect) this.zoom(rect.node);
    });
    this.observer = new ResizeObserver(() => this.draw());
    this.observer.observe(this.element);
  }

  get zoomNode(): FlameNode {
    return this.zoomed;
  }

  setRoot(root: FlameNode): void {
    this.root = root;
    this.zoomed = root;
    this.search(this.query);
  }

  zoom(node: FlameNode): void {
    this.zoomed = node;
    this.element.dataset.zoom = node.parent ? node.frame.name : '';
    this.opts.onZoom?.(node);
    this.draw();
  }

  /** Back to the whole tree. */
  resetZoom(): void {
    this.zoom(this.root);
  }

  /** Highlights the frames matching `query`; their count and share of the whole's time. */
  search(query: string): { nodes: number; share: number } {
    this.query = query;
    const found = searchTree(this.root, query);
    this.matches = new Set(found.nodes);
    this.element.dataset.matches = String(found.nodes.length);
    this.element.dataset.matchPct = (100 * found.share).toFixed(1);
    this.draw();
    return { nodes: found.nodes.length, share: found.share };
  }

  dispose(): void {
    this.observer.disconnect();
    this.element.remove();
  }

  private draw(): void {
    const width = Math.max(this.element.clientWidth, 100);
    const minW = MIN_PX / width;
    this.rects = layout(this.zoomed, minW);
    const rows = this.rects.reduce((m, r) => Math.max(m, r.row + 1), 1);
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(rows * ROW * ratio);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${rows * ROW}px`;
    const g = this.canvas.getContext('2d');
    if (!g) return;
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    let grew = 0;
    let shrank = 0;
    for (const r of this.rects) {
      const [x, w, y] = [r.x * width, r.w * width, r.row * ROW];
      g.fillStyle = this.colour(r.node);
      g.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
      if (w > 30) {
        g.fillStyle = '#111';
        g.save();
        g.beginPath();
        g.rect(x, y, w - 2, ROW);
        g.clip();
        g.fillText(r.node.frame.name, x + 3, y + ROW / 2);
        g.restore();
      }
      const delta = (r.node.target ?? 0) - (r.node.base ?? 0);
      if (r.node.base !== undefined && delta > 0) grew += 1;
      if (r.node.base !== undefined && delta < 0) shrank += 1;
    }
    const hits = this.rects.filter((r) => this.matches.has(r.node));
    const first = hits.reduce<FlameRect | undefined>(
      (a, r) => (a && a.w >= r.w ? a : r),
      undefined,
    );
    this.element.dataset.widestMatch = first
      ? [first.x * width, first.row * ROW, first.w * width, ROW].map((v) => v.toFixed(1)).join(',')
      : '';
    this.element.dataset.nodes = String(this.rects.length);
    this.element.dataset.grew = String(grew);
    this.element.dataset.shrank = String(shrank);
  }

  private colour(node: FlameNode): string {
    const dim = this.query.trim() !== '' && !this.matches.has(node);
    if (this.matches.has(node)) return MATCH_COLOUR;
    if (node.base !== undefined) {
      const delta = (node.target ?? 0) - node.base;
      const rel = node.total > 0 ? Math.min(Math.abs(delta) / node.total, 1) : 0;
      const light = 90 - 40 * rel;
      if (Math.abs(delta) < 1e-9) return `hsl(0, 0%, ${dim ? 92 : 85}%)`;
      return delta > 0 ? `hsl(0, 75%, ${light}%)` : `hsl(130, 55%, ${light}%)`;
    }
    return kindColour(node.frame.kind, dim);
  }

  private rectAt(e: MouseEvent): FlameRect | undefined {
    const box = this.canvas.getBoundingClientRect();
    const fx = (e.clientX - box.left) / Math.max(box.width, 1);
    const row = Math.floor((e.clientY - box.top) / ROW);
    return this.rects.find((r) => r.row === row && fx >= r.x && fx < r.x + r.w);
  }

  private hover(e: MouseEvent): void {
    const rect = this.rectAt(e);
    if (!rect) {
      this.tip.hidden = true;
      return;
    }
    const { node } = rect;
    const where = sourceOf(node.frame);
    const share = this.root.total > 0 ? (100 * node.total) / this.root.total : 0;
    const lines = [
      h('div', { class: 'ks-flame-tip-name' }, node.frame.name),
      where ? h('div', { class: 'ks-flame-tip-source', testid: 'flame-tip-source' }, where) : null,
      node.base !== undefined
        ? h(
            'div',
            null,
            `base ${formatDuration(node.base)} → target ${formatDuration(node.target ?? 0)}`,
          )
        : h(
            'div',
            null,
            `${formatDuration(node.total)} (${formatPercent(share, 1)}), self ${formatDuration(node.self)}`,
          ),
    ];
    this.tip.replaceChildren(...lines.filter((l): l is HTMLDivElement => l !== null));
    const box = this.element.getBoundingClientRect();
    this.tip.style.left = `${Math.min(e.clientX - box.left + 12, Math.max(box.width - 320, 0))}px`;
    this.tip.style.top = `${e.clientY - box.top + 14}px`;
    this.tip.hidden = false;
  }
}

export const FLAME_CSS = `
.ks-flame { position: relative; width: 100%; }
.ks-flame-canvas { display: block; cursor: pointer; }
.ks-flame-tip { position: absolute; z-index: 5; max-width: 320px; padding: 4px 6px;
  background: var(--ks-bg, #fff); color: var(--ks-fg, #111); border: 1px solid #999;
  font-size: 12px; pointer-events: none; overflow-wrap: anywhere; }
.ks-flame-tip-name { font-weight: 600; }
.ks-flame-tip-source { font-family: monospace; }
.ks-flame-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 4px 0 8px;
  font-size: 12px; color: var(--ks-muted); }
.ks-flame-legend-item { display: inline-flex; align-items: center; gap: 5px; }
.ks-flame-legend .ks-swatch { display: inline-block; width: 12px; height: 12px;
  border-radius: 2px; }
`;
