// The Operator page's state in the URL (p.kinetoscope.operators.*): grouping, search,
// sort, pie metrics and the open call stack.

import type { OperatorGroupBy } from '../../api/types';
import type { HashParams, HashUpdate } from '../../components/hash_params';
import {
  formatSort,
  parseSort,
  pick,
  unlessDefault,
  type SortSpec,
} from '../../components/url_values';
import {
  DEVICE_METRICS,
  GROUP_BYS,
  HOST_METRICS,
  type DeviceMetric,
  type HostMetric,
} from './model';

export const K = {
  groupBy: 'operators.group_by',
  search: 'operators.search',
  sort: 'operators.sort',
  devicePie: 'operators.device_pie',
  hostPie: 'operators.host_pie',
  stack: 'operators.stack',
  stackShape: 'operators.stack_shape',
} as const;
/** Not a view key: "vscode" / "none" overrides the VS Code detection (README). */
export const EDITOR_KEY = 'editor';

const SORT_KEYS = [
  'name',
  'input_shape',
  'calls',
  'device_self_us',
  'device_total_us',
  'host_self_us',
  'host_total_us',
  'tensor_core_eligible',
  'tensor_core_pct',
  'call_stack',
];

export interface State {
  groupBy: OperatorGroupBy;
  search: string;
  sort: SortSpec | undefined;
  devicePie: DeviceMetric;
  hostPie: HostMetric;
  stack: string | undefined;
  stackShape: string | undefined;
}

export function readState(p: HashParams): State {
  return {
    groupBy: pick(p[K.groupBy], GROUP_BYS, 'name'),
    search: p[K.search] ?? '',
    sort: parseSort(p[K.sort], SORT_KEYS),
    devicePie: pick(p[K.devicePie], DEVICE_METRICS, 'device_self_us'),
    hostPie: pick(p[K.hostPie], HOST_METRICS, 'host_self_us'),
    stack: p[K.stack],
    stackShape: p[K.stackShape],
  };
}

export function stateUpdate(s: State): HashUpdate {
  return {
    [K.groupBy]: unlessDefault(s.groupBy, 'name'),
    [K.search]: s.search.trim() || undefined,
    [K.sort]: formatSort(s.sort),
    [K.devicePie]: unlessDefault(s.devicePie, 'device_self_us'),
    [K.hostPie]: unlessDefault(s.hostPie, 'host_self_us'),
    [K.stack]: s.stack,
    [K.stackShape]: s.stack !== undefined && s.groupBy === 'shape' ? s.stackShape : undefined,
  };
}
