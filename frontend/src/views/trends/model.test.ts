import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TrendChange, TrendRun, TrendView } from '../../api/types';
import { LIGHT as THEME } from '../../components/theme';

import { runChartOption } from './chart';
import { changeName, changeRows, changeText, diffLinkState, metricLabel, runSeries } from './model';

function run(name: string, step: number | null, peak: number | null, workload = 0): TrendRun {
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
    workload,
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
    workload: 0,
    confirmed: true,
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
    envelope_k: 1.5,
    min_step_pct: 0.5,
    min_memory_bytes: 1048576,
    min_history: 3,
  },
  runs: [run('a', 100, 1000), run('b', 101, null), run('c', 130, 2000), run('x', 900, null, 1)],
  workloads: [
    { index: 0, label: '1 × H100: aten::mm', runs: ['a', 'b', 'c'], compared: true },
    { index: 1, label: 'CPU: aten::conv2d', runs: ['x'], compared: false },
  ],
  notes: ['run x is the only run of its workload (CPU: aten::conv2d): not compared'],
  regressions: [change('memory_peak', 'c', 'b', 100), change('step', 'c', 'b', 30)],
  improvements: [change('step', 'b', 'a', -5)],
};

describe('trends chart', () => {
  it('draws one line per workload, never joining runs of different workloads', () => {
    const s = runSeries(VIEW);
    const option = runChartOption({
      title: 'Step',
      runs: s.runs,
      values: s.stepUs,
      marks: s.stepMarks,
      workloadOf: s.workloadOf,
      workloads: s.workloads,
      format: String,
    })(THEME) as { series: { data: (number | null)[]; name: string }[] };
    assert.deepEqual(
      option.series.map((x) => [x.name, x.data]),
      [
        ['1 × H100: aten::mm', [100, 101, 130, null]],
        ['CPU: aten::conv2d', [null, null, null, 900]],
      ],
    );
  });
});

describe('trends model', () => {
  it('draws the median step and the highest peak per run, marking first runs', () => {
    const s = runSeries(VIEW);
    assert.deepEqual(s.runs, ['a', 'b', 'c', 'x']);
    assert.deepEqual(s.stepUs, [100, 101, 130, 900]);
    assert.deepEqual(s.peakBytes, [1000, null, 2000, null]);
    assert.deepEqual(s.stepMarks, [1, 2]);
    assert.deepEqual(s.peakMarks, [2]);
    assert.deepEqual(s.workloadOf, [0, 0, 0, 1]);
    assert.deepEqual(s.workloads, ['1 × H100: aten::mm', 'CPU: aten::conv2d']);
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

describe('change labels', () => {
  it('says metrics and phases in words, other names as they are', () => {
    assert.equal(metricLabel('memory_peak'), 'Memory peak');
    assert.equal(metricLabel('op'), 'Operator');
    assert.equal(changeName({ metric: 'phase', name: 'cpu_exec' }), 'CPU Exec');
    assert.equal(changeName({ metric: 'phase', name: 'dataloader' }), 'DataLoader');
    assert.equal(changeName({ metric: 'kernel', name: 'cpu_exec' }), 'cpu_exec');
  });
});
