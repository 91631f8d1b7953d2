import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { buildUrl, errorMessage, isAbort, isStillLoading, untilReady } from './client';

describe('buildUrl', () => {
  const base = 'http://h:6006/data/plugin/kinetoscope/';

  it('resolves the route under the plugin base and sorts parameters', () => {
    assert.equal(
      buildUrl(base, 'status', { worker: 'w0', run: 'r', span: '1' }),
      'http://h:6006/data/plugin/kinetoscope/status?run=r&span=1&worker=w0',
    );
  });

  it('encodes names with spaces, slashes and hashes and drops undefined', () => {
    const url = buildUrl(base, 'spans', { run: 'a b/c#d', worker: undefined });
    assert.equal(url, 'http://h:6006/data/plugin/kinetoscope/spans?run=a+b%2Fc%23d');
    assert.equal(new URL(url).searchParams.get('run'), 'a b/c#d');
  });
});

describe('errorMessage', () => {
  it('reads TensorBoard error bodies', () => {
    assert.equal(errorMessage({ error: { message: 'no such run' } }, 'x'), 'no such run');
    assert.equal(errorMessage({ error: 'plain' }, 'x'), 'plain');
  });

  it('falls back for anything else', () => {
    assert.equal(errorMessage('<html>', 'fallback'), 'fallback');
    assert.equal(errorMessage(null, 'fallback'), 'fallback');
    assert.equal(errorMessage({ error: { message: '' } }, 'fallback'), 'fallback');
  });
});

describe('isStillLoading', () => {
  it('recognises only the 202 marker', () => {
    assert.equal(isStillLoading({ loading: true, status: {} }), true);
    assert.equal(isStillLoading({ steps: [] }), false);
    assert.equal(isStillLoading(null), false);
  });
});

describe('untilReady', () => {
  it('asks again while the route answers 202, reporting each progress body', async () => {
    const answers = [
      { loading: true as const, status: { done: 1 } },
      { loading: true as const, status: { done: 2 } },
      { rows: [7] },
    ];
    const seen: unknown[] = [];
    const data = await untilReady(
      () => Promise.resolve(answers.shift() ?? { rows: [] }),
      new AbortController().signal,
      (progress) => seen.push(progress),
      0,
    );
    assert.deepEqual(data, { rows: [7] });
    assert.deepEqual(seen, [{ done: 1 }, { done: 2 }]);
  });

  it('stops with an AbortError when the signal aborts while waiting', async () => {
    const controller = new AbortController();
    const waiting = untilReady(
      () => Promise.resolve({ loading: true as const, status: null }),
      controller.signal,
      () => controller.abort(),
      10_000,
    );
    await assert.rejects(waiting, (error: unknown) => isAbort(error));
  });
});
