import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { acceleration, isTypingTarget, motionKeyOf, motionStep, wheelZoomFactor } from './keys';

const key = (
  k: string,
  mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {},
) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe('keys', () => {
  it('maps W/A/S/D (any case) and leaves shortcuts with modifiers alone', () => {
    assert.equal(motionKeyOf(key('w')), 'w');
    assert.equal(motionKeyOf(key('D')), 'd');
    assert.equal(motionKeyOf(key('x')), null);
    assert.equal(motionKeyOf(key('s', { ctrlKey: true })), null);
    assert.equal(motionKeyOf(key('a', { metaKey: true })), null);
  });

  it('knows when keys go to typing', () => {
    assert.ok(isTypingTarget({ tagName: 'INPUT', type: 'search' }));
    assert.ok(isTypingTarget({ tagName: 'input' }));
    assert.ok(isTypingTarget({ tagName: 'TEXTAREA' }));
    assert.ok(isTypingTarget({ tagName: 'SELECT' }));
    assert.ok(isTypingTarget({ tagName: 'DIV', isContentEditable: true }));
    assert.ok(!isTypingTarget({ tagName: 'INPUT', type: 'checkbox' }));
    assert.ok(!isTypingTarget({ tagName: 'CANVAS' }));
    assert.ok(!isTypingTarget(null));
  });

  it('zooms in with W, out with S, pans with A/D, faster when held', () => {
    const w = motionStep(new Set(['w']), 100, 0);
    const s = motionStep(new Set(['s']), 100, 0);
    assert.ok(w.zoom < 1 && s.zoom > 1);
    assert.ok(Math.abs(w.zoom * s.zoom - 1) < 1e-12);
    assert.equal(motionStep(new Set(['w', 's']), 100, 0).zoom, 1);
    assert.ok(motionStep(new Set(['d']), 100, 0).pan > 0);
    assert.ok(motionStep(new Set(['a']), 100, 0).pan < 0);
    assert.ok(motionStep(new Set(['d']), 100, 1000).pan > motionStep(new Set(['d']), 100, 0).pan);
    assert.equal(acceleration(0), 1);
    assert.equal(acceleration(10_000), 3);
    // a stalled frame does not jump
    assert.equal(motionStep(new Set(['d']), 5000, 0).pan, motionStep(new Set(['d']), 100, 0).pan);
  });

  it('turns wheel deltas into bounded zoom factors', () => {
    assert.ok(wheelZoomFactor(-100, 0) < 1);
    assert.ok(wheelZoomFactor(100, 0) > 1);
    assert.equal(wheelZoomFactor(3, 1), wheelZoomFactor(48, 0));
    assert.equal(wheelZoomFactor(1e6, 0), Math.E);
  });
});
