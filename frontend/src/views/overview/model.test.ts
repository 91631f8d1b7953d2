import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OVERVIEW_EXAMPLE as OV } from './fixture';
import {
  averageRow,
  deviceCount,
  deviceFields,
  deviceWord,
  droppedLines,
  evidenceParts,
  pieSlices,
  rowShare,
  shownCategories,
  stackedSeries,
  stepRow,
  stepTooltipTitle,
  topCategory,
} from './model';

describe('breakdown rows', () => {
  it('maps steps and the average', () => {
    const step = OV.steps[0];
    assert.ok(step);
    const row = stepRow(step);
    assert.equal(row.name, 'ProfilerStep#5');
    assert.equal(row.total, 187948);
    assert.equal(row.values.kernel, 98598);
    const avg = averageRow(OV);
    assert.equal(avg.kind, 'average');
    assert.equal(avg.total, 177592.2);
    assert.equal(avg.values.dataloader, 59261.8);
  });

  it('computes shares of step time', () => {
    const step = OV.steps[0];
    assert.ok(step);
    const kernel = rowShare(stepRow(step), 'kernel');
    assert.ok(kernel !== null && Math.abs(kernel - 52.4603) < 1e-3);
    assert.equal(rowShare({ ...stepRow(step), total: 0 }, 'kernel'), null);
  });
});

describe('chart data', () => {
  it('stacks one series per category in fixed order', () => {
    const stacked = stackedSeries(OV.steps);
    assert.deepEqual(stacked.labels, ['5']);
    assert.deepEqual(stacked.names, ['ProfilerStep#5']);
    assert.deepEqual(
      stacked.series.map((s) => s.category),
      ['kernel', 'memcpy', 'memset', 'communication', 'runtime', 'dataloader', 'cpu_exec', 'other'],
    );
    assert.deepEqual(stacked.series[0]?.data, [98598]);
  });

  it('labels steps without a number by name', () => {
    const step = OV.steps[0];
    assert.ok(step);
    assert.deepEqual(stackedSeries([{ ...step, number: null }]).labels, ['ProfilerStep#5']);
  });

  it('drops empty slices and sorts the rest', () => {
    const slices = pieSlices(OV.average_breakdown_us);
    assert.equal(slices[0]?.category, 'kernel');
    assert.ok(!slices.some((s) => s.category === 'communication'));
    const sum = slices.reduce((acc, s) => acc + s.percent, 0);
    assert.ok(Math.abs(sum - 100) < 1e-9);
  });

  it('finds the top category as a share of the average step', () => {
    const top = topCategory(OV);
    assert.equal(top?.category, 'kernel');
    assert.ok(top);
    assert.ok(Math.abs(top.percent - (98588.7 / 177592.2) * 100) < 1e-9);
  });
});

describe('text', () => {
  it('renders evidence', () => {
    assert.deepEqual(evidenceParts(OV.recommendations[0]?.evidence), [
      'Share: 33.40 % (threshold 5.00 %)',
      'Time: 355.57 ms',
      'Steps: ProfilerStep#5, ProfilerStep#6',
    ]);
    assert.deepEqual(evidenceParts(null), []);
    const many = Array.from({ length: 9 }, (_, i) => `S${i}`);
    assert.deepEqual(evidenceParts({ steps: many }), ['Steps: S0, S1, S2, S3, S4, S5 and 3 more']);
    // the Distributed view's time is a mean per rank, and says so
    assert.deepEqual(evidenceParts({ time_us: 1.5e6, time_scope: 'mean per rank' }), [
      'Time (mean per rank): 1.50 s',
    ]);
  });

  it('describes dropped steps', () => {
    assert.deepEqual(
      droppedLines([{ name: 'ProfilerStep#9', reason: 'cut off by the end of the trace' }, {}]),
      ['ProfilerStep#9: cut off by the end of the trace', 'step 2: incomplete'],
    );
  });

  it('names the devices by their kind', () => {
    assert.equal(deviceWord({ device_word: 'MTIA' }), 'MTIA');
    assert.equal(deviceWord({ device_word: 'CPU' }), 'GPU');
    assert.equal(deviceCount(1, 'MTIA'), '1 MTIA');
    assert.equal(deviceCount(2, 'GPU'), '2 GPUs');
    const device = OV.devices[0];
    assert.ok(device);
    assert.equal(Object.fromEntries(deviceFields(device, 'MTIA'))['MTIA utilization'], '55.51 %');
  });

  it('fills device cards with dashes for unknowns', () => {
    const device = OV.devices[0];
    assert.ok(device);
    const fields = Object.fromEntries(deviceFields(device));
    assert.equal(fields.Memory, '31.74 GiB');
    assert.equal(fields['GPU utilization'], '55.51 %');
    assert.equal(fields['Kernel time using Tensor Cores'], '0.00 %');
    const unknown = Object.fromEntries(
      deviceFields({ ...device, utilization_pct: null, compute_capability: null }),
    );
    assert.equal(unknown['GPU utilization'], '—');
    assert.equal(unknown['Compute capability'], '—');
    const amd = Object.fromEntries(
      deviceFields({
        ...device,
        vendor: 'amd',
        matrix_core_name: 'Matrix cores (MFMA)',
        tensor_core_pct: 85.75,
        matrix_core_unknown_pct: 0.48,
      }),
    );
    assert.equal(amd['Kernel time using Matrix cores (MFMA)'], '85.75 %');
    assert.equal(amd['Kernel time of unknown kind'], '0.48 %');
    assert.equal(fields['Kernel time of unknown kind'], undefined); // 0 %: no row
  });
});

describe('a CPU-only trace and the step tooltip', () => {
  const step = OV.steps[0];
  assert.ok(step);
  const cpu = {
    ...step,
    breakdown_us: {
      ...step.breakdown_us,
      kernel: 0,
      memcpy: 0,
      memset: 0,
      runtime: 0,
      communication: 1200,
    },
  };

  it('leaves out the GPU categories that are 0 in every step when no GPU ran', () => {
    const shown = shownCategories({ devices: [], steps: [cpu] });
    assert.deepEqual(shown, ['communication', 'dataloader', 'cpu_exec', 'other']);
    // A GPU trace keeps every column, zeros included.
    assert.equal(shownCategories({ devices: OV.devices, steps: [cpu] }).length, 8);
    const stacked = stackedSeries([cpu], shown);
    assert.deepEqual(
      stacked.series.map((s) => s.category),
      shown,
    );
  });

  it('titles a step by its name and step time, not its axis label', () => {
    const stacked = stackedSeries(OV.steps);
    assert.equal(stacked.labels[0], '5');
    assert.equal(stepTooltipTitle(stacked, 0), 'ProfilerStep#5 · 187.95 ms');
  });
});
