import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORIGIN, WINDOW } from './fixture';
import { decodeWindow, depthRange, lowerBound, type CounterFrame, type SliceFrame } from './frame';

describe('decodeWindow', () => {
  const frames = decodeWindow(WINDOW, ORIGIN, 5);

  it('makes one frame per track with relative times', () => {
    assert.deepEqual([...frames.keys()], ['gpu0.util', 't0']);
    const counter = frames.get('gpu0.util') as CounterFrame;
    assert.equal(counter.kind, 'counter');
    assert.deepEqual([...counter.start], [0, 50, 100]);
    assert.equal(counter.t0, 0);
    assert.equal(counter.t1, 2000);
    assert.equal(counter.level, 5);
  });

  it('orders events by depth then start, with per-depth offsets', () => {
    const f = frames.get('t0') as SliceFrame;
    assert.equal(f.kind, 'slices');
    assert.deepEqual([...f.events.row], [10, 40, 20, 30]);
    assert.deepEqual([...f.events.start], [0, 1200, 100, 300]);
    assert.deepEqual([...f.events.depthLo], [0, 2, 4]);
    assert.deepEqual([...f.events.flags], [4, 8, 0, 0]);
    assert.equal(f.names[f.events.name[0] ?? -1], 'ProfilerStep#5');
  });

  it('keeps blocks with their extent, count, busy time and single-event row', () => {
    const f = frames.get('t0') as SliceFrame;
    assert.deepEqual([...f.blocks.depthLo], [0, 0, 0, 2]);
    assert.deepEqual([...f.blocks.dur], [30, 10]);
    assert.deepEqual([...f.blocks.count_], [6, 1]);
    assert.deepEqual([...f.blocks.row], [-1, 77]);
  });
});

describe('depthRange', () => {
  const f = decodeWindow(WINDOW, ORIGIN, 5).get('t0') as SliceFrame;

  it('finds the items of a depth overlapping a time range', () => {
    assert.deepEqual(depthRange(f.events, 0, 500, 600), [0, 1]);
    assert.deepEqual(depthRange(f.events, 0, 1100, 1150), [1, 1], 'in the gap: none');
    assert.deepEqual(depthRange(f.events, 0, 1100, 1300), [1, 2]);
    assert.deepEqual(depthRange(f.events, 1, 450, 460), [3, 4]);
    assert.deepEqual(depthRange(f.events, 1, 200, 400), [2, 4]);
    assert.deepEqual(depthRange(f.events, 1, 600, 700), [4, 4]);
  });

  it('is empty for depths without items', () => {
    assert.deepEqual(depthRange(f.events, 5, 0, 2000), [0, 0]);
    assert.deepEqual(depthRange(f.events, -1, 0, 2000), [0, 0]);
  });

  it('lowerBound finds the first value at or after the target', () => {
    const v = Float64Array.from([1, 3, 3, 7]);
    assert.equal(lowerBound(v, 0, 4, 3), 1);
    assert.equal(lowerBound(v, 0, 4, 8), 4);
    assert.equal(lowerBound(v, 0, 4, 0), 0);
  });
});
