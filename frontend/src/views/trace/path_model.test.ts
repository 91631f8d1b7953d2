import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PathSegment, TracksResponse } from '../../api/types';
import { pathMarks } from './path_model';

function track(id: string, worker: string | null, pid: string, tid: string, kind = 'cpu') {
  return {
    id,
    worker,
    kind,
    label: id,
    process: pid,
    pid,
    tid,
    device: null,
    stream: null,
    sort: 0,
    max_depth: 1,
    event_count: 1,
    counter: null,
  };
}

const segment = (worker: string, lane: string, start: number, kind = 'cpu'): PathSegment => ({
  rank: 0,
  worker,
  kind,
  name: 'op',
  start_us: start,
  dur_us: 5,
  lane,
});

describe('pathMarks', () => {
  it('puts one worker’s segments on their pid/tid track, times from the origin', () => {
    const tracks = {
      time_base: 'file',
      start_us: 1000,
      end_us: 2000,
      workers: [],
      tracks: [
        track('t1', null, '100', '100', 'python'),
        track('t2', null, '100', '100'),
        track('t3', null, '0', '7', 'gpu'),
      ],
      steps: [],
    } as TracksResponse;
    const marks = pathMarks(
      [segment('', '100/100', 1010), segment('', '0/7', 1020, 'kernel')],
      tracks,
      1000,
      false,
    );
    assert.deepEqual(
      marks.map((m) => [m.trackId, m.start, m.kind]),
      [
        ['t2', 10, 'cpu'],
        ['t3', 20, 'kernel'],
      ],
    );
  });
  it('moves several workers’ segments by their offsets, and leaves out workers not shown', () => {
    const tracks = {
      time_base: 'epoch',
      start_us: 5000,
      end_us: 9000,
      workers: [
        {
          worker: 'rank0',
          rank: 0,
          offset_us: 4000,
          start_us: 5000,
          end_us: 9000,
          index_seconds: 0,
        },
        {
          worker: 'rank1',
          rank: 1,
          offset_us: 4500,
          start_us: 5000,
          end_us: 9000,
          index_seconds: 0,
        },
      ],
      tracks: [track('rank0:t1', 'rank0', '7', '7'), track('rank1:t1', 'rank1', '7', '7')],
      steps: [],
    } as TracksResponse;
    const marks = pathMarks(
      [segment('rank0', '7/7', 1100), segment('rank1', '7/7', 1200), segment('rank2', '7/7', 1)],
      tracks,
      5000,
      true,
    );
    assert.deepEqual(
      marks.map((m) => [m.trackId, m.start]),
      [
        ['rank0:t1', 100],
        ['rank1:t1', 700],
      ],
    );
  });
});
