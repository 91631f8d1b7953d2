import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  readState,
  readTarget,
  stateUpdate,
  targetFromOption,
  targetOption,
  targetUpdate,
} from './state';

const SORT_KEYS = { operators: ['name', 'calls.delta'], kernels: ['total_us.delta'] };

describe('the Diff page in the URL', () => {
  it('a target needs a run and a worker; the span is optional', () => {
    assert.equal(readTarget({ target_run: 'r' }), null);
    assert.deepEqual(readTarget({ target_run: 'r', target_worker: 'w' }), {
      run: 'r',
      worker: 'w',
    });
    assert.deepEqual(readTarget({ target_run: 'r', target_worker: 'w', target_span: '2' }), {
      run: 'r',
      worker: 'w',
      span: '2',
    });
    assert.deepEqual(targetUpdate(null), {
      target_run: undefined,
      target_worker: undefined,
      target_span: undefined,
    });
  });

  it('a target as a list option and back; the empty option is no target', () => {
    const target = { run: 'r,1', worker: 'w"x', span: '1' };
    assert.deepEqual(targetFromOption(targetOption(target)), target);
    assert.deepEqual(targetFromOption(targetOption({ run: 'r', worker: 'w' })), {
      run: 'r',
      worker: 'w',
    });
    assert.equal(targetFromOption(''), null);
    assert.equal(targetFromOption('["r"]'), null);
  });

  it('round-trips the tables state; defaults stay out of the URL', () => {
    const state = readState(
      {
        'diff.group_by': 'shape',
        'diff.operators.status': 'added',
        'diff.operators.sort': 'calls.delta:asc',
        'diff.kernels.search': 'gemm',
        'diff.kernels.status': 'bogus',
      },
      SORT_KEYS,
    );
    assert.equal(state.groupBy, 'shape');
    assert.deepEqual(state.operators, {
      status: 'added',
      search: '',
      sort: { key: 'calls.delta', dir: 'asc' },
    });
    assert.equal(state.kernels.status, 'all');
    assert.deepEqual(stateUpdate(state), {
      'diff.group_by': 'shape',
      'diff.operators.status': 'added',
      'diff.operators.search': undefined,
      'diff.operators.sort': 'calls.delta:asc',
      'diff.kernels.status': undefined,
      'diff.kernels.search': 'gemm',
      'diff.kernels.sort': undefined,
    });
  });
});
