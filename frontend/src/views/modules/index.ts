// The Module page: the tree of nn.Module calls (traces recorded with with_stack=True) as
// a collapsible table (calls, host and device self/total per module path), each level
// sortable, with expand/collapse all; a module links to the Operators page searching for
// its top operator and to the trace view at its first call. A trace without module calls
// gets the route's reason instead. The sort lives in the URL (state.ts).

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { ModuleRow, ModulesView } from '../../api/types';
import { colAttrs } from '../../components/columns';
import { append, h, type Children } from '../../components/dom';
import { formatCount, formatDuration } from '../../components/format';
import { HashParamStore } from '../../components/hash_params';
import { ensureTableToolsStyle, toolButton } from '../../components/table_tools';
import { ensureStyle } from '../../components/view_style';
import * as kit from '../page_kit';
import { TablePanel } from '../table_panel';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { moduleColumns, NARROW_HIDES } from './columns';
import { initialOpen, operatorsState, parentIds, topOp, traceState, visibleRows } from './model';
import { K, readState, stateUpdate, type State } from './state';
import css from './modules.css';

function moduleTiles(data: ModulesView): HTMLElement[] {
  return [
    kit.tile('Modules', formatCount(data.module_count), 'module paths', 'modules-count'),
    kit.tile('Module calls', formatCount(data.call_count), 'forward calls recorded'),
    kit.tile('Host time', formatDuration(data.host_total_us), 'of the top-level modules'),
    kit.tile('Device time', formatDuration(data.device_total_us), 'launched inside modules'),
  ];
}

class ModulesPage {
  readonly element: HTMLElement;
  private readonly chrome = kit.tableChrome('module');
  private readonly table: TablePanel<ModuleRow>;
  private readonly parents: Set<number>;
  private open: Set<number>;

  constructor(
    private readonly ctx: ViewContext,
    private readonly store: HashParamStore,
    private readonly state: State,
    private readonly data: ModulesView,
  ) {
    this.element = kit.tablePageRoot('modules', ctx.key, 'path', {
      available: String(data.available),
    });
    this.parents = parentIds(data.modules);
    this.open = initialOpen(data.modules);
    this.table = new TablePanel<ModuleRow>({
      testid: 'module-table',
      caption: 'Modules',
      optional: NARROW_HIDES,
      rowAttrs: (row) => ({
        'data-module': row.path,
        'data-depth': String(row.depth),
        'data-open': String(this.open.has(row.id)),
      }),
      searchTexts: (row) => [row.path],
      cellAttrs: colAttrs,
      count: this.chrome.count,
      onSort: (sort) => {
        this.state.sort = sort;
        this.save();
        this.show();
      },
    });
  }

  start(): Promise<void> {
    const { data } = this;
    const summary = data.available
      ? `${formatCount(data.module_count)} modules, ${formatCount(data.call_count)} calls`
      : 'no module information';
    append(this.element, [
      kit.viewHead('Modules', this.ctx.key, summary),
      kit.partialNotice(this.ctx.status),
      data.available ? this.tableParts() : this.unavailable(),
    ]);
    this.save();
    this.element.dataset.ready = 'true';
    return Promise.resolve();
  }

  dispose(): void {
    this.table.destroy();
    this.element.remove();
  }

  private save(): void {
    this.store.write(stateUpdate(this.state));
  }

  private unavailable(): HTMLElement {
    return h(
      'div',
      { class: 'ks-notice', testid: 'modules-unavailable', role: 'note' },
      this.data.reason ?? 'No module information in this trace.',
    );
  }

  private tableParts(): Children {
    const tiles = h(
      'div',
      { class: 'ks-tiles', testid: 'modules-summary' },
      moduleTiles(this.data),
    );
    const specs = moduleColumns({
      isOpen: (row) => this.open.has(row.id),
      hasChildren: (row) => this.parents.has(row.id),
      toggle: (row) => this.toggle(row),
      links: (row) => this.rowLinks(row),
    });
    this.state.sort = this.table.build(specs, this.shownRows(), {
      sort: this.state.sort,
      search: '',
      emptyText: 'No modules.',
    });
    const section = kit.section(
      {
        anchor: 'modules',
        testid: 'modules-table',
        title: 'Module tree',
        intro:
          'One row per module path; calls of the same path are summed. Host self is the time not in a nested module; device time is that of the kernels the module’s operators launched. Click a header to sort each level.',
      },
      h(
        'div',
        { class: 'ks-toolbar' },
        toolButton('Expand all', 'module-expand-all', () => this.setOpen(new Set(this.parents))),
        toolButton('Collapse all', 'module-collapse-all', () => this.setOpen(new Set())),
        this.chrome.count,
      ),
      this.table.element,
    );
    return [tiles, section];
  }

  private shownRows(): ModuleRow[] {
    return visibleRows(this.data.modules, this.open, this.state.sort);
  }

  private show(): void {
    this.table.filter(this.shownRows(), '');
  }

  private setOpen(open: Set<number>): void {
    this.open = open;
    this.show();
  }

  private toggle(row: ModuleRow): void {
    if (this.open.has(row.id)) this.open.delete(row.id);
    else this.open.add(row.id);
    this.show();
  }

  private rowLinks(row: ModuleRow): Children {
    const key = this.ctx.key;
    const link = (testid: string, title: string, state: Record<string, string>, text: string) =>
      h(
        'a',
        {
          class: 'ks-module-link',
          testid,
          title,
          // A plain link to TensorBoard's page: only its hash changes, and the shell follows.
          attrs: { href: this.ctx.link({ ...key, ...state }), target: '_top' },
        },
        text,
      );
    const op = topOp(row);
    return [
      op ? link('module-ops-link', `Operators named ${op}`, operatorsState(op), 'Operators') : null,
      link('module-trace-link', 'The first call in the trace view', traceState(row), 'Trace'),
    ];
  }
}

async function renderModules(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureTableToolsStyle();
  ensureStyle('modules', css);
  const store = new HashParamStore(Object.values(K));
  const state = readState(store.read());
  const data = await ctx.api.get('modules', { ...ctx.key }, ctx.signal);
  if (isStillLoading(data)) throw new ViewNotReady();
  return kit.mountPage(container, new ModulesPage(ctx, store, state, data));
}

export const modulesView: ViewDef = {
  id: 'modules',
  label: 'Modules',
  order: 60,
  absent:
    'it records no nn.Module calls (profile with with_stack=True, or with_modules=True, to get them)',
  render: renderModules,
};
