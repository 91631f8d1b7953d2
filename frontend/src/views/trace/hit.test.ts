import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORIGIN, WINDOW } from './fixture';
import { decodeWindow, type CounterFrame, type SliceFrame } from './frame';
import { counterIndexAt, hitSlice, indexOfRow } from './hit';

const frames = decodeWindow(WINDOW, ORIGIN, 5);
const slices = frames.get('t0') as SliceFrame;
const counter = frames.get('gpu0.util') as CounterFrame;

describe('hitSlice', () => {
  it('finds the event containing a time at a depth', () => {
    assert.equal(slices.events.row[hitSlice(slices.events, 0, 500, 0)], 10);
    assert.equal(slices.events.row[hitSlice(slices.events, 1, 450, 0)], 30);
    assert.equal(hitSlice(slices.events, 1, 1100, 0), -1);
  });

  it('takes the nearest event within the tolerance', () => {
    assert.equal(slices.events.row[hitSlice(slices.events, 1, 510, 20)], 30);
    assert.equal(slices.events.row[hitSlice(slices.events, 1, 270, 25)], 20);
    assert.equal(hitSlice(slices.events, 1, 530, 20), -1);
  });

  it('works on blocks too', () => {
    assert.equal(hitSlice(slices.blocks, 2, 120, 0), 0);
    assert.equal(slices.blocks.row[hitSlice(slices.blocks, 2, 905, 0)], 77);
  });
});

describe('counterIndexAt and indexOfRow', () => {
  it('finds the sample in force', () => {
    assert.equal(counterIndexAt(counter, -1), -1);
    assert.equal(counterIndexAt(counter, 0), 0);
    assert.equal(counterIndexAt(counter, 75), 1);
    assert.equal(counterIndexAt(counter, 100), 2);
    assert.equal(counterIndexAt(counter, 1e9), 2);
  });

  it('finds an event by row', () => {
    assert.equal(indexOfRow(slices.events, 20), 2);
    assert.equal(indexOfRow(slices.events, 999), -1);
  });
});
