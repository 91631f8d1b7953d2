import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AllocationRow, MemoryCurveResponse, MemoryDevice } from '../../api/types';
import { filterRows } from '../../components/filter';
import {
  allocationCsvRows,
  allocationText,
  allocationViews,
  bytesAxis,
  chooseDevice,
  curveSeries,
  curveWidth,
  deviceForAnchor,
  deviceLabel,
  formatAbsTime,
  formatBytesAxis,
  formatBytesExact,
  formatRelTime,
  operatorCsvRows,
  operatorText,
  pageLabel,
  parseRange,
  peakX,
  rangeLabel,
  rangeParams,
  sameRange,
  selectRange,
  stateLabel,
  stepIndex,
} from './model';

function device(name: string, type: number, id: number, extra: Partial<MemoryDevice> = {}) {
  return {
    device: name,
    label: name,
    device_type: type,
    device_id: id,
    events: 1,
    allocated_source: 'trace',
    reserved_known: true,
    total_memory_bytes: null,
    peak_allocated_bytes: 100,
    peak_allocated_us: 1000,
    peak_op: null,
    peak_reserved_bytes: 200,
    peak_reserved_us: 900,
    start_allocated_bytes: 0,
    end_allocated_bytes: 0,
    ...extra,
  } satisfies MemoryDevice;
}

const DEVICES = [device('CPU', 0, -1), device('GPU0', 1, 0), device('GPU1', 1, 1)];

describe('device names', () => {
  it('names a device as the Overview does, with its memory', () => {
    const gpu = device('GPU0', 1, 0, { label: 'GPU 0 · AMD Instinct MI300X' });
    assert.equal(deviceLabel(gpu), 'GPU 0 · AMD Instinct MI300X');
    const sized = deviceLabel({ ...gpu, total_memory_bytes: 2 ** 30 });
    assert.ok(sized.startsWith('GPU 0 · AMD Instinct MI300X · '), sized);
  });
});

describe('time and byte formatting', () => {
  it('formats relative times to the microsecond', () => {
    assert.equal(formatRelTime(0), '0 µs');
    assert.equal(formatRelTime(12.5), '12.5 µs');
    assert.equal(formatRelTime(999.9994), '999.999 µs');
    assert.equal(formatRelTime(12345.6789), '12.346 ms');
    assert.equal(formatRelTime(4321123.4), '4.321123 s');
    assert.equal(formatRelTime(-1500), '-1.500 ms');
    assert.equal(formatRelTime(null), '—');
  });

  it('formats absolute times', () => {
    assert.equal(formatAbsTime(1419247337276.476), '1419247337276.476 µs');
    assert.equal(formatAbsTime(1419247337200), '1419247337200 µs');
    assert.equal(formatAbsTime(undefined), '—');
  });

  it('formats bytes with the exact count', () => {
    assert.equal(formatBytesExact(101305344), '96.61 MiB (101,305,344 B)');
    assert.equal(formatBytesExact(512), '512 B');
    assert.equal(formatBytesExact(-2048), '-2.00 KiB (-2,048 B)');
    assert.equal(formatBytesAxis(0), '0');
    assert.equal(formatBytesAxis(1536), '1.5 KiB');
    assert.equal(formatBytesAxis(100 * 2 ** 20), '100 MiB');
    assert.equal(formatBytesAxis(512), '512 B');
  });

  it('puts byte ticks on round binary sizes', () => {
    const MiB = 2 ** 20;
    assert.deepEqual(bytesAxis(7542836), { max: 8 * MiB, interval: 2 * MiB });
    assert.deepEqual(bytesAxis(101305344), { max: 100 * MiB, interval: 20 * MiB });
    assert.deepEqual(bytesAxis(16), { max: 20, interval: 5 });
    assert.deepEqual(bytesAxis(8 * MiB), { max: 8 * MiB, interval: 2 * MiB });
    assert.deepEqual(bytesAxis(3 * 2 ** 30), { max: 3 * 2 ** 30, interval: 2 ** 30 });
    assert.equal(bytesAxis(0), null);
  });
});

describe('ranges', () => {
  const bounds = { start_us: 100, end_us: 200 };

  it('orders, clamps and rounds a selection', () => {
    assert.deepEqual(selectRange(150.12345, 120, bounds), { start_us: 120, end_us: 150.123 });
    assert.deepEqual(selectRange(50, 500, bounds), bounds);
    assert.deepEqual(selectRange(50, 500, null), { start_us: 50, end_us: 500 });
  });

  it('refuses empty or too narrow selections', () => {
    assert.equal(selectRange(10, 20, bounds), null);
    assert.equal(selectRange(150, 150.0001, bounds), null);
    assert.equal(selectRange(150, 151, bounds, 5), null);
    assert.equal(selectRange(Number.NaN, 151, bounds), null);
  });

  it('parses and writes URL values', () => {
    assert.deepEqual(parseRange('1419247337200.5', '1419247337400'), {
      start_us: 1419247337200.5,
      end_us: 1419247337400,
    });
    assert.equal(parseRange('5', '5'), null);
    assert.equal(parseRange('x', '5'), null);
    assert.equal(parseRange(undefined, '5'), null);
    assert.equal(parseRange('', '5'), null);
    assert.deepEqual(rangeParams({ start_us: 1.5, end_us: 3 }), { start_us: '1.5', end_us: '3' });
    assert.deepEqual(rangeParams(null), { start_us: undefined, end_us: undefined });
    const r = { start_us: 1419247337200.125, end_us: 1419247337400.5 };
    const p = rangeParams(r);
    assert.deepEqual(parseRange(p.start_us, p.end_us), r);
  });

  it('compares and labels ranges', () => {
    assert.equal(sameRange(null, null), true);
    assert.equal(sameRange(bounds, { ...bounds }), true);
    assert.equal(sameRange(bounds, null), false);
    assert.equal(rangeLabel(null, 0), 'Whole trace');
    assert.equal(
      rangeLabel({ start_us: 1012345, end_us: 1045678 }, 1000000),
      '12.345 ms – 45.678 ms (33.333 ms)',
    );
  });

  it('clamps the curve width to the API bounds', () => {
    assert.equal(curveWidth(812.4), 812);
    assert.equal(curveWidth(0), 1);
    assert.equal(curveWidth(50000), 20000);
    assert.equal(curveWidth(Number.NaN), 1);
  });
});

describe('the step curve', () => {
  const curve: MemoryCurveResponse = {
    trace_start_us: 0,
    device: 'GPU0',
    start_us: null,
    end_us: null,
    width: 4,
    points: 4,
    downsampled: false,
    t_us: [1000, 1010, 1020, 1050],
    allocated_bytes: [10, 30, 20, 20],
    reserved_bytes: [64, 64, 64, 64],
    peak_allocated_bytes: 30,
    peak_reserved_bytes: 64,
  };

  it('finds the value held at a time', () => {
    assert.equal(stepIndex(curve.t_us, 999), -1);
    assert.equal(stepIndex(curve.t_us, 1000), 0);
    assert.equal(stepIndex(curve.t_us, 1015), 1);
    assert.equal(stepIndex(curve.t_us, 1020), 2);
    assert.equal(stepIndex(curve.t_us, 5000), 3);
    assert.equal(stepIndex([], 5), -1);
  });

  it('makes chart data relative to the origin with the extent and peak', () => {
    const s = curveSeries(curve, 1000, null);
    assert.deepEqual(s.allocated[1], [10, 30]);
    assert.deepEqual(s.reserved?.[3], [50, 64]);
    assert.equal(s.min, 0);
    assert.equal(s.max, 50);
    assert.equal(s.peak, 30);
    const ranged = curveSeries(curve, 1000, { start_us: 1005, end_us: 1040 });
    assert.equal(ranged.min, 5);
    assert.equal(ranged.max, 40);
    // A device whose first event comes after another device's: the axis still starts at 0.
    const later = curveSeries(curve, 900, null);
    assert.equal(later.min, 0);
    assert.deepEqual(later.allocated[0], [100, 10]);
    const flat = curveSeries(
      { ...curve, t_us: [7], allocated_bytes: [1], reserved_bytes: null },
      0,
      null,
    );
    assert.equal(flat.reserved, null);
    assert.ok(flat.max > flat.min);
  });

  it('marks a carried-in peak at the range start', () => {
    const gpu = device('GPU0', 1, 0, { peak_allocated_us: 900 });
    assert.equal(peakX(gpu, { start_us: 950, end_us: 2000 }), 950);
    assert.equal(peakX(gpu, null), 900);
    assert.equal(peakX(device('GPU0', 1, 0, { peak_allocated_us: null }), null), null);
  });
});

describe('devices', () => {
  it('chooses the wanted, else the default, else the first device', () => {
    assert.equal(chooseDevice(DEVICES, 'GPU1', 'GPU0'), 'GPU1');
    assert.equal(chooseDevice(DEVICES, 'GPU7', 'GPU0'), 'GPU0');
    assert.equal(chooseDevice(DEVICES, undefined, null), 'CPU');
    assert.equal(chooseDevice([], 'GPU0', 'GPU0'), null);
  });

  it('maps the Overview anchor device-<id> to the GPU', () => {
    assert.equal(deviceForAnchor('device-0', DEVICES), 'GPU0');
    assert.equal(deviceForAnchor('device-1', DEVICES), 'GPU1');
    assert.equal(deviceForAnchor('device-2', DEVICES), undefined);
    assert.equal(deviceForAnchor('device-CPU', DEVICES), 'CPU');
    assert.equal(deviceForAnchor('device-gpu1', DEVICES), 'GPU1');
    assert.equal(deviceForAnchor('curve', DEVICES), undefined);
    assert.equal(deviceForAnchor('device-0', [device('XPU0', 12, 0)]), 'XPU0');
  });
});

describe('tables', () => {
  const rows: AllocationRow[] = [
    {
      device: 'GPU0',
      state: 'paired',
      size_bytes: 1024,
      alloc_us: 1100,
      free_us: 1200,
      duration_us: 100,
      op: 'aten::empty',
      parent_op: 'aten::linear',
      free_op: null,
    },
    {
      device: 'GPU0',
      state: 'never_freed',
      size_bytes: 64,
      alloc_us: 1300,
      free_us: null,
      duration_us: null,
      op: 'aten::add',
      parent_op: null,
      free_op: null,
    },
    {
      device: 'GPU0',
      state: 'freed_unseen',
      size_bytes: 8,
      alloc_us: null,
      free_us: 1050,
      duration_us: null,
      op: 'aten::resize_',
      parent_op: 'aten::index',
      free_op: 'aten::resize_',
    },
  ];

  it('splits the allocating and freeing op', () => {
    const views = allocationViews(rows, 10);
    assert.deepEqual(
      views.map((v) => [v.key, v.allocOp, v.freeOp]),
      [
        [10, 'aten::empty', null],
        [11, 'aten::add', null],
        [12, null, 'aten::resize_'],
      ],
    );
    assert.equal(stateLabel('never_freed'), 'never freed');
    assert.equal(stateLabel('freed_unseen'), 'allocated before recording');
    assert.equal(stateLabel('some_new_state'), 'some new state');
  });

  it('searches every word in the op names and state', () => {
    const views = allocationViews(rows);
    assert.deepEqual(
      filterRows(views, 'linear', allocationText).map((v) => v.key),
      [0],
    );
    assert.deepEqual(
      filterRows(views, 'NEVER', allocationText).map((v) => v.key),
      [1],
    );
    assert.deepEqual(
      filterRows(views, 'aten resize', allocationText).map((v) => v.key),
      [2],
    );
    assert.equal(filterRows(views, '  ', allocationText).length, 3);
  });

  it('writes CSV rows with absolute and relative times', () => {
    const csv = allocationCsvRows(allocationViews(rows), 1000);
    assert.deepEqual(csv[0], [
      'GPU0',
      'paired',
      1024,
      'aten::empty',
      'aten::linear',
      null,
      1100,
      1200,
      100,
      200,
      100,
    ]);
    assert.deepEqual(csv[2]?.slice(3, 10), [
      null,
      'aten::index',
      'aten::resize_',
      null,
      1050,
      null,
      50,
    ]);
    const op = {
      device: 'CPU',
      name: 'aten::empty',
      calls: 3,
      allocation_count: 2,
      allocation_bytes: 64,
      release_count: 1,
      release_bytes: 16,
      increase_bytes: 48,
      self_allocation_count: 2,
      self_allocation_bytes: 64,
      self_release_count: 0,
      self_release_bytes: 0,
      self_increase_bytes: 64,
    };
    assert.deepEqual(operatorCsvRows([op])[0], [
      'CPU',
      'aten::empty',
      3,
      2,
      64,
      1,
      16,
      48,
      2,
      64,
      0,
      0,
      64,
    ]);
    assert.equal(filterRows([op], 'EMPTY', operatorText).length, 1);
    assert.equal(filterRows([op], 'add', operatorText).length, 0);
  });

  it('labels pages', () => {
    assert.equal(pageLabel(0, 1000, 12345), '1–1,000 of 12,345');
    assert.equal(pageLabel(12000, 345, 12345), '12,001–12,345 of 12,345');
    assert.equal(pageLabel(0, 0, 0), '0 of 0');
  });
});
