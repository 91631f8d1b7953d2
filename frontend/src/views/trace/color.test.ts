import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { colorKey, colorOf, fnv1a, sliceColor } from './color';

describe('slice colours', () => {
  it('hashes with FNV-1a', () => {
    assert.equal(fnv1a(''), 0x811c9dc5);
    assert.equal(fnv1a('a'), 0xe40c292c);
  });

  it('gives numbered names the same colour', () => {
    assert.equal(colorKey('ProfilerStep#5'), colorKey('ProfilerStep#12'));
    assert.deepEqual(sliceColor('ProfilerStep#5', false), sliceColor('ProfilerStep#6', false));
    assert.notDeepEqual(sliceColor('aten::conv2d', false), sliceColor('aten::addmm', false));
  });

  it('is stable, valid hex, darker in the dark theme, with readable text', () => {
    const light = sliceColor('aten::linear', false);
    const dark = sliceColor('aten::linear', true);
    assert.match(light.fill, /^#[0-9a-f]{6}$/);
    assert.ok(dark.luminance < light.luminance);
    assert.equal(light.text, light.luminance > 0.33 ? '#1a1a1a' : '#f5f5f5');
    assert.equal(colorOf('aten::linear', true), colorOf('aten::linear', true));
  });
});
