import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compareValues, fitColumns, sortRows, visibleRange } from './table_model';

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

describe('fitColumns', () => {
  const columns = [
    { key: 'name', minWidth: 300 },
    { key: 'calls', minWidth: 80 },
    { key: 'min', minWidth: 80 },
    { key: 'grid', minWidth: 100 },
    { key: 'tc', minWidth: 90 },
  ];
  const fit = (available: number, choice = new Map<string, boolean>(), hidden = ['tc']) => [
    ...fitColumns(
      columns,
      { hidden: new Set(hidden), optional: ['min', 'grid'], choice },
      available,
    ),
  ];

  it('hides optional columns in order until the table fits', () => {
    assert.deepEqual(fit(1000, new Map(), []), ['name', 'calls', 'min', 'grid', 'tc']);
    assert.deepEqual(fit(600, new Map(), []), ['name', 'calls', 'grid', 'tc']);
    assert.deepEqual(fit(500, new Map(), []), ['name', 'calls', 'tc']);
    assert.deepEqual(fit(100, new Map(), []), ['name', 'calls', 'tc'], 'never a required one');
    assert.deepEqual(fit(0, new Map(), []), ['name', 'calls', 'min', 'grid', 'tc'], 'not laid out');
  });

  it("keeps hidden columns hidden, and the user's choices win", () => {
    assert.deepEqual(fit(1000), ['name', 'calls', 'min', 'grid']);
    assert.deepEqual(fit(1000, new Map([['tc', true]])), ['name', 'calls', 'min', 'grid', 'tc']);
    assert.deepEqual(fit(500, new Map([['min', true]])), ['name', 'calls', 'min']);
    assert.deepEqual(fit(1000, new Map([['calls', false]])), ['name', 'min', 'grid']);
  });
});
