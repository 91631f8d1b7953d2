// The Kernel page's state in the URL (p.kinetoscope.kernels.*): grouping, device and
// stream filters (route parameters), search and sort.

import type { KernelGroupBy, KernelsParams } from '../../api/types';
import type { HashParams, HashUpdate } from '../../components/hash_params';
import {
  formatSort,
  parseIndex,
  parseSort,
  pick,
  unlessDefault,
  type SortSpec,
} from '../../components/url_values';
import { GROUP_BYS } from './model';

export const K = {
  groupBy: 'kernels.group_by',
  device: 'kernels.device',
  stream: 'kernels.stream',
  search: 'kernels.search',
  sort: 'kernels.sort',
} as const;

/** Columns the kernel table drops first, in order, when it is too narrow (1280 px). */
const SORT_KEYS = [
  'name',
  'op_name',
  'device',
  'stream',
  'calls',
  'total_us',
  'mean_us',
  'min_us',
  'max_us',
  'blocks_per_sm',
  'occupancy_pct',
  'registers_per_thread',
  'shared_memory',
  'grid',
  'block',
  'tensor_cores_used',
  'op_tensor_core_eligible',
];

export interface State {
  groupBy: KernelGroupBy;
  device: number | undefined;
  stream: number | undefined;
  search: string;
  sort: SortSpec | undefined;
}

export function readState(p: HashParams): State {
  return {
    groupBy: pick(p[K.groupBy], GROUP_BYS, 'name'),
    device: parseIndex(p[K.device]),
    stream: parseIndex(p[K.stream]),
    search: p[K.search] ?? '',
    sort: parseSort(p[K.sort], SORT_KEYS),
  };
}

export function stateUpdate(s: State): HashUpdate {
  return {
    [K.groupBy]: unlessDefault(s.groupBy, 'name'),
    [K.device]: s.device === undefined ? undefined : String(s.device),
    [K.stream]: s.stream === undefined ? undefined : String(s.stream),
    [K.search]: s.search.trim() || undefined,
    [K.sort]: formatSort(s.sort),
  };
}

export function params(s: State): KernelsParams {
  return { group_by: s.groupBy, device: s.device, stream: s.stream };
}
