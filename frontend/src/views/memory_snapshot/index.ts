// The Memory snapshot page (run-level): the CUDA caching allocator snapshots of a run
// folder (`torch.cuda.memory._dump_snapshot`), read on the server without running anything
// in them. Per file and device: active memory over time (per stream, the peak and OOMs
// marked), the allocations alive at the peak by stack (an icicle from the outermost frame,
// and the largest stacks as model source), allocated vs reserved (fragmentation), and the
// OOM events with the free memory they report. A snapshot belongs to the run, not to one
// worker's trace, so this is a run-level page (shown without loading a worker); the Memory
// page shows the same panels in its "Snapshot" part (`mountSnapshots`), and this page
// links there when the run has a trace. Times are on the trace's axis where the files
// allow, and the page says when they do not.

import type { MemorySnapshotResponse, SnapshotDevice, SnapshotFileView } from '../../api/types';
import { createChart, type ChartHandle } from '../../components/chart';
import { h, replaceChildren } from '../../components/dom';
import { formatBytes } from '../../components/format';
import { ensureStyle } from '../../components/view_style';
import { loadRunPage, section } from '../page_kit';
import type { RunViewContext, RunViewDef, ViewHandle } from '../types';

import { timelineOption } from './chart';
import { alignmentText, timeOrigin, traceWindow } from './model';
import { deviceTiles, icicle, oomTable, stackList } from './sections';
import css from './snapshot.css';

class SnapshotPage {
  private readonly charts: ChartHandle[] = [];

  constructor(
    private readonly root: HTMLElement,
    private readonly ctx: RunViewContext,
    private readonly linkToMemory: boolean,
  ) {}

  start(): Promise<void> {
    const { ctx } = this;
    return loadRunPage(this.root, ctx.signal, {
      loading: h(
        'div',
        { class: 'ks-panel ks-loading', testid: 'snapshot-loading' },
        'Reading the memory snapshots…',
      ),
      fetch: () =>
        ctx.api.getReady('memory_snapshot', { run: ctx.run, span: ctx.span }, ctx.signal),
      show: (view) => this.show(view),
      errorTestid: 'snapshot-error',
      errorTitle: 'Could not read the memory snapshots',
    });
  }

  dispose(): void {
    for (const chart of this.charts.splice(0)) chart.dispose();
    this.root.remove();
  }

  private async show(view: MemorySnapshotResponse): Promise<void> {
    const page = h(
      'div',
      { class: 'ks-snap-page' },
      h('h2', { class: 'ks-view-title' }, `Memory snapshots of ${view.run}`),
      view.snapshots.length === 0
        ? h('p', { class: 'ks-muted' }, 'No memory snapshot in this run.')
        : null,
      this.memoryLink(view),
    );
    replaceChildren(this.root, page);
    for (const file of view.snapshots) {
      page.appendChild(await this.fileSection(file));
      if (this.ctx.signal.aborted) return;
    }
    // Each chart starts once its section is in the page (see ChartHandle.drawn).
    await Promise.all(this.charts.map((chart) => chart.drawn));
    if (this.ctx.signal.aborted) return;
    this.root.dataset.ready = 'true';
  }

  /** Back to the Memory tab (its Snapshot part), when the run has a trace to show it on. */
  private memoryLink(view: MemorySnapshotResponse): HTMLElement | null {
    if (!this.linkToMemory || !view.snapshots.some((f) => f.alignment !== null)) return null;
    return h(
      'p',
      { class: 'ks-snap-memory-link' },
      h(
        'a',
        {
          testid: 'snapshot-memory-link',
          attrs: {
            href: this.ctx.link({ view: 'memory', [SNAPSHOT_PART_KEY]: 'snapshot' }),
            target: '_top',
          },
        },
        'Show in the Memory tab, beside the trace’s memory',
      ),
    );
  }

  private async fileSection(file: SnapshotFileView): Promise<HTMLElement> {
    const box = h(
      'section',
      { class: 'ks-snap-file', testid: 'snapshot-file', dataset: { file: file.file } },
      h('h3', null, `${file.file} · ${formatBytes(file.size)}`),
    );
    if (file.error !== null) {
      box.appendChild(
        h(
          'p',
          { class: 'ks-error-message', testid: 'snapshot-file-error', role: 'alert' },
          file.error,
        ),
      );
      return box;
    }
    box.appendChild(
      h('p', { class: 'ks-muted', testid: 'snapshot-alignment' }, alignmentText(file.alignment)),
    );
    for (const device of file.devices) box.appendChild(await this.deviceSection(file, device));
    return box;
  }

  private async deviceSection(
    file: SnapshotFileView,
    device: SnapshotDevice,
  ): Promise<HTMLElement> {
    const d = device.device;
    const chartEl = h('div', { class: 'ks-snap-chart', testid: `snapshot-chart-${d}` });
    const origin = timeOrigin(device, file.alignment);
    const box = h(
      'div',
      { class: 'ks-snap-device', testid: `snapshot-device-${d}`, dataset: { device: String(d) } },
      h('h4', null, `cuda:${d}`),
      deviceTiles(device),
      section(
        {
          anchor: `timeline-${d}`,
          testid: `snapshot-timeline-${d}`,
          title: 'Active memory over time',
          intro: `${device.timeline.points} changes in the allocator's history (${device.history_entries} entries; what was allocated before the first one, ${formatBytes(device.baseline_bytes)}, is taken from the snapshot's end state).`,
        },
        origin === null || device.timeline.points === 0
          ? h('p', { class: 'ks-muted' }, 'No allocation history with times in this snapshot.')
          : chartEl,
      ),
      section(
        {
          anchor: `peak-${d}`,
          testid: `snapshot-peak-stacks-${d}`,
          title: 'Alive at the peak, by stack',
          intro:
            'Outermost frame on top; width is bytes alive at the peak. Hover a box for its frame.',
        },
        icicle(device),
        stackList(device),
      ),
      section(
        { anchor: `ooms-${d}`, testid: `snapshot-oom-section-${d}`, title: 'Out of memory' },
        oomTable(device),
      ),
    );
    if (origin !== null && device.timeline.points > 0) {
      const chart = await createChart(
        chartEl,
        timelineOption(device, origin, traceWindow(file.alignment, origin)),
        this.ctx.themes,
      );
      this.charts.push(chart);
      // For the browser tests: where a time (ms on the axis) is drawn now, in px.
      void chart.drawn.then(() =>
        Object.assign(chartEl, { xPixel: (ms: number) => chart.toPixel?.('active', [ms, 0])?.[0] }),
      );
    }
    return box;
  }
}

/** The URL key of the Memory page's part ("snapshot": its Snapshot part). */
export const SNAPSHOT_PART_KEY = 'memory.part';

/** The snapshot panels in `container`; `linkToMemory`: the run-level page's link to the
 *  Memory tab (not inside the Memory tab itself). */
export function mountSnapshots(
  container: HTMLElement,
  ctx: RunViewContext,
  linkToMemory: boolean,
): ViewHandle {
  ensureStyle('memory_snapshot', css);
  const root = h('div', {
    class: 'ks-view ks-snap',
    testid: 'memory-snapshot',
    dataset: { run: ctx.run, span: ctx.span },
  });
  container.appendChild(root);
  const page = new SnapshotPage(root, ctx, linkToMemory);
  // Mounted at once: the page shows its own progress while the server reads the files.
  void page.start();
  return { dispose: () => page.dispose() };
}

function renderSnapshots(container: HTMLElement, ctx: RunViewContext): Promise<ViewHandle> {
  return Promise.resolve(mountSnapshots(container, ctx, true));
}

export const memorySnapshotView: RunViewDef = {
  id: 'memory_snapshot',
  label: 'Memory snapshot',
  order: 30,
  render: renderSnapshots,
};
