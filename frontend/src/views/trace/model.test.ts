import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SearchResponse } from '../../api/types';
import {
  eventParams,
  firstHitFrom,
  formatArg,
  parseFrame,
  relationLabel,
  searchHits,
  shapeLines,
  stepHit,
  windowFromKeys,
  workerParams,
} from './model';

describe('request parameters', () => {
  it('uses worker= for the page’s own worker, workers= for several', () => {
    assert.deepEqual(workerParams('r', '1', ['w0'], 'w0'), { run: 'r', span: '1', worker: 'w0' });
    assert.deepEqual(workerParams('r', '1', ['w0', 'w1'], 'w0'), {
      run: 'r',
      span: '1',
      workers: 'w0,w1',
    });
    assert.deepEqual(workerParams('r', '1', ['w1'], 'w0'), { run: 'r', span: '1', workers: 'w1' });
  });

  it('asks an event of a multi-rank page in epoch time (workers=)', () => {
    assert.deepEqual(eventParams('r', '1', false, null, 'w0'), {
      run: 'r',
      span: '1',
      worker: 'w0',
    });
    assert.deepEqual(eventParams('r', '1', true, 'w1', 'w0'), {
      run: 'r',
      span: '1',
      workers: 'w1',
    });
  });
});

describe('details helpers', () => {
  it('shows stack frames as path:line and function', () => {
    assert.deepEqual(parseFrame('torch/nn/modules/module.py(1743): _call_impl'), {
      location: 'torch/nn/modules/module.py:1743',
      func: '_call_impl',
      raw: 'torch/nn/modules/module.py(1743): _call_impl',
    });
    assert.deepEqual(parseFrame('nn.Module: Linear_25'), {
      location: 'nn.Module: Linear_25',
      func: null,
      raw: 'nn.Module: Linear_25',
    });
  });

  it('labels links', () => {
    assert.equal(relationLabel({ relation: 'gpu_activity', category: 'Kernel' }), 'GPU kernel');
    assert.equal(relationLabel({ relation: 'gpu_activity', category: 'gpu_memcpy' }), 'GPU memcpy');
    assert.equal(relationLabel({ relation: 'launcher', category: 'Runtime' }), 'Launched by');
    assert.equal(relationLabel({ relation: 'backward', category: 'fwdbwd' }), 'Backward op');
    assert.equal(relationLabel({ relation: 'new_kind', category: '' }), 'new kind');
  });

  it('formats args and shapes', () => {
    assert.equal(formatArg('text'), 'text');
    assert.equal(formatArg([1, [2, 3]]), '[1,[2,3]]');
    assert.equal(formatArg({ a: 1 }), '{"a":1}');
    assert.equal(formatArg('x'.repeat(10), 5), 'xxxx…');
    assert.deepEqual(shapeLines([[2, 3], [], 'float']), ['[2, 3]', 'scalar / none', 'float']);
    assert.deepEqual(shapeLines(null), []);
  });
});

describe('search navigation', () => {
  const resp: SearchResponse = {
    query: 'conv',
    names: [{ name: 'aten::conv2d', count: 3 }],
    hits: {
      row: [5, 6, 7],
      ts: [1100, 1200, 1300],
      dur: [10, 10, 10],
      track: ['rank0:t0', 'rank1:t0', 'rank0:t0'],
      depth: [1, 1, 2],
      name: [0, 0, 0],
    },
    total: 3,
    truncated: false,
  };

  it('makes hits relative and finds their worker', () => {
    const hits = searchHits(resp, 1000, true);
    assert.deepEqual(
      hits.map((h) => [h.ts, h.worker, h.name]),
      [
        [100, 'rank0', 'aten::conv2d'],
        [200, 'rank1', 'aten::conv2d'],
        [300, 'rank0', 'aten::conv2d'],
      ],
    );
    assert.equal(searchHits(resp, 1000, false)[0]?.worker, null);
  });

  it('starts at the first hit in view and wraps', () => {
    const hits = searchHits(resp, 1000, false);
    assert.equal(firstHitFrom(hits, 150), 1);
    assert.equal(firstHitFrom(hits, 1e9), 0);
    assert.equal(stepHit(2, 3, 1), 0);
    assert.equal(stepHit(0, 3, -1), 2);
    assert.equal(stepHit(-1, 3, 1), 0);
    assert.equal(stepHit(-1, 3, -1), 2);
    assert.equal(stepHit(0, 0, 1), -1);
  });
});

describe('windowFromKeys', () => {
  it('accepts a window overlapping the trace, relative to its start', () => {
    assert.deepEqual(windowFromKeys({ t0: '1100', t1: '1200' }, 1000, 5000), {
      start: 100,
      end: 200,
    });
  });

  it('ignores malformed or foreign windows', () => {
    assert.equal(windowFromKeys({ t0: 'x', t1: '1200' }, 1000, 5000), null);
    assert.equal(windowFromKeys({ t0: '1200', t1: '1100' }, 1000, 5000), null);
    assert.equal(windowFromKeys({ t0: '10', t1: '20' }, 1000, 5000), null);
    assert.equal(windowFromKeys({}, 1000, 5000), null);
  });
});
