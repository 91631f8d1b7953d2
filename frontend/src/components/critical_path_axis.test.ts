import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { stepTicks } from './critical_path';

describe('the path chart’s time axis', () => {
  it('marks round times within the step', () => {
    assert.deepEqual(stepTicks(1000), [0, 200, 400, 600, 800, 1000]);
    assert.deepEqual(stepTicks(43_900), [0, 10_000, 20_000, 30_000, 40_000]);
    assert.deepEqual(stepTicks(0), [0]);
    for (const step of [7, 130, 2_500, 987_654]) {
      const ticks = stepTicks(step);
      assert.ok(ticks.length >= 3 && ticks.length <= 6, `${step}: ${ticks.length}`);
      assert.ok(ticks.every((t) => t <= step * (1 + 1e-9)));
    }
  });
});
