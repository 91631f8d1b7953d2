import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { filterRows, matchesTerms, queryTerms } from './filter';

describe('filter', () => {
  it('splits a query into lower-case terms', () => {
    assert.deepEqual(queryTerms('  Conv   BACKWARD '), ['conv', 'backward']);
    assert.deepEqual(queryTerms(''), []);
  });

  it('needs every term in one of the texts', () => {
    assert.equal(matchesTerms(['aten::convolution_backward'], ['conv', 'backward']), true);
    assert.equal(matchesTerms(['aten::convolution_backward'], ['conv', 'relu']), false);
    assert.equal(matchesTerms(['void gemm_kernel', 'aten::mm'], ['gemm', 'aten::mm']), true);
    assert.equal(matchesTerms(['x'], []), true);
  });

  it('keeps the order and returns a copy for an empty query', () => {
    const rows = [{ n: 'aten::add' }, { n: 'aten::addmm' }, { n: 'aten::mul' }];
    assert.deepEqual(
      filterRows(rows, 'ADD', (r) => [r.n]).map((r) => r.n),
      ['aten::add', 'aten::addmm'],
    );
    const all = filterRows(rows, ' ', (r) => [r.n]);
    assert.deepEqual(all, rows);
    assert.notEqual(all, rows);
  });
});
