import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatSort, parseIndex, parseSort, pick, unlessDefault } from './url_values';

describe('url values', () => {
  it('parses and formats a sort', () => {
    const keys = ['calls', 'host_self_us'];
    assert.deepEqual(parseSort('calls:asc', keys), { key: 'calls', dir: 'asc' });
    assert.deepEqual(parseSort('host_self_us', keys), { key: 'host_self_us', dir: 'desc' });
    assert.equal(parseSort('nope:asc', keys), undefined);
    assert.equal(parseSort('calls:up', keys), undefined);
    assert.equal(parseSort(undefined, keys), undefined);
    assert.equal(formatSort({ key: 'calls', dir: 'desc' }), 'calls:desc');
    assert.equal(formatSort(undefined), undefined);
  });

  it('picks known values and integers', () => {
    assert.equal(pick('shape', ['name', 'shape'] as const, 'name'), 'shape');
    assert.equal(pick('bogus', ['name', 'shape'] as const, 'name'), 'name');
    assert.equal(parseIndex('7'), 7);
    assert.equal(parseIndex('-1'), undefined);
    assert.equal(parseIndex('1.5'), undefined);
    assert.equal(parseIndex(undefined), undefined);
    assert.equal(unlessDefault('name', 'name'), undefined);
    assert.equal(unlessDefault('shape', 'name'), 'shape');
  });
});
