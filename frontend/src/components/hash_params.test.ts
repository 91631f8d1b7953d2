import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readHashParams, writeHashParams } from './hash_params';

const KEYS = ['memory.device', 'memory.start_us', 'memory.end_us'];

describe('readHashParams', () => {
  it('reads only the asked keys of our plugin', () => {
    const hash =
      '#kinetoscope&p.kinetoscope.run=r&p.kinetoscope.memory.device=GPU0' +
      '&p.kinetoscope.memory.start_us=1.5&p.other.memory.device=x&memory.end_us=3';
    assert.deepEqual(readHashParams(hash, KEYS), {
      'memory.device': 'GPU0',
      'memory.start_us': '1.5',
    });
  });

  it('decodes values and skips empty or malformed items', () => {
    const hash = `#p.kinetoscope.memory.device=${encodeURIComponent('device type 9 #1')}&p.kinetoscope.memory.start_us=&p.kinetoscope.memory.end_us=a=b`;
    assert.deepEqual(readHashParams(hash, KEYS), { 'memory.device': 'device type 9 #1' });
    assert.deepEqual(readHashParams('', KEYS), {});
  });
});

describe('writeHashParams', () => {
  it('updates in place, appends new keys and keeps every other item', () => {
    const hash = '#kinetoscope&p.kinetoscope.memory.device=CPU&p.kinetoscope.view=memory&x=1';
    assert.equal(
      writeHashParams(hash, { 'memory.device': 'GPU0', 'memory.start_us': '10' }),
      '#kinetoscope&p.kinetoscope.memory.device=GPU0&p.kinetoscope.view=memory&x=1&p.kinetoscope.memory.start_us=10',
    );
  });

  it('removes keys set to undefined and leaves the shell keys alone', () => {
    const hash = '#kinetoscope&p.kinetoscope.run=a&p.kinetoscope.memory.start_us=1';
    assert.equal(
      writeHashParams(hash, { 'memory.start_us': undefined, 'memory.end_us': undefined }),
      '#kinetoscope&p.kinetoscope.run=a',
    );
    assert.equal(
      writeHashParams('#p.kinetoscope.memory.device=CPU', { 'memory.device': undefined }),
      '',
    );
  });
});
