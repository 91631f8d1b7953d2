import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { topN } from './topn';

interface R {
  k: string;
  v: number;
}

const rows = (...pairs: [string, number][]): R[] => pairs.map(([k, v]) => ({ k, v }));

describe('topN', () => {
  it('aggregates equal keys, sorts and folds the rest into Other', () => {
    const slices = topN(
      rows(['a', 1], ['b', 5], ['a', 3], ['c', 2], ['d', 1], ['e', 0.5]),
      (r) => r.k,
      (r) => r.v,
      2,
    );
    assert.deepEqual(
      slices.map((s) => [s.name, s.value, s.count, s.other]),
      [
        ['b', 5, 1, false],
        ['a', 4, 1, false],
        ['Other (3)', 3.5, 3, true],
      ],
    );
    const total = slices.reduce((sum, s) => sum + s.percent, 0);
    assert.ok(Math.abs(total - 100) < 1e-9);
    assert.ok(Math.abs((slices[0]?.percent ?? 0) - (5 / 12.5) * 100) < 1e-9);
  });

  it('drops zero, negative and non-finite values', () => {
    const slices = topN(
      rows(['a', 0], ['b', -1], ['c', Number.NaN], ['d', 2]),
      (r) => r.k,
      (r) => r.v,
      5,
    );
    assert.deepEqual(
      slices.map((s) => s.name),
      ['d'],
    );
    assert.deepEqual(
      topN(
        rows(['a', 0]),
        (r) => r.k,
        (r) => r.v,
        3,
      ),
      [],
    );
  });

  it('never folds a single group into Other, and breaks ties by name', () => {
    const slices = topN(
      rows(['b', 1], ['a', 1], ['c', 1]),
      (r) => r.k,
      (r) => r.v,
      2,
    );
    assert.deepEqual(
      slices.map((s) => s.name),
      ['a', 'b', 'c'],
    );
    const folded = topN(
      rows(['b', 1], ['a', 1], ['c', 1], ['d', 1]),
      (r) => r.k,
      (r) => r.v,
      2,
      'Rest',
    );
    assert.deepEqual(
      folded.map((s) => s.name),
      ['a', 'b', 'Rest (2)'],
    );
  });
});
