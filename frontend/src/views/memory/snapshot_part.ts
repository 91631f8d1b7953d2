// The Memory page's parts when the run folder holds CUDA allocator snapshots (the `runs`
// listing's `snapshots`): "Trace" (the trace's own [memory] events, the page as it is
// without snapshots) and "Snapshot" (the run-level memory_snapshot page's panels, aligned
// with this worker's span). The part shown lives in the URL (p.kinetoscope.memory.part);
// the Snapshot part is read only when first shown (a big snapshot takes seconds).

import type { ApiClient } from '../../api/client';
import { h } from '../../components/dom';
import { HashParamStore } from '../../components/hash_params';
import { mountSnapshots, SNAPSHOT_PART_KEY } from '../memory_snapshot';
import type { RunViewContext, ViewContext, ViewHandle } from '../types';

type Part = 'trace' | 'snapshot';
const LABELS: Record<Part, string> = { trace: 'Trace', snapshot: 'Snapshot' };

/** How many snapshot files the run has (0 when the listing cannot say). */
async function snapshotCount(api: ApiClient, run: string, signal: AbortSignal): Promise<number> {
  try {
    const { runs } = await api.get('runs', {}, signal);
    return runs.find((r) => r.name === run)?.snapshots.length ?? 0;
  } catch {
    return 0; // the page still shows the trace's memory; the listing's error is the shell's
  }
}

class Parts {
  readonly el: HTMLElement;
  private readonly store = new HashParamStore([SNAPSHOT_PART_KEY]);
  private readonly panes: Record<Part, HTMLElement>;
  private readonly tabs: Record<Part, HTMLButtonElement>;
  private snapshots: ViewHandle | null = null;
  private written: string | undefined;

  constructor(
    private readonly ctx: ViewContext,
    files: number,
  ) {
    this.panes = {
      trace: h('div', { class: 'ks-mem-part', testid: 'memory-part-trace' }),
      snapshot: h('div', { class: 'ks-mem-part', testid: 'memory-part-snapshot' }),
    };
    this.tabs = { trace: this.tab('trace'), snapshot: this.tab('snapshot') };
    this.tabs.snapshot.append(` (${files} file${files === 1 ? '' : 's'})`);
    this.el = h(
      'div',
      { class: 'ks-mem-parts', testid: 'memory-parts' },
      h('div', { class: 'ks-mem-part-tabs', attrs: { role: 'tablist' } }, Object.values(this.tabs)),
      Object.values(this.panes),
    );
  }

  get tracePane(): HTMLElement {
    return this.panes.trace;
  }

  start(): void {
    this.show(this.store.read()[SNAPSHOT_PART_KEY] === 'snapshot' ? 'snapshot' : 'trace', false);
    this.store.watch((params) => {
      this.show(params[SNAPSHOT_PART_KEY] === 'snapshot' ? 'snapshot' : 'trace', false);
    });
  }

  dispose(): void {
    this.store.unwatch();
    // The key goes with the view unless the URL now holds another (a link being opened).
    if (this.store.read()[SNAPSHOT_PART_KEY] === this.written) this.store.clear();
    this.snapshots?.dispose();
    this.el.remove();
  }

  show(part: Part, write = true): void {
    for (const key of Object.keys(this.panes) as Part[]) {
      this.panes[key].hidden = key !== part;
      this.tabs[key].classList.toggle('ks-active', key === part);
      this.tabs[key].setAttribute('aria-selected', String(key === part));
    }
    if (part === 'snapshot' && this.snapshots === null) {
      this.snapshots = mountSnapshots(this.panes.snapshot, this.runContext(), false);
    }
    if (write) {
      this.written = part === 'snapshot' ? 'snapshot' : undefined;
      this.store.write({ [SNAPSHOT_PART_KEY]: this.written });
    }
  }

  private runContext(): RunViewContext {
    const { api, key, themes, signal, viewLabel, link } = this.ctx;
    return { api, run: key.run, span: key.span, themes, signal, viewLabel, link };
  }

  private tab(part: Part): HTMLButtonElement {
    return h(
      'button',
      {
        class: 'ks-mem-part-tab',
        testid: `memory-tab-${part}`,
        attrs: { type: 'button', role: 'tab', 'aria-selected': 'false' },
        on: { click: () => this.show(part) },
      },
      LABELS[part],
    );
  }
}

/**
 * The Memory page in `container`, with a Snapshot part beside it when the run has
 * snapshots; `renderTrace` draws the trace's own memory page into the element it is given.
 */
export async function withSnapshotPart(
  container: HTMLElement,
  ctx: ViewContext,
  renderTrace: (el: HTMLElement) => Promise<ViewHandle>,
): Promise<ViewHandle> {
  const files = await snapshotCount(ctx.api, ctx.key.run, ctx.signal);
  if (files === 0) return renderTrace(container);
  const parts = new Parts(ctx, files);
  container.appendChild(parts.el);
  let trace: ViewHandle;
  try {
    trace = await renderTrace(parts.tracePane);
  } catch (error) {
    parts.dispose();
    throw error;
  }
  parts.start();
  return {
    dispose: () => {
      trace.dispose();
      parts.dispose();
    },
    scrollTo: (anchor) => {
      parts.show('trace');
      return trace.scrollTo?.(anchor) ?? false;
    },
  };
}
