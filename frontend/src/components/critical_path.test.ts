import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { factorLabel, kindShares, stepChangeText } from './critical_path';

describe('kindShares', () => {
  it('orders known kinds first, drops empty ones, and gives shares of the total', () => {
    const shares = kindShares({ idle: 10, cpu: 30, other: 10, kernel: 50, wait: 0 });
    assert.deepEqual(
      shares.map((s) => s.kind),
      ['cpu', 'kernel', 'idle', 'other'],
    );
    assert.deepEqual(
      shares.map((s) => s.pct),
      [30, 50, 10, 10],
    );
  });
  it('is empty for an empty path', () => {
    assert.deepEqual(kindShares({}), []);
  });
});

describe('factorLabel', () => {
  it('says a factor as faster or slower', () => {
    assert.equal(factorLabel(0.5), '2× faster');
    assert.equal(factorLabel(0.25), '4× faster');
    assert.equal(factorLabel(2), '2× slower');
    assert.equal(factorLabel(0.75), '1.33× faster');
    assert.equal(factorLabel(1), 'unchanged');
    assert.equal(factorLabel(0), 'removed');
  });
});

describe('stepChangeText', () => {
  it('gives the recorded and predicted step with the change in percent', () => {
    assert.ok(stepChangeText(40000, 30000).includes('−25'));
    assert.ok(stepChangeText(40000, 50000).includes('+25'));
    assert.ok(stepChangeText(40000, 40000).includes('±0'));
  });
});
