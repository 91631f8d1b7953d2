// The Module page's state in the URL (p.kinetoscope.modules.*): the sort. Which rows are
// open is not kept: the page opens the first levels each time.

import type { HashParams, HashUpdate } from '../../components/hash_params';
import { formatSort, parseSort, type SortSpec } from '../../components/url_values';
import { SORT_KEYS } from './model';

export const K = { sort: 'modules.sort' } as const;

export interface State {
  sort: SortSpec | undefined;
}

export function readState(p: HashParams): State {
  return { sort: parseSort(p[K.sort], SORT_KEYS) };
}

export function stateUpdate(s: State): HashUpdate {
  return { [K.sort]: formatSort(s.sort) };
}
