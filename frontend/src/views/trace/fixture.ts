// Small responses in the shapes of docs/http_api.md (`tracks`, `trace`), for unit tests.

import type { TimelineTrack, TracksResponse, WindowResponse } from '../../api/types';

export const ORIGIN = 1623142623460016;

function track(
  id: string,
  kind: string,
  label: string,
  process: string,
  sort: number,
  maxDepth: number,
  worker: string | null = null,
): TimelineTrack {
  return {
    id,
    worker,
    kind,
    label,
    process,
    pid: kind === 'counter' ? null : '25738',
    tid: kind === 'counter' ? null : '25738',
    device: null,
    stream: null,
    sort,
    max_depth: maxDepth,
    event_count: 10,
    counter: kind === 'counter' ? { metric: 'gpu_utilization', unit: 'fraction', max: 1 } : null,
  };
}

export const TRACKS: TracksResponse = {
  time_base: 'file',
  start_us: ORIGIN,
  end_us: ORIGIN + 1_173_468,
  workers: [
    {
      worker: null,
      rank: null,
      offset_us: 0,
      start_us: ORIGIN,
      end_us: ORIGIN + 1_173_468,
      index_seconds: 0.03,
    },
  ],
  tracks: [
    track('gpu0.util', 'counter', 'GPU 0 utilization', '', 0, 0),
    track('t0', 'cpu', 'thread 25738 (python)', 'CPU python (25738)', 1, 7),
    track('t1', 'cpu', 'thread 25772 (python)', 'CPU python (25738)', 2, 40),
    track('t2', 'gpu', 'GPU 0 stream 7', 'GPU 0 python (0)', 3, 0),
  ],
  steps: [
    { worker: null, name: 'ProfilerStep#5', start_us: ORIGIN + 156, end_us: ORIGIN + 188_104 },
  ],
};

/** Two ranks: ids and labels as the server qualifies them. */
export const RANK_TRACKS: TimelineTrack[] = [
  track('rank0:gpu0.util', 'counter', 'rank 0 · GPU 0 utilization', '', 0, 0, 'rank0'),
  track(
    'rank0:t0',
    'cpu',
    'rank 0 · thread 4037 (python3.8)',
    'rank 0 · CPU trainer (4037)',
    1,
    3,
    'rank0',
  ),
  track('rank1:gpu1.util', 'counter', 'rank 1 · GPU 1 utilization', '', 2, 0, 'rank1'),
  track(
    'rank1:t0',
    'cpu',
    'rank 1 · thread 4045 (python3.8)',
    'rank 1 · CPU trainer (4045)',
    3,
    3,
    'rank1',
  ),
];

export const WINDOW: WindowResponse = {
  time_base: 'file',
  t0: ORIGIN,
  t1: ORIGIN + 2000,
  width: 40,
  min_px: 1,
  us_per_px: 50,
  exact_min_us: 50,
  bucket_us: 16.384,
  tracks: [
    {
      id: 'gpu0.util',
      worker: null,
      events: null,
      blocks: null,
      counter: { start: [ORIGIN, ORIGIN + 50, ORIGIN + 100], value: [1, 0.5, 0] },
    },
    {
      id: 't0',
      worker: null,
      // deliberately not in (depth, start) order
      events: {
        row: [30, 10, 20, 40],
        name: [2, 0, 1, 0],
        start: [ORIGIN + 300, ORIGIN + 0, ORIGIN + 100, ORIGIN + 1200],
        dur: [200, 1000, 150, 700],
        depth: [1, 0, 1, 0],
        flags: [0, 4, 0, 8],
      },
      blocks: {
        row: [-1, 77],
        depth: [2, 2],
        start: [ORIGIN + 110, ORIGIN + 900],
        end: [ORIGIN + 140, ORIGIN + 910],
        count: [6, 1],
        busy: [15, 10],
        name: [2, 1],
      },
      counter: null,
    },
  ],
  names: ['ProfilerStep#5', 'aten::conv2d', 'aten::add'],
  item_count: 8,
  truncated: false,
};
