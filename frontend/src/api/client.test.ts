import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { buildUrl, errorMessage, isStillLoading } from './client';

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
