// The Diff page: the shown worker-span (the base) against the target chosen with the side
// bar's "Compare with…" (p.kinetoscope.target_*, state.ts). Side by side and as deltas:
// steps and the step breakdown, GPU, memory, communication and serving phases; a chart of the top
// changes; the operators and kernels of both sides (status filter, search, sort, CSV).
// One request to the `diff` route, polled while either side loads.

import type { DiffView, KernelDiff, OperatorDiff, RowDiffBase } from '../../api/types';
import { createChart, type ChartHandle } from '../../components/chart';
import { append, h, type Children } from '../../components/dom';
import { plural } from '../../components/format';
import { HashParamStore } from '../../components/hash_params';
import type { VirtualTable } from '../../components/table';
import { ensureTableToolsStyle, selectField } from '../../components/table_tools';
import * as kit from '../page_kit';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { byWorkSection, modulesSection } from './by_work';
import { changesOption } from './chart';
import { DiffFlameSection } from './flame_section';
import { kernelColumns, operatorColumns, sortKeys } from './columns';
import {
  breakdownRows,
  changeBars,
  communicationRows,
  servingRows,
  deviceWordOf,
  gpuRows,
  memoryRows,
  shapeText,
  stepRows,
  type CompareRow,
} from './model';
import { RowsPanel } from './rows_panel';
import { compareTable, deltaTile, diffNotices, ensureDiffStyle, sidesTable } from './sections';
import {
  GROUP_BYS,
  readState,
  readTarget,
  STATE_KEYS,
  stateUpdate,
  TARGET_KEYS,
  type GroupBy,
  type State,
  type Target,
} from './state';

function fetchDiff(
  ctx: ViewContext,
  target: Target,
  groupBy: GroupBy,
  signal: AbortSignal,
): Promise<DiffView> {
  const params = {
    ...ctx.key,
    target_run: target.run,
    target_worker: target.worker,
    target_span: target.span,
    group_by: groupBy,
  };
  return ctx.api.getReady('diff', params, signal);
}

const SORT_KEYS = {
  // The % column is the sorting metric's: device self time, or host self time (CPU only).
  operators: sortKeys([
    ...operatorColumns(true, 'device_self_us'),
    ...operatorColumns(true, 'host_self_us'),
  ]),
  kernels: sortKeys(kernelColumns()),
};

class DiffPage {
  readonly element: HTMLElement;
  private readonly tables: VirtualTable<CompareRow>[] = [];
  private chart: ChartHandle | undefined;
  private flame: DiffFlameSection | undefined;
  private readonly chartEl = h('div', { class: 'ks-chart ks-diff-chart', testid: 'diff-chart' });
  private readonly operators: RowsPanel<OperatorDiff>;
  private readonly kernels: RowsPanel<KernelDiff>;
  private readonly groupSel: ReturnType<typeof selectField>;
  private readonly slot: ReturnType<typeof kit.reloadSlot>;

  constructor(
    private readonly ctx: ViewContext,
    private readonly store: HashParamStore,
    private readonly target: Target,
    private readonly state: State,
    private data: DiffView,
  ) {
    this.element = kit.tablePageRoot('diff', ctx.key, state.groupBy, {
      targetRun: target.run,
      targetWorker: target.worker,
      targetSpan: target.span ?? '',
    });
    const save = (): void => this.save();
    const csvParts = [ctx.key.run, ctx.key.worker, target.run, target.worker];
    this.groupSel = selectField(
      'Match by',
      'diff-group-by',
      GROUP_BYS.map((g) => [g, g === 'name' ? 'Name' : 'Name + input shape'] as const),
      state.groupBy,
      (v) => void this.regroup(GROUP_BYS.find((g) => g === v) ?? 'name'),
    );
    this.operators = new RowsPanel<OperatorDiff>({
      table: 'operators',
      title: 'Operators',
      intro:
        'Every operator of either side, matched by name (or name and input shape), largest change first. Host and device times are summed over calls; an operator missing on a side has 0 there.',
      state: state.operators,
      save,
      searchTexts: (r) => [r.name, shapeText(r.input_shape)],
      csvParts,
      controls: [this.groupSel.el],
    });
    this.kernels = new RowsPanel<KernelDiff>({
      table: 'kernels',
      title: 'Kernels',
      intro: 'Every kernel of either side by name (summed over devices and streams).',
      state: state.kernels,
      save,
      searchTexts: (r) => [r.name],
      csvParts,
    });
    this.slot = kit.reloadSlot(this.element, this.operators.chrome, 'the operators', () => {
      this.groupSel.select.value = this.state.groupBy;
    });
  }

  async start(): Promise<void> {
    const { data, ctx, target } = this;
    const steps = stepRows(data);
    append(this.element, [
      // Both sides whole: the target's span too (a Diff of two spans of one worker read
      // "against run · worker", the span left out).
      kit.viewHead(
        'Diff',
        ctx.key,
        `against ${target.run} · ${target.worker} · ${target.span ? `span ${target.span}` : 'first span'}`,
      ),
      ...diffNotices(data),
      sidesTable(ctx.key, target, data),
      h(
        'div',
        { class: 'ks-tiles', testid: 'diff-summary' },
        steps[1] ? deltaTile(steps[1], 'diff-step-time') : null,
        steps[0] ? deltaTile(steps[0], 'diff-step-count') : null,
      ),
      this.compareSection('steps', 'Steps and breakdown', [
        ...steps,
        ...breakdownRows(data.breakdown),
      ]),
      data.gpu.length
        ? this.compareSection('gpu', deviceWordOf(data.gpu), gpuRows(data.gpu), true)
        : null,
      data.memory.length
        ? this.compareSection('memory', 'Memory peaks', memoryRows(data.memory), true)
        : null,
      data.communication.length
        ? this.compareSection(
            'communication',
            'Communication',
            communicationRows(data.communication),
            true,
          )
        : null,
      data.serving.length
        ? this.compareSection('serving', 'Serving phases', servingRows(data.serving), true)
        : null,
      this.chartSection(),
      (this.flame = new DiffFlameSection(ctx, target, data.kernels.length > 0)).element,
      this.operators.element,
      data.kernels.length ? this.kernels.element : null,
      byWorkSection(data),
      modulesSection(data),
    ]);
    this.showRows();
    if (data.top_changes.length) {
      this.chart = await createChart(this.chartEl, changesOption(changeBars(data)), ctx.themes);
    }
    this.save();
    kit.whenChartsDrawn(this.element, this.chart?.drawn ?? Promise.resolve());
  }

  dispose(): void {
    this.slot.abort();
    this.chart?.dispose();
    this.flame?.dispose();
    for (const table of this.tables) table.destroy();
    this.operators.dispose();
    this.kernels.dispose();
    this.element.remove();
  }

  private save(): void {
    this.store.write(stateUpdate(this.state));
  }

  private showRows(): void {
    const { data } = this;
    const links = (row: RowDiffBase): Children => this.traceLinks(row);
    this.operators.show(
      operatorColumns(data.group_by === 'shape', data.operator_metric, links),
      data.operators,
    );
    this.kernels.show(kernelColumns(links), data.kernels);
  }

  /** Each side's trace view, searching for the row's name; a side that never ran it has
   *  none. Opening the target's keeps the pair, swapped, as the compared target. */
  private traceLinks(row: RowDiffBase): Children {
    const base = { ...this.ctx.key };
    const target = { run: this.target.run, worker: this.target.worker, span: this.target.span };
    const link = (side: 'base' | 'target', state: Record<string, string | undefined>) =>
      h(
        'a',
        {
          class: 'ks-diff-trace-link',
          testid: `diff-trace-${side}`,
          title: `Search “${row.name}” in the ${side}'s trace view`,
          attrs: {
            href: this.ctx.link({ ...state, view: 'trace', q: row.name }),
            target: '_top',
          },
        },
        side === 'base' ? 'Base ↗' : 'Target ↗',
      );
    const swapped = { target_run: base.run, target_worker: base.worker, target_span: base.span };
    return [
      row.calls.base ? link('base', base) : null,
      row.calls.target ? link('target', { ...target, ...swapped }) : null,
    ];
  }

  private regroup(groupBy: GroupBy): Promise<void> {
    return this.slot.run(
      (signal) => fetchDiff(this.ctx, this.target, groupBy, signal),
      (result) => {
        this.data = result;
        this.state.groupBy = groupBy;
        this.element.dataset.groupBy = groupBy;
        this.save();
        this.showRows();
      },
    );
  }

  private compareSection(
    anchor: string,
    title: string,
    rows: readonly CompareRow[],
    grouped = false,
  ): HTMLElement {
    const table = compareTable(`diff-${anchor}-table`, title, rows, grouped);
    this.tables.push(table);
    return kit.section({ anchor, testid: `diff-${anchor}`, title }, table.element);
  }

  private chartSection(): HTMLElement {
    const count = this.data.top_changes.length;
    return kit.section(
      {
        anchor: 'top-changes',
        testid: 'diff-top-changes',
        title: 'Top changes',
        intro: count
          ? `The ${plural(count, 'largest change')} of operator and kernel time (target minus base): green dropped, red grew.`
          : 'No operator or kernel time changed.',
      },
      count ? this.chartEl : null,
    );
  }
}

function noTarget(container: HTMLElement, ctx: ViewContext): ViewHandle {
  const el = h(
    'div',
    { class: 'ks-view ks-diff', testid: 'diff-no-target' },
    kit.viewHead('Diff', ctx.key, 'no target chosen'),
    h('p', null, 'Choose the trace to compare this one with in “Compare with…” in the side bar.'),
  );
  container.appendChild(el);
  return { dispose: () => el.remove() };
}

async function renderDiff(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  ensureDiffStyle();
  const store = new HashParamStore([...TARGET_KEYS, ...STATE_KEYS]);
  const params = store.read();
  const target = readTarget(params);
  if (!target) return noTarget(container, ctx);
  const state = readState(params, SORT_KEYS);
  const data = await fetchDiff(ctx, target, state.groupBy, ctx.signal);
  return kit.mountPage(container, new DiffPage(ctx, store, target, state, data));
}

export const diffView: ViewDef = {
  id: 'diff',
  label: 'Diff',
  order: 90,
  absent: 'no run is chosen in “Compare with…”',
  render: renderDiff,
};
