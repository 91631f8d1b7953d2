import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TrendChange, TrendRun, TrendView } from '../../api/types';
import { changeRows, changeText, diffLinkState, runSeries } from './model';

function run(name: string, step: number | null, peak: number | null): TrendRun {
  return {
    run: name,
    index: 0,
    workers: ['worker0'],
    start_us: 0,
    device_type: 'GPU',
    devices: [],
    step_count: step === null ? 0 : 3,
    step_mean_us: step,
    step_median_us: step,
    phases_us: {},
    op_metric: 'device_self_us',
    top_ops: [],
    top_kernels: [],
    top_collectives: [],
    memory_peak_bytes: peak === null ? {} : { GPU0: peak, CPU: 16 },
    errors: [],
  };
}

function change(
  metric: TrendChange['metric'],
  first: string,
  before: string | null,
  pct: number | null,
): TrendChange {
  return {
    metric,
    name: metric === 'step' ? 'step' : 'GPU0',
    first_run: first,
    change_pct: pct,
    baseline: 100,
    value: 130,
    threshold: 5,
    unit: metric === 'memory_peak' ? 'bytes' : 'us',
    diff_base_run: before,
    diff_target_run: first,
  };
}

const VIEW: TrendView = {
  span: '1',
  rule: {
    mode: 'rolling',
    baseline_run: null,
    window: 5,
    floor_pct: 5,
    spread_k: 3,
    min_step_pct: 0.5,
    min_history: 3,
  },
  runs: [run('a', 100, 1000), run('b', 101, null), run('c', 130, 2000)],
  regressions: [change('memory_peak', 'c', 'b', 100), change('step', 'c', 'b', 30)],
  improvements: [change('step', 'b', 'a', -5)],
};

describe('trends model', () => {
  it('draws the median step and the highest peak per run, marking first runs', () => {
    const s = runSeries(VIEW);
    assert.deepEqual(s.runs, ['a', 'b', 'c']);
    assert.deepEqual(s.stepUs, [100, 101, 130]);
    assert.deepEqual(s.peakBytes, [1000, null, 2000]);
    assert.deepEqual(s.stepMarks, [1, 2]);
    assert.deepEqual(s.peakMarks, [2]);
  });

  it('lists regressions first, the biggest change first within a run', () => {
    const rows = changeRows(VIEW);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.metric]),
      [
        ['regression', 'memory_peak'],
        ['regression', 'step'],
        ['improvement', 'step'],
      ],
    );
  });

  it('links a change to the Diff of its run against the one before', () => {
    const first = changeRows(VIEW)[0];
    assert.ok(first);
    assert.deepEqual(diffLinkState(first, VIEW), {
      view: 'diff',
      run: 'b',
      worker: 'worker0',
      span: '1',
      target_run: 'c',
      target_worker: 'worker0',
      target_span: '1',
    });
    assert.equal(diffLinkState({ ...first, diff_base_run: null }, VIEW), null);
  });

  it('says a change in words', () => {
    assert.equal(changeText(12.345), '+12.3 %');
    assert.equal(changeText(-4), '−4.0 %');
    assert.equal(changeText(null), 'new');
  });
});
