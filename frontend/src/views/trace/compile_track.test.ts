import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TracksResponse, WindowResponse } from '../../api/types';
import { compileView } from '../compile/fixture';
import { CompileTrack } from './compile_track';

const ORIGIN = 1790857026000000;

function tracks(timeBase: 'file' | 'epoch', workers: (string | null)[]): TracksResponse {
  return {
    time_base: timeBase,
    start_us: 0,
    end_us: 1,
    workers: [],
    steps: [],
    tracks: workers.map((worker, i) => ({
      id: worker === null ? `t${i}` : `${worker}:t0`,
      worker,
      kind: 'cpu',
      label: worker === null ? 'thread 1' : `rank ${i} · thread 1`,
      process: 'CPU',
      pid: '1',
      tid: '1',
      device: null,
      stream: null,
      sort: 0,
      max_depth: 0,
      event_count: 1,
      counter: null,
    })),
  };
}

const VIEW = compileView({
  alignments: [
    {
      log: 'a.log',
      rank: null,
      worker: 'worker0',
      span: '1',
      matched_by: 'pid',
      time_origin_us: ORIGIN,
      checked: 0,
      median_error_us: null,
      max_error_us: null,
      in_window: 1,
      outside_window: 0,
      note: '',
    },
  ],
  events: [
    {
      name: 'dynamo',
      compile_id: '0/1',
      rank: null,
      worker: 'worker0',
      start_us: ORIGIN + 1000,
      dur_us: 500,
      depth: 0,
    },
    {
      name: 'fx_graph_cache_miss',
      compile_id: '0/1',
      rank: null,
      worker: 'worker0',
      start_us: ORIGIN + 1200,
      dur_us: 0,
      depth: 1,
    },
    {
      name: 'dynamo',
      compile_id: '0/0',
      rank: null,
      worker: 'worker1',
      start_us: ORIGIN + 9000,
      dur_us: 10,
      depth: 0,
    },
  ],
});

describe('the compile track', () => {
  it('puts one worker’s phases on its file clock, first of its tracks', () => {
    const track = new CompileTrack(VIEW, tracks('file', [null]), ['worker0']);
    const shown = track.withTracks(tracks('file', [null]));
    assert.deepEqual(
      shown.tracks.map((t) => t.id),
      ['compile', 't0'],
    );
    const first = shown.tracks[0];
    assert.ok(first);
    assert.deepEqual([first.event_count, first.max_depth], [2, 1]);
    const names: string[] = ['aten::mm'];
    const wins = track.windows(['compile', 't0'], 0, 1100, names);
    assert.equal(wins.length, 1);
    const events = wins[0]?.events;
    assert.ok(events);
    assert.deepEqual(events.start, [1000]); // the instant at 1200 is after t1
    assert.deepEqual(events.name, [1]);
    assert.deepEqual(names, ['aten::mm', 'dynamo']);
    assert.ok(track.owns('compile') && !track.owns('t0'));
  });

  it('keeps epoch times and worker ids for several workers', () => {
    const both = tracks('epoch', ['worker0', 'worker1']);
    const track = new CompileTrack(VIEW, both, ['worker0', 'worker1']);
    const shown = track.withTracks(both);
    assert.deepEqual(
      shown.tracks.slice(0, 2).map((t) => [t.id, t.label]),
      [
        ['worker0:compile', 'rank 0 · compile phases'],
        ['worker1:compile', 'rank 1 · compile phases'],
      ],
    );
    const answer = track.answer({
      t0: ORIGIN,
      t1: ORIGIN + 1e4,
      width: 100,
      tracks: ['worker1:compile'],
    });
    assert.deepEqual(answer.tracks[0]?.events?.start, [ORIGIN + 9000]);
    assert.equal(answer.item_count, 1);
  });

  it('adds its windows to the server’s answer, names after the server’s', () => {
    const track = new CompileTrack(VIEW, tracks('file', [null]), ['worker0']);
    const server = { ...track.answer({ t0: 0, t1: 2000, width: 10, tracks: [] }), names: ['x'] };
    const merged: WindowResponse = track.merged(server, ['t0', 'compile']);
    assert.deepEqual(merged.names, ['x', 'dynamo', 'fx_graph_cache_miss']);
    assert.deepEqual(
      merged.tracks.map((t) => t.id),
      ['compile'],
    );
    assert.deepEqual(merged.tracks[0]?.events?.flags, [0, 1]); // the cache miss is an instant
  });

  it('is empty when no shown worker has compile phases', () => {
    assert.ok(new CompileTrack(VIEW, tracks('file', [null]), ['worker7']).empty);
  });
});
