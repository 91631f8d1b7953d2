// The module tree table's columns as data (components/columns.ts). The first column is
// the tree: indentation by depth, an expand/collapse button, the module's name. Every
// cell carries data-col and data-value for the end-to-end tests. The table keeps the
// page's row order (each column's sort value is one constant): the page sorts each
// level of the tree itself (model.visibleRows), so a sort never tears a child from its
// parent.

import type { ModuleRow } from '../../api/types';
import { FORMAT, type ColumnSpec } from '../../components/columns';
import { h, type Children } from '../../components/dom';

export interface TreeHooks {
  isOpen: (row: ModuleRow) => boolean;
  hasChildren: (row: ModuleRow) => boolean;
  toggle: (row: ModuleRow) => void;
  /** The links of a row: its top operator, its first call in the trace. */
  links: (row: ModuleRow) => Children;
}

const KEEP_ORDER = (): number => 0;

/** Columns the table drops first, in order, when it is too narrow. */
export const NARROW_HIDES = ['host_self_us', 'device_self_us', 'links'];

function treeCell(row: ModuleRow, hooks: TreeHooks): Children {
  const open = hooks.isOpen(row);
  const toggle = hooks.hasChildren(row)
    ? h(
        'button',
        {
          class: 'ks-tree-toggle',
          testid: 'module-toggle',
          title: open ? 'Collapse' : 'Expand',
          attrs: { type: 'button', 'aria-expanded': String(open) },
          on: { click: () => hooks.toggle(row) },
        },
        open ? '▾' : '▸',
      )
    : h('span', { class: 'ks-tree-leaf' });
  return h(
    'span',
    { class: 'ks-tree-cell', style: `padding-left:${row.depth * 16}px`, title: row.path },
    toggle,
    h('span', { class: 'ks-mono' }, row.name),
  );
}

function timeColumn(
  key: 'host_self_us' | 'host_total_us' | 'device_self_us' | 'device_total_us',
  label: string,
  tooltip: string,
): ColumnSpec<ModuleRow> {
  return {
    key,
    label,
    tooltip: `${tooltip} Click to sort each level of the tree.`,
    align: 'right',
    minWidth: 100,
    value: (row) => row[key],
    format: FORMAT.duration,
    sort: KEEP_ORDER,
  };
}

export function moduleColumns(hooks: TreeHooks): ColumnSpec<ModuleRow>[] {
  return [
    {
      key: 'name',
      label: 'Module',
      tooltip: 'The module instance (class and number); hover for its path.',
      minWidth: 260,
      grow: 3,
      value: (row) => row.name,
      cell: (row) => treeCell(row, hooks),
      sort: KEEP_ORDER,
    },
    {
      key: 'calls',
      label: 'Calls',
      align: 'right',
      minWidth: 70,
      value: (row) => row.calls,
      format: FORMAT.count,
      sort: KEEP_ORDER,
    },
    timeColumn('host_self_us', 'Host self', 'Host time less the modules called inside.'),
    timeColumn('host_total_us', 'Host total', 'The calls’ durations.'),
    timeColumn(
      'device_self_us',
      'Device self',
      'GPU time launched by the operators directly in the module.',
    ),
    timeColumn('device_total_us', 'Device total', 'Device self time plus the children’s.'),
    {
      key: 'links',
      label: 'Open',
      minWidth: 190,
      value: (row) => row.ops[0]?.name ?? null,
      cell: (row) => hooks.links(row),
      sort: false,
    },
  ];
}
