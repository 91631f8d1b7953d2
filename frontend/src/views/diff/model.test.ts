import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Compared, DiffView, OperatorDiff } from '../../api/types';
import {
  breakdownRows,
  changeBars,
  formatDelta,
  formatDeltaPct,
  formatValue,
  deviceWordOf,
  gpuRows,
  memoryRows,
  servingRows,
  statusCounts,
  stepRows,
  tone,
  toneClass,
  withStatus,
} from './model';

function cmp(base: number | null, target: number | null): Compared {
  const delta = base === null || target === null ? null : target - base;
  const pct = delta === null || !base ? null : (delta / base) * 100;
  return { base, target, delta, delta_pct: pct };
}

const UNKNOWN: Compared = { base: null, target: null, delta: null, delta_pct: null };

function op(name: string, status: OperatorDiff['status']): OperatorDiff {
  return {
    name,
    status,
    calls: cmp(1, 1),
    host_self_us: cmp(1, 2),
    host_total_us: cmp(1, 2),
    device_self_us: cmp(1, 2),
    device_total_us: cmp(1, 2),
  };
}

function view(over: Partial<DiffView> = {}): DiffView {
  const side = {
    device_type: 'GPU',
    devices: ['H100'],
    steps_source: 'profiler_steps',
    has_kernels: true,
    has_memory: true,
    has_communication: false,
  };
  return {
    group_by: 'name',
    base: side,
    target: side,
    devices_differ: false,
    notes: [],
    steps: { step_count: cmp(6, 6), average_step_us: cmp(2000, 1500) },
    breakdown: [],
    gpu: [],
    memory: [],
    communication: [],
    operator_metric: 'device_self_us',
    operators: [],
    kernels: [],
    top_changes: [],
    vendors: ['nvidia', 'nvidia'],
    kernels_by_work: [],
    modules: [],
    serving: [],
    ...over,
  };
}

describe('formatting a compared number', () => {
  it('signs the delta in the unit, and a percentage change in points', () => {
    assert.equal(formatDelta(cmp(2000, 1500), 'us'), '-500 µs');
    assert.equal(formatDelta(cmp(1000, 3500), 'us'), '+2.50 ms');
    assert.equal(formatDelta(cmp(50, 62.5), 'pct'), '+12.50 pp');
    assert.equal(formatDelta(cmp(1024, 0), 'bytes'), '-1.00 KiB');
    assert.equal(formatDelta(cmp(3, 3), 'count'), '0');
  });

  it('signs the relative change; unknown when the base is 0', () => {
    assert.equal(formatDeltaPct(cmp(2000, 1500)), '-25.0 %');
    assert.equal(formatDeltaPct(cmp(100, 150)), '+50.0 %');
    assert.equal(formatDeltaPct(cmp(0, 12)), '—');
  });

  it('shows unknown as a dash, never as 0', () => {
    assert.equal(formatValue(null, 'us'), '—');
    assert.equal(formatDelta(UNKNOWN, 'us'), '—');
    assert.equal(formatDelta(cmp(null, 5), 'count'), '—');
    assert.equal(formatValue(0, 'us'), '0 µs');
    assert.equal(formatValue(12.345, 'gbps'), '12.35 GB/s');
    assert.equal(formatValue(2.5, 'count'), '2.5');
  });
});

describe('better or worse', () => {
  it('less time is better, more utilization is better', () => {
    assert.equal(tone(cmp(2000, 1500), 'lower'), 'better');
    assert.equal(tone(cmp(1500, 2000), 'lower'), 'worse');
    assert.equal(tone(cmp(50, 70), 'higher'), 'better');
    assert.equal(tone(cmp(70, 50), 'higher'), 'worse');
  });

  it('no change, an unknown side and a neutral number are neither', () => {
    assert.equal(tone(cmp(3, 3), 'lower'), 'same');
    assert.equal(tone(cmp(null, 3), 'lower'), 'unknown');
    assert.equal(tone(cmp(3, 6), 'neutral'), 'neutral');
    assert.equal(toneClass('better'), 'ks-diff-better');
  });
});

describe('rows of the side-by-side tables', () => {
  it('steps: count, then the average step time with the route numbers', () => {
    const rows = stepRows(view());
    assert.deepEqual(
      rows.map((r) => [r.key, r.value.delta]),
      [
        ['step_count', 0],
        ['average_step_us', -500],
      ],
    );
    assert.equal(rows[1]?.metric.better, 'lower');
  });

  it('breakdown: time and share per part, labelled as on the Overview', () => {
    const rows = breakdownRows([
      { part: 'dataloader', average_us: cmp(59, 1), share_pct: cmp(33, 1) },
    ]);
    assert.deepEqual(
      rows.map((r) => [r.key, r.label, r.metric.unit]),
      [
        ['breakdown.dataloader', 'DataLoader time per step', 'us'],
        ['breakdown.dataloader.share', 'DataLoader share of the step', 'pct'],
      ],
    );
  });

  it('GPU: one group per device, both names when they differ', () => {
    const rows = gpuRows([
      {
        id: 0,
        short_label: 'GPU 0',
        base_name: 'V100',
        target_name: 'H100',
        utilization_pct: cmp(50, 70),
        sm_efficiency_pct: cmp(40, 60),
        achieved_occupancy_pct: UNKNOWN,
        tensor_core_pct: cmp(0, 10),
        kernel_time_us: cmp(100, 80),
      },
    ]);
    assert.equal(rows.length, 5);
    const first = rows[0];
    assert.ok(first);
    assert.equal(first.group, 'GPU 0 (V100 → H100)');
    assert.equal(first.label, 'GPU utilization');
    assert.equal(tone(first.value, first.metric.better), 'better');
  });

  it('names the devices by their kind (MTIA), "device" when the kinds differ', () => {
    const gpu = (label: string) => ({
      id: 0,
      short_label: label,
      base_name: null,
      target_name: null,
      utilization_pct: cmp(50, 70),
      sm_efficiency_pct: UNKNOWN,
      achieved_occupancy_pct: UNKNOWN,
      tensor_core_pct: UNKNOWN,
      kernel_time_us: cmp(100, 80),
    });
    assert.equal(deviceWordOf([gpu('MTIA 17')]), 'MTIA');
    assert.equal(gpuRows([gpu('MTIA 17')])[0]?.label, 'MTIA utilization');
    assert.equal(deviceWordOf([gpu('GPU 0'), { ...gpu('XPU 0'), id: 1 }]), 'device');
  });

  it('memory: peak allocated and reserved per device, unknown kept', () => {
    const rows = memoryRows([
      { device: 'GPU0', peak_allocated_bytes: cmp(10, 20), peak_reserved_bytes: UNKNOWN },
    ]);
    assert.deepEqual(
      rows.map((r) => [r.key, r.value.delta]),
      [
        ['GPU0.peak_allocated', 10],
        ['GPU0.peak_reserved', null],
      ],
    );
  });
});

describe('operator and kernel rows', () => {
  const ops = [op('a', 'changed'), op('b', 'added'), op('c', 'same'), op('d', 'removed')];

  it('filters by status; "all" keeps the unchanged rows', () => {
    assert.deepEqual(
      withStatus(ops, 'changed').map((r) => r.name),
      ['a'],
    );
    assert.equal(withStatus(ops, 'all').length, 4);
    assert.deepEqual(statusCounts(ops), { all: 4, changed: 1, added: 1, removed: 1 });
  });

  it('top changes become bars: a drop in time is better', () => {
    const bars = changeBars(
      view({
        top_changes: [
          {
            kind: 'operator',
            name: 'aten::mm',
            input_shape: [[2, 3]],
            metric: 'device_self_us',
            base: 10,
            target: 4,
            delta: -6,
          },
        ],
      }),
    );
    assert.deepEqual(bars[0], {
      label: 'aten::mm [[2,3]]',
      detail: 'operator · device_self_us',
      delta: -6,
      base: 10,
      target: 4,
      tone: 'better',
    });
  });
});

describe('serving phases', () => {
  it('per phase: iterations, times, tokens/s (more is better), the estimate, classes', () => {
    const rows = servingRows([
      {
        phase: 'decode',
        iterations: cmp(10, 10),
        median_us: cmp(100, 80),
        p90_us: cmp(120, 90),
        gpu_busy_median_us: cmp(90, 70),
        tokens_per_s: cmp(1000, 1250),
        per_token_us: cmp(100, 80),
        classes_per_iteration_us: { gemm: cmp(60, 40), conv: cmp(0, 0) },
      },
    ]);
    assert.deepEqual(
      rows.map((r) => [r.key, r.label, r.group]),
      [
        ['serving.decode.iterations', 'Iterations', 'Decode'],
        ['serving.decode.median_us', 'Median iteration', 'Decode'],
        ['serving.decode.p90_us', 'p90 iteration', 'Decode'],
        ['serving.decode.gpu_busy_median_us', 'GPU busy (median)', 'Decode'],
        ['serving.decode.tokens_per_s', 'Tokens/s', 'Decode'],
        ['serving.decode.per_token_us', 'Per output token (estimate)', 'Decode'],
        ['serving.decode.gemm', 'gemm per iteration', 'Decode'],
      ],
    );
    const rate = rows.find((r) => r.key.endsWith('tokens_per_s'));
    assert.ok(rate && tone(rate.value, rate.metric.better) === 'better');
  });
});
