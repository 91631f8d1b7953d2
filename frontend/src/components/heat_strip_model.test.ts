import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { columnAt, intensity, layoutColumns, rgba, rowMax, tickEvery } from './heat_strip_model';

describe('heat strip geometry', () => {
  it('fits columns into the width, within bounds', () => {
    assert.deepEqual(layoutColumns(100, 1000), { cell: 10, width: 1000 });
    assert.deepEqual(layoutColumns(10, 1000), { cell: 28, width: 280 });
    // 1024 ranks in 1000 px: 3 px each, the strip scrolls.
    assert.deepEqual(layoutColumns(1024, 1000), { cell: 3, width: 3072 });
    assert.deepEqual(layoutColumns(0, 1000), { cell: 28, width: 0 });
  });

  it('labels every 1, 2, 5, 10, ... columns', () => {
    assert.equal(tickEvery(40), 1);
    assert.equal(tickEvery(20), 2);
    assert.equal(tickEvery(10), 5);
    assert.equal(tickEvery(3), 20);
    assert.equal(tickEvery(0), 1);
  });

  it('finds the column under the pointer', () => {
    assert.equal(columnAt(0, 10, 5), 0);
    assert.equal(columnAt(49.9, 10, 5), 4);
    assert.equal(columnAt(50, 10, 5), -1);
    assert.equal(columnAt(-1, 10, 5), -1);
  });
});

describe('heat strip colours', () => {
  it('scales opacity to the row maximum', () => {
    assert.equal(rowMax([1, null, 4, Number.NaN]), 4);
    assert.equal(rowMax([]), 0);
    assert.equal(intensity(4, 4), 1);
    assert.equal(intensity(0, 4), 0);
    assert.equal(intensity(null, 4), null);
    assert.ok(Math.abs((intensity(2, 4) ?? 0) - 0.56) < 1e-9);
  });

  it('turns hex colours into rgba', () => {
    assert.equal(rgba('#4e79a7', 0.5), 'rgba(78,121,167,0.5)');
    assert.equal(rgba('red', 0.5), 'red');
  });
});
