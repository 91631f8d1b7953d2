import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OperatorRow, OperatorsResponse } from '../../api/types';
import { toCsv } from '../../components/csv';
import { rooflineRow } from '../../components/roofline_fixture';
import {
  callStackParams,
  findRow,
  hasDeviceTime,
  isReplayed,
  operatorCsv,
  operatorPie,
  rowId,
  searchTexts,
  shapeParam,
  shapeText,
  tensorCoreShare,
} from './model';

function row(name: string, over: Partial<OperatorRow> = {}): OperatorRow {
  return {
    ...rooflineRow(name),
    calls: 2,
    host_self_us: 10,
    host_total_us: 20,
    device_self_us: 0,
    device_total_us: 0,
    host_self_avg_us: 5,
    host_total_avg_us: 10,
    device_self_avg_us: 0,
    device_total_avg_us: 0,
    tensor_core_eligible: false,
    tensor_core_self_us: 0,
    tensor_core_total_us: 0,
    has_call_stack: true,
    replayed_us: 0,
    ...over,
  };
}

const SHAPE = [[32, 256, 56, 56], [256], [], [0]];

describe('shapes', () => {
  it('formats and encodes input shapes', () => {
    assert.equal(shapeText(SHAPE), '[[32, 256, 56, 56], [256], [], [0]]');
    assert.equal(shapeText(null), '—');
    assert.equal(shapeText(undefined), '—');
    assert.equal(shapeParam(SHAPE), '[[32,256,56,56],[256],[],[0]]');
    assert.equal(shapeParam(null), 'null');
  });

  it('identifies rows by name, plus shape when grouped by shape', () => {
    const a = row('aten::add', { input_shape: SHAPE });
    const b = row('aten::add', { input_shape: null });
    assert.equal(rowId(a, 'name'), rowId(b, 'name'));
    assert.notEqual(rowId(a, 'shape'), rowId(b, 'shape'));
    assert.equal(findRow([a, b], 'shape', 'aten::add', 'null'), b);
    assert.equal(findRow([a, b], 'shape', 'aten::add', shapeParam(SHAPE)), a);
    assert.equal(findRow([a, b], 'name', 'aten::add', undefined), a);
    assert.equal(findRow([a, b], 'name', 'aten::mul', undefined), undefined);
  });

  it('asks callstacks for the row (and its shape)', () => {
    const a = row('aten::add', { input_shape: SHAPE });
    assert.deepEqual(callStackParams(a, 'name'), { name: 'aten::add' });
    assert.deepEqual(callStackParams(a, 'shape'), {
      name: 'aten::add',
      input_shape: '[[32,256,56,56],[256],[],[0]]',
    });
    assert.deepEqual(callStackParams(row('x', { input_shape: null }), 'shape'), {
      name: 'x',
      input_shape: 'null',
    });
    assert.deepEqual(searchTexts(a, 'shape'), ['aten::add', '[[32, 256, 56, 56], [256], [], [0]]']);
    assert.deepEqual(searchTexts(a, 'name'), ['aten::add']);
  });
});

describe('pies and shares', () => {
  it('sums rows of one name (shape grouping) into one slice', () => {
    const rows = [
      row('a', { host_self_us: 5 }),
      row('b', { host_self_us: 4 }),
      row('a', { host_self_us: 3 }),
    ];
    const slices = operatorPie(rows, 'host_self_us', 1);
    assert.deepEqual(
      slices.map((s) => [s.name, s.value]),
      [
        ['a', 8],
        ['b', 4],
      ],
    );
    assert.deepEqual(operatorPie(rows, 'device_self_us'), []);
  });

  it('computes the tensor-core share of device time', () => {
    const r = row('conv', {
      device_self_us: 200,
      tensor_core_self_us: 50,
      device_total_us: 400,
      tensor_core_total_us: 100,
    });
    assert.equal(tensorCoreShare(r, 'self'), 25);
    assert.equal(tensorCoreShare(r, 'total'), 25);
    assert.equal(tensorCoreShare(row('cpu'), 'self'), null);
  });

  it('knows when a trace has device time', () => {
    const base: OperatorsResponse = {
      group_by: 'name',
      rows: [],
      op_count: 0,
      host_self_us: 0,
      device_self_us: 0,
      call_stack_source: null,
      kernel_view_absent_reason: 'this trace has no GPU kernels (CPU-only profile)',
      roofs: [],
    };
    assert.equal(hasDeviceTime(base), false);
    assert.equal(hasDeviceTime({ ...base, kernel_view_absent_reason: null }), true);
  });
});

describe('operatorCsv', () => {
  it('writes the shown columns with raw microseconds', () => {
    const rows = [
      row('aten::add', { input_shape: SHAPE }),
      row('my, "range"', { input_shape: null, has_call_stack: false }),
    ];
    const cpu = operatorCsv(rows, 'shape', false);
    assert.deepEqual(cpu.header, [
      'Name',
      'Input Shape',
      'Calls',
      'Host Self Duration (us)',
      'Host Self Avg (us)',
      'Host Total Duration (us)',
      'Host Total Avg (us)',
      'Tensor Cores Eligible',
      'Has Call Stack',
    ]);
    assert.equal(
      toCsv(cpu.header, cpu.rows).split('\r\n')[2],
      '"my, ""range""",,2,10,5,20,10,false,false',
    );
    assert.equal(
      toCsv(cpu.header, cpu.rows).split('\r\n')[1],
      'aten::add,"[[32,256,56,56],[256],[],[0]]",2,10,5,20,10,false,true',
    );
    const gpu = operatorCsv(rows, 'name', true);
    assert.equal(gpu.header.length, 14);
    assert.equal(gpu.rows[0]?.length, 14);
    assert.ok(!gpu.header.includes('Input Shape'));
  });
});

describe('replayed rows', () => {
  it('marks a row with kernels replayed from a graph its op captured', () => {
    const replayedOnly = row('aten::mm', { calls: 0, host_self_us: 0, replayed_us: 125 });
    assert.equal(isReplayed(replayedOnly), true);
    assert.equal(isReplayed(row('aten::mm', { replayed_us: 0 })), false);
  });
});
