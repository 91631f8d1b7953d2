import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LOD, levelOf, planFetch, planWindow, serves, type InFlight } from './lod';

const bounds = { start: 0, end: 1_000_000 };

describe('planWindow', () => {
  it('asks at a power-of-two resolution at or below the screen’s', () => {
    const plan = planWindow({ start: 0, end: 1_000_000 }, 1000, bounds);
    assert.equal(plan.level, 9); // 1000 µs/px → 512 µs/px
    assert.equal(plan.usPerPx, 512);
  });

  it('adds half a span each side, snapped to tiles, clipped to the trace', () => {
    const vp = { start: 400_000, end: 500_000 };
    const plan = planWindow(vp, 1000, bounds);
    const tile = LOD.tilePx * plan.usPerPx;
    assert.ok(plan.t0 <= vp.start - 50_000 && plan.t1 >= vp.end + 50_000);
    assert.equal(plan.t0 % tile, 0);
    assert.equal(plan.t1 % tile, 0);
    assert.equal(plan.width, (plan.t1 - plan.t0) / plan.usPerPx);
    const edge = planWindow({ start: 0, end: 100_000 }, 1000, bounds);
    assert.equal(edge.t0, 0);
  });

  it('gives the same plan for small pans and zooms, another after a 2× zoom', () => {
    const a = planWindow({ start: 400_000, end: 500_000 }, 1000, bounds);
    const b = planWindow({ start: 401_000, end: 501_000 }, 1000, bounds);
    assert.deepEqual(a, b);
    const c = planWindow({ start: 420_000, end: 470_000 }, 1000, bounds);
    assert.equal(c.level, a.level - 1);
  });

  it('stays within the server’s width limit', () => {
    const plan = planWindow({ start: 0, end: 1_000_000 }, 30_000, bounds);
    assert.ok(plan.width <= LOD.maxWidth);
  });

  it('handles sub-µs resolutions', () => {
    assert.equal(levelOf(0.3), -2);
    const plan = planWindow({ start: 10, end: 11 }, 1000, bounds);
    assert.ok(plan.usPerPx <= 0.001 && plan.width > 1000);
  });
});

describe('serves and planFetch', () => {
  const vp = { start: 400_000, end: 500_000 };
  const plan = planWindow(vp, 1000, bounds);

  it('a frame serves while it covers the view at its level or one finer', () => {
    assert.ok(serves(plan, vp, plan.level));
    assert.ok(serves(plan, vp, plan.level + 1));
    assert.ok(!serves(plan, vp, plan.level - 1), 'too coarse after zooming in');
    assert.ok(!serves(plan, vp, plan.level + 2), 'too fine after zooming far out');
    assert.ok(!serves(plan, { start: plan.t1 - 10, end: plan.t1 + 10 }, plan.level));
  });

  it('asks only for the wanted tracks without a serving frame', () => {
    const frames = new Map([
      ['t0', plan],
      ['t1', { ...plan, level: plan.level + 3 }],
    ]);
    const fetch = planFetch(['t0', 't1', 't2'], frames, [], vp, 1000, bounds);
    assert.deepEqual(fetch.ids, ['t1', 't2']);
    assert.deepEqual(fetch.abort, []);
  });

  it('waits for a request under way that will serve, cancels one that will not', () => {
    const serving: InFlight = { plan, ids: new Set(['t2']) };
    const stale: InFlight = { plan: { ...plan, level: plan.level + 4 }, ids: new Set(['t1']) };
    const fetch = planFetch(['t1', 't2'], new Map(), [serving, stale], vp, 1000, bounds);
    assert.deepEqual(fetch.ids, ['t1']);
    assert.deepEqual(fetch.abort, [stale]);
  });
});
