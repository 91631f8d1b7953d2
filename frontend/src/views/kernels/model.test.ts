import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KernelRow, KernelsResponse } from '../../api/types';
import { toCsv } from '../../components/csv';
import { rooflineRow } from '../../components/roofline_fixture';
import {
  dimsSize,
  dimsText,
  eligibleWithoutTensorCores,
  kernelCsv,
  kernelPie,
  searchTexts,
  kernelLabels,
  shortKernelName,
  sourceText,
  frameLabel,
  fusedText,
  TC_NOT_USING,
  TC_UNKNOWN,
  TC_USING,
  matrixCoreShort,
  recordedCuptiFields,
  tensorCorePie,
} from './model';

function row(name: string, over: Partial<KernelRow> = {}): KernelRow {
  return {
    ...rooflineRow(name),
    device: 0,
    stream: 7,
    calls: 1,
    total_us: 10,
    mean_us: 10,
    min_us: 10,
    max_us: 10,
    blocks_per_sm: null,
    occupancy_pct: null,
    registers_per_thread: 32,
    shared_memory: 0,
    grid: [1, 1, 1],
    block: [128, 1, 1],
    tensor_cores_used: false,
    op_tensor_core_eligible: false,
    work: 'other',
    launch_delay_mean_us: null,
    launch_delay_p90_us: null,
    priority: null,
    occupancy_limited_by: null,
    queue_mean_us: null,
    graph_annotations: null,
    ...over,
  };
}

describe('shortKernelName', () => {
  it('folds templates and parameters', () => {
    assert.equal(
      shortKernelName(
        'void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, float const*, kernel_grad_params)',
      ),
      'cudnn::detail::dgrad_engine<…>',
    );
    assert.equal(
      shortKernelName(
        'void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::detail::Array<char*, 2>)',
      ),
      'at::native::vectorized_elementwise_kernel<…>',
    );
    assert.equal(shortKernelName('volta_sgemm_128x64_nn'), 'volta_sgemm_128x64_nn');
    assert.equal(shortKernelName('Memset (Device)'), 'Memset');
    assert.equal(shortKernelName('broken<template'), 'broken<template');
  });
});

describe('kernelLabels', () => {
  it('keeps folded names, and tells apart two kernels that fold to one name', () => {
    const a = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)';
    const b = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)';
    const labels = kernelLabels([a, b, a, 'volta_sgemm_128x64_nn']);
    assert.equal(labels.get(a), 'cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32…>');
    assert.equal(labels.get(b), 'cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6…>');
    assert.equal(labels.get('volta_sgemm_128x64_nn'), 'volta_sgemm_128x64_nn');
    const one = 'void k<float, 1>(int)';
    const two = 'void k<float, 2>(int)';
    const numbered = kernelLabels([one, two]);
    assert.deepEqual([numbered.get(one), numbered.get(two)], ['k<…> #1', 'k<…> #2']);
    const half = 'void k<half, 1>(int)';
    assert.equal(kernelLabels([half, one]).get(half), 'k<half, …>');
  });
});

describe('kernel rows', () => {
  it('formats launch dimensions', () => {
    assert.equal(dimsText([18, 25, 32]), '[18, 25, 32]');
    assert.equal(dimsText(null), '—');
    assert.equal(dimsSize([8, 8, 1]), 64);
    assert.equal(dimsSize(null), null);
    assert.deepEqual(searchTexts(row('k', { op_name: 'aten::mm' })), ['k', 'aten::mm']);
    assert.deepEqual(searchTexts(row('k')), ['k', '']);
  });

  it('builds the tensor-core and top-kernel pies', () => {
    const resp = {
      tensor_core_time_us: 25,
      non_tensor_core_time_us: 75,
      tensor_core_unknown_time_us: 0,
      matrix_core_name: 'Tensor Cores',
    } as KernelsResponse;
    assert.deepEqual(
      tensorCorePie(resp).map((s) => [s.name, s.value, s.percent]),
      [
        [TC_USING, 25, 25],
        [TC_NOT_USING, 75, 75],
      ],
    );
    assert.deepEqual(
      tensorCorePie({ ...resp, non_tensor_core_time_us: 0, tensor_core_time_us: 0 }),
      [],
    );
    // AMD names its matrix units; unknown time is its own slice, never "not using".
    const amd = {
      ...resp,
      tensor_core_unknown_time_us: 100,
      matrix_core_name: 'Matrix cores (MFMA)',
    };
    assert.deepEqual(
      tensorCorePie(amd).map((s) => [s.name, s.percent]),
      [
        ['Using Matrix cores (MFMA)', 12.5],
        ['Not using Matrix cores (MFMA)', 37.5],
        [TC_UNKNOWN, 50],
      ],
    );
    assert.equal(matrixCoreShort('Tensor Cores'), 'Tensor Cores');
    assert.equal(matrixCoreShort('Matrix cores (MFMA)'), 'MFMA');
    assert.equal(matrixCoreShort('Matrix cores'), 'Matrix cores');
    const rows = [
      row('a', { total_us: 5 }),
      row('b', { total_us: 7 }),
      row('a', { device: 1, total_us: 4 }),
    ];
    assert.deepEqual(
      kernelPie(rows).map((s) => [s.name, s.value]),
      [
        ['a', 9],
        ['b', 7],
      ],
    );
  });

  it('sums the time of eligible ops kernels that missed tensor cores', () => {
    assert.equal(
      eligibleWithoutTensorCores([
        row('a', { op_tensor_core_eligible: true, total_us: 5 }),
        row('b', { op_tensor_core_eligible: true, tensor_cores_used: true, total_us: 7 }),
        row('c', { total_us: 11 }),
      ]),
      5,
    );
  });

  it('writes CSV rows with the operator when grouped by op', () => {
    const csv = kernelCsv([row('void k<1, 2>(int)', { op_name: 'aten::mm', grid: null })], 'op');
    const text = toCsv(csv.header, csv.rows);
    const [header, first] = text.split('\r\n');
    assert.ok(header?.startsWith('Name,Operator,Device,Stream,Calls,Total Duration (us)'));
    assert.equal(
      first,
      '"void k<1, 2>(int)",aten::mm,0,7,1,10,10,10,10,,,32,0,,"[128, 1, 1]",false,false',
    );
    assert.equal(kernelCsv([], 'name').header[1], 'Device');
  });
});

describe('sourceText', () => {
  it('gives the model line first, then the wrapper, files by their last part', () => {
    assert.equal(sourceText(row('k')), '');
    const triton = row('triton_poi_fused_gelu_view_2', {
      fused_ops: ['aten::view', 'aten::gelu'],
      source: [
        { filename: '/home/u/model.py', line: 81, name: 'forward', generated: false },
        { filename: '/tmp/ind/an/cabc.py', line: null, name: 'call', generated: true },
      ],
    });
    assert.equal(sourceText(triton), 'model.py:81 > cabc.py');
  });

  it('names the generated wrapper as such, and the fused ops short', () => {
    const wrapper = {
      filename: '/tmp/ind/6t/c6t2yy.py',
      line: 1249,
      name: 'call',
      generated: true,
    };
    assert.equal(frameLabel(wrapper), 'generated wrapper, line 1249');
    assert.equal(frameLabel({ ...wrapper, generated: false }), 'c6t2yy.py:1249');
    assert.equal(fusedText(['aten::view', 'aten::gelu']), 'view + gelu');
    assert.equal(fusedText(undefined), 'fused ops not known');
  });
});

describe('the CUPTI field columns', () => {
  it('shows each only where a row has it', () => {
    assert.deepEqual(recordedCuptiFields([row('a'), row('b')]), []);
    const recent = row('gemm', { occupancy_limited_by: 'REGS|SMEM', priority: -2 });
    assert.deepEqual(recordedCuptiFields([row('a'), recent]), ['occupancy_limited_by', 'priority']);
    assert.deepEqual(recordedCuptiFields([row('a', { queue_mean_us: 22 })]), ['queue_mean_us']);
  });
});
