import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readHashParams, writeHashParams } from '../components/hash_params';
import { readKeys, readState, readTab, sameState, writeKeys, writeState } from './url_state';

describe('readState', () => {
  it('reads our keys and ignores other plugins', () => {
    const hash =
      '#kinetoscope&p.kinetoscope.run=resnet50&p.kinetoscope.worker=worker0' +
      '&p.kinetoscope.span=2&p.kinetoscope.view=overview&p.scalars.run=x&smoothing=0.6';
    assert.deepEqual(readState(hash), {
      run: 'resnet50',
      worker: 'worker0',
      span: '2',
      view: 'overview',
    });
    assert.equal(readTab(hash), 'kinetoscope');
  });

  it('decodes encoded names', () => {
    const hash = `#kinetoscope&p.kinetoscope.run=${encodeURIComponent('a/b c&d=e')}`;
    assert.deepEqual(readState(hash), { run: 'a/b c&d=e' });
  });

  it('handles empty and broken hashes', () => {
    assert.deepEqual(readState(''), {});
    assert.deepEqual(readState('#'), {});
    assert.deepEqual(readState('#kinetoscope&p.kinetoscope.run=%E0%A4%A'), { run: '%E0%A4%A' });
    assert.deepEqual(readState('#p.kinetoscope.run=a=b'), {});
  });
});

describe('writeState', () => {
  it('keeps the tab and other keys, updates ours in place and appends new ones', () => {
    const hash = '#kinetoscope&p.kinetoscope.run=old&smoothing=0.6';
    assert.equal(
      writeState(hash, { run: 'new run', worker: 'w0', span: '1' }),
      '#kinetoscope&p.kinetoscope.run=new%20run&smoothing=0.6&p.kinetoscope.worker=w0&p.kinetoscope.span=1',
    );
  });

  it('removes keys set to undefined', () => {
    assert.equal(
      writeState('#kinetoscope&p.kinetoscope.run=a&p.kinetoscope.view=overview', { run: 'a' }),
      '#kinetoscope&p.kinetoscope.run=a',
    );
    assert.equal(writeState('#p.kinetoscope.run=a', {}), '');
  });

  it('round-trips awkward names', () => {
    const state = { run: 'x&y=z/#?', worker: 'host:1 rank 0', span: '10', view: 'overview' };
    const hash = writeState('#kinetoscope', state);
    assert.deepEqual(readState(hash), state);
    assert.equal(readTab(hash), 'kinetoscope');
  });

  it('writes an unchanged hash back identically', () => {
    const hash = '#kinetoscope&p.kinetoscope.run=r&p.kinetoscope.worker=w&foo=bar';
    assert.equal(writeState(hash, readState(hash)), hash);
  });
});

describe('sameState', () => {
  it('compares every key', () => {
    assert.equal(sameState({ run: 'a' }, { run: 'a' }), true);
    assert.equal(sameState({ run: 'a' }, { run: 'a', span: '1' }), false);
  });
});

describe('readKeys / writeKeys', () => {
  it("reads and writes a view's own keys next to the shell's", () => {
    const hash = '#kinetoscope&p.kinetoscope.run=r&p.kinetoscope.t0=10';
    assert.deepEqual(readKeys(hash, ['t0', 't1']), { t0: '10' });
    assert.equal(
      writeKeys(hash, { t0: undefined, t1: '20.5' }),
      '#kinetoscope&p.kinetoscope.run=r&p.kinetoscope.t1=20.5',
    );
    // writeState leaves keys it does not manage alone.
    assert.equal(
      writeState(hash, { run: 's' }),
      '#kinetoscope&p.kinetoscope.run=s&p.kinetoscope.t0=10',
    );
  });

  it('writes a whole link state (shell keys and view keys) in the order given', () => {
    assert.equal(
      writeKeys('#kinetoscope&p.kinetoscope.view=distributed', {
        run: 'a',
        worker: 'w 1',
        view: 'trace',
        t0: '10.5',
      }),
      '#kinetoscope&p.kinetoscope.view=trace&p.kinetoscope.run=a&p.kinetoscope.worker=w%201&p.kinetoscope.t0=10.5',
    );
  });

  it('round-trips with the shell: neither removes the other one’s keys', () => {
    let hash = writeState('#kinetoscope', { run: 'r', view: 'memory' });
    hash = writeHashParams(hash, { 'memory.device': 'GPU 0&x', 'memory.end_us': '2' });
    hash = writeState(hash, { run: 'r2', view: 'memory' });
    assert.deepEqual(readState(hash), { run: 'r2', view: 'memory' });
    assert.deepEqual(readHashParams(hash, ['memory.device', 'memory.end_us']), {
      'memory.device': 'GPU 0&x',
      'memory.end_us': '2',
    });
  });
});
