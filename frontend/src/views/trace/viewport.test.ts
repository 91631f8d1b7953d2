import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  clampViewport,
  fitRange,
  MIN_SPAN_US,
  panBy,
  panByPx,
  revealRange,
  sameViewport,
  timeToX,
  xToTime,
  zoomAround,
} from './viewport';

const bounds = { start: 0, end: 1000 };

describe('viewport', () => {
  it('maps time to x and back', () => {
    const vp = { start: 100, end: 300 };
    assert.equal(timeToX(200, vp, 400), 200);
    assert.equal(xToTime(200, vp, 400), 200);
    assert.equal(xToTime(0, vp, 400), 100);
    assert.equal(timeToX(300, vp, 400), 400);
  });

  it('zooms around the anchor, keeping the time under it in place', () => {
    const vp = { start: 100, end: 300 };
    const zoomed = zoomAround(vp, 0.5, 0.25, bounds);
    assert.equal(zoomed.end - zoomed.start, 100);
    assert.equal(xToTime(0.25 * 400, zoomed, 400), xToTime(0.25 * 400, vp, 400));
  });

  it('never zooms below the minimum span or beyond the bounds', () => {
    const tiny = zoomAround({ start: 10, end: 11 }, 0.001, 0.5, bounds);
    assert.ok(Math.abs(tiny.end - tiny.start - MIN_SPAN_US) < 1e-9);
    assert.deepEqual(zoomAround({ start: 100, end: 900 }, 10, 0.5, bounds), bounds);
  });

  it('shifts a viewport back inside the bounds without shrinking it', () => {
    assert.deepEqual(clampViewport({ start: -50, end: 50 }, bounds), { start: 0, end: 100 });
    assert.deepEqual(clampViewport({ start: 950, end: 1050 }, bounds), { start: 900, end: 1000 });
    assert.deepEqual(clampViewport({ start: -5, end: 5000 }, bounds), bounds);
    assert.deepEqual(clampViewport({ start: NaN, end: NaN }, bounds), bounds);
  });

  it('pans by fractions and pixels, stopping at the edges', () => {
    assert.deepEqual(panBy({ start: 100, end: 200 }, 0.5, bounds), { start: 150, end: 250 });
    assert.deepEqual(panBy({ start: 100, end: 200 }, -5, bounds), { start: 0, end: 100 });
    // dragging right by 100 px of 400 shows earlier times
    assert.deepEqual(panByPx({ start: 100, end: 200 }, 100, 400, bounds), { start: 75, end: 175 });
  });

  it('fits a range with padding', () => {
    assert.deepEqual(fitRange(100, 200, bounds, 0.1), { start: 90, end: 210 });
  });

  it('reveals an event: unchanged inside, re-centred when it fits, zoomed out otherwise', () => {
    const vp = { start: 100, end: 200 };
    assert.equal(revealRange(vp, 140, 10, bounds), vp);
    assert.deepEqual(revealRange(vp, 495, 10, bounds), { start: 450, end: 550 });
    const wide = revealRange(vp, 300, 400, bounds);
    assert.ok(wide.start <= 300 && wide.end >= 700);
  });

  it('compares viewports within a fraction of a pixel', () => {
    assert.ok(sameViewport({ start: 0, end: 100 }, { start: 0.0001, end: 100 }, 100));
    assert.ok(!sameViewport({ start: 0, end: 100 }, { start: 1, end: 101 }, 100));
  });
});
