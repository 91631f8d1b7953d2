import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compareValues, sortRows, visibleRange } from './table_model';

describe('visibleRange', () => {
  it('covers the viewport plus overscan', () => {
    assert.deepEqual(visibleRange(0, 320, 32, 10_000, 5), { start: 0, end: 15 });
    assert.deepEqual(visibleRange(3200, 320, 32, 10_000, 5), { start: 95, end: 115 });
  });

  it('clamps at the end and handles empty tables', () => {
    assert.deepEqual(visibleRange(10_000 * 32, 320, 32, 10_000, 5), { start: 9995, end: 10_000 });
    assert.deepEqual(visibleRange(0, 320, 32, 0), { start: 0, end: 0 });
    assert.deepEqual(visibleRange(-50, 100, 20, 3, 0), { start: 0, end: 3 });
  });
});

describe('sortRows', () => {
  const rows = [
    { name: 'step10', t: 3 },
    { name: 'step2', t: null },
    { name: 'step1', t: 3 },
    { name: 'step3', t: 1 },
  ];

  it('sorts numbers both ways with missing values last and ties stable', () => {
    assert.deepEqual(
      sortRows(rows, (r) => r.t, 'asc').map((r) => r.name),
      ['step3', 'step10', 'step1', 'step2'],
    );
    assert.deepEqual(
      sortRows(rows, (r) => r.t, 'desc').map((r) => r.name),
      ['step10', 'step1', 'step3', 'step2'],
    );
  });

  it('sorts strings naturally', () => {
    assert.deepEqual(
      sortRows(rows, (r) => r.name, 'asc').map((r) => r.name),
      ['step1', 'step2', 'step3', 'step10'],
    );
  });

  it('does not modify its input', () => {
    const copy = rows.slice();
    sortRows(rows, (r) => r.t, 'asc');
    assert.deepEqual(rows, copy);
  });

  it('compares missing values as equal', () => {
    assert.equal(compareValues(null, undefined, 'asc'), 0);
    assert.equal(compareValues(Number.NaN, 1, 'desc'), 1);
  });
});
