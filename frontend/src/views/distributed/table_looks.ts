// The Distributed page's tables' fixed looks: test id, caption, height, the URL key of the
// sort and the columns dropped first when narrow (the rows and their attributes come from
// the view; the communication groups' look is in groups.ts).

import type { TableOptions } from '../../components/table';

import { URL_KEYS } from './model';

/** A table's fixed look (the rows and their attributes come from the view). */
export type TableLook = Pick<
  TableOptions<unknown>,
  'testid' | 'caption' | 'maxHeight' | 'rowHeight' | 'emptyText' | 'optional'
> & {
  /** The URL key that keeps the table's sort; none: the sort is not kept. */
  sortKey?: string;
};

export const TABLE_LOOK = {
  processGroups: {
    testid: 'process-groups-table',
    caption: 'Process groups',
    maxHeight: 220,
    rowHeight: 32,
  },
  ranks: {
    testid: 'rank-table',
    caption: 'Time per rank',
    maxHeight: 440,
    sortKey: URL_KEYS.rankSort,
    emptyText: 'No ranks.',
    // Dropped first, in order, when too narrow (1280 px); the Columns menu shows them.
    optional: ['host', 'transfer', 'late'],
  },
  collectives: {
    testid: 'collective-table',
    caption: 'Collectives per type',
    maxHeight: 320,
    sortKey: URL_KEYS.collectiveSort,
    emptyText: 'No collectives in these traces.',
  },
  stragglers: {
    testid: 'straggler-table',
    optional: ['measured'],
    caption: 'Stragglers per step',
    maxHeight: 360,
    sortKey: URL_KEYS.stragglerSort,
    emptyText: 'No steps found in these traces.',
  },
  gpus: {
    testid: 'gpu-table',
    optional: ['cc', 'memory'],
    caption: 'GPUs per rank',
    maxHeight: 320,
  },
} satisfies Record<string, TableLook>;
