import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { binaryByteTicks } from './chart_option';
import { formatBytesAxis } from './format';

const MiB = 2 ** 20;

describe('binaryByteTicks', () => {
  it('steps in powers of two (the H100 snapshot: 0 to 238.4 MiB in 64 MiB steps)', () => {
    const ticks = binaryByteTicks(0, 238.42 * MiB);
    assert.deepEqual(ticks, { min: 0, max: 256 * MiB, interval: 64 * MiB });
    const labels = [];
    for (let v = ticks.min; v <= ticks.max; v += ticks.interval) labels.push(formatBytesAxis(v));
    assert.deepEqual(labels, ['0 B', '64 MiB', '128 MiB', '192 MiB', '256 MiB']);
  });

  it('widens a narrow range to whole steps (a trend of 96.6 to 125.6 MiB)', () => {
    const ticks = binaryByteTicks(96.61 * MiB, 125.6 * MiB);
    assert.equal(ticks.interval, 8 * MiB);
    assert.deepEqual([ticks.min / MiB, ticks.max / MiB], [96, 128]);
    assert.ok((ticks.max - ticks.min) / ticks.interval <= 5);
  });

  it('copes with a flat or empty range and bytes below a KiB', () => {
    assert.deepEqual(binaryByteTicks(16, 16), { min: 16, max: 17, interval: 1 });
    assert.deepEqual(binaryByteTicks(0, 0), { min: 0, max: 1, interval: 1 });
    const small = binaryByteTicks(0, 20);
    assert.deepEqual(small, { min: 0, max: 20, interval: 4 });
  });
});
