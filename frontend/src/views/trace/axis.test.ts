import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { axisTicks, formatSpan, formatTimeAt, niceStep, unitFor } from './axis';

describe('niceStep', () => {
  it('picks 1, 2 or 5 times a power of ten', () => {
    assert.equal(niceStep(0.7), 1);
    assert.equal(niceStep(1.2), 2);
    assert.equal(niceStep(3), 5);
    assert.equal(niceStep(7), 10);
    assert.equal(niceStep(120), 200);
    assert.equal(niceStep(0.0031), 0.005);
    assert.equal(niceStep(0), 1);
  });
});

describe('axisTicks', () => {
  it('labels the whole of a short trace in one unit', () => {
    const ticks = axisTicks({ start: 0, end: 1_000_000 }, 1000, 90);
    assert.equal(ticks.step, 100_000);
    assert.equal(ticks.base, null);
    assert.deepEqual(
      ticks.ticks.slice(0, 3).map((t) => t.label),
      ['0.0 s', '0.1 s', '0.2 s'],
    );
    assert.equal(ticks.ticks.length, 11);
  });

  it('uses µs and ms for short spans', () => {
    const us = axisTicks({ start: 0, end: 50 }, 1000, 100);
    assert.equal(us.step, 5);
    assert.equal(us.ticks[1]?.label, '5 µs');
    const ms = axisTicks({ start: 0, end: 20_000 }, 1000, 100);
    assert.equal(ms.ticks[1]?.label, '2 ms');
    const half = axisTicks({ start: 0, end: 5_000 }, 1000, 100);
    assert.equal(half.ticks[1]?.label, '0.5 ms');
  });

  it('counts from a round base deep inside a long trace', () => {
    const ticks = axisTicks({ start: 12_345_600, end: 12_345_700 }, 1000, 100);
    assert.equal(ticks.step, 10);
    assert.notEqual(ticks.base, null);
    assert.ok(ticks.baseLabel?.endsWith('s +'));
    for (const t of ticks.ticks) {
      assert.ok(t.label.startsWith('+'), t.label);
      assert.ok(t.label.length <= 10, t.label);
    }
    // the base plus a tick's offset is the tick's time
    const first = ticks.ticks[0];
    assert.ok(first && ticks.base !== null);
    assert.equal(first.t, 12_345_600);
  });

  it('keeps ticks at least the minimum gap apart', () => {
    const vp = { start: 3.3, end: 1234.5 };
    const ticks = axisTicks(vp, 800, 80);
    const px = (ticks.step / (vp.end - vp.start)) * 800;
    assert.ok(px >= 80);
    assert.ok((ticks.ticks[0]?.t ?? 0) >= vp.start);
  });
});

describe('units and durations', () => {
  it('chooses a unit the step is at least a tenth of', () => {
    assert.equal(unitFor(500_000).name, 's');
    assert.equal(unitFor(200).name, 'ms');
    assert.equal(unitFor(50).name, 'µs');
    assert.equal(unitFor(0.05).name, 'ns');
  });

  it('formats durations readably', () => {
    assert.equal(formatSpan(0), '0 µs');
    assert.equal(formatSpan(0.25), '250 ns');
    assert.equal(formatSpan(12.5), '12.5 µs');
    assert.equal(formatSpan(3200), '3.2 ms');
    assert.equal(formatSpan(1_250_000), '1.25 s');
  });

  it('formats a time with the digits a resolution needs', () => {
    assert.equal(formatTimeAt(1_500_000, 1000), '1.500 s');
    assert.equal(formatTimeAt(2500, 1), '2.500 ms');
    assert.equal(formatTimeAt(12, 0.001), '12.000 µs');
  });
});
