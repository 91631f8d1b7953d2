import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RunInfo } from '../api/types';
import {
  chooseView,
  findSpan,
  loadProgress,
  reconcile,
  sameSelection,
  spanLabel,
  workerLabel,
} from './selection';

const span = (name: string) => ({
  name,
  timestamp: null,
  file: `w.${name}.pt.trace.json`,
  size: 1,
});

const RUNS: RunInfo[] = [
  {
    name: 'a',
    workers: [
      { name: 'w0', rank: 0, spans: [span('1'), span('2')] },
      { name: 'w1', rank: 1, spans: [span('1')] },
    ],
  },
  { name: 'b', workers: [{ name: 'x', rank: null, spans: [span('1'), span('2'), span('3')] }] },
];

describe('reconcile', () => {
  it('keeps a wanted selection that exists', () => {
    assert.deepEqual(reconcile(RUNS, { run: 'b', worker: 'x', span: '3' }), {
      run: 'b',
      worker: 'x',
      span: '3',
    });
  });

  it('falls back level by level', () => {
    assert.deepEqual(reconcile(RUNS, {}), { run: 'a', worker: 'w0', span: '1' });
    assert.deepEqual(reconcile(RUNS, { run: 'gone', worker: 'w1' }), {
      run: 'a',
      worker: 'w1',
      span: '1',
    });
    assert.deepEqual(reconcile(RUNS, { run: 'a', worker: 'w1', span: '2' }), {
      run: 'a',
      worker: 'w1',
      span: '1',
    });
  });

  it('returns null for an empty listing', () => {
    assert.equal(reconcile([], { run: 'a' }), null);
    assert.equal(reconcile([{ name: 'e', workers: [] }], {}), null);
  });

  it('selects a run of memory snapshots only, with no worker', () => {
    const runs = [{ name: 's', workers: [], views: ['memory_snapshot'] }];
    assert.deepEqual(reconcile(runs, { run: 's' }), { run: 's', worker: '', span: '1' });
  });
});

describe('helpers', () => {
  it('finds spans and compares selections', () => {
    assert.equal(findSpan(RUNS, { run: 'a', worker: 'w0', span: '2' })?.name, '2');
    assert.equal(findSpan(RUNS, { run: 'a', worker: 'w9', span: '2' }), undefined);
    assert.equal(sameSelection(null, null), true);
    assert.equal(sameSelection({ run: 'a', worker: 'w', span: '1' }, null), false);
  });

  it('labels workers and spans', () => {
    assert.equal(workerLabel({ name: 'w0', rank: 0, spans: [] }), 'w0 (rank 0)');
    assert.equal(workerLabel({ name: 'w0', rank: null, spans: [] }), 'w0');
    assert.equal(spanLabel(span('3')), '3');
    assert.equal(spanLabel({ ...span('2'), timestamp: 2 }), '2');
    assert.match(spanLabel({ ...span('1'), timestamp: 1623143089861 }), /^1 · \d{4}-\d\d-\d\d /);
  });

  it('chooses a view that is offered and known', () => {
    assert.equal(chooseView(['overview', 'trace'], ['overview'], 'trace'), 'overview');
    assert.equal(chooseView(['overview', 'trace'], ['overview', 'trace'], 'trace'), 'trace');
    assert.equal(chooseView([], ['overview'], 'overview'), undefined);
    // a link to the Modules view of a trace without modules opens it (it says why)
    assert.equal(chooseView(['overview'], ['overview', 'modules'], 'modules'), 'modules');
    assert.equal(chooseView(['overview'], ['overview'], 'modules'), 'overview');
  });

  it('computes load progress', () => {
    assert.deepEqual(loadProgress(50, 200), { percent: 25, analysing: false });
    assert.deepEqual(loadProgress(200, 200), { percent: 100, analysing: true });
    assert.deepEqual(loadProgress(0, 0), { percent: null, analysing: false });
  });
});
