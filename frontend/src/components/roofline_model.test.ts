import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RooflineFields } from '../api/types';
import { H100_ROOF, rooflineRow } from './roofline_fixture';
import { dotSize, rooflineData } from './roofline_model';

type Row = RooflineFields & { name: string; t: number };

const row = (name: string, over: Partial<Row>): Row => rooflineRow(name, { t: 10, ...over });
const H100 = H100_ROOF;

describe('rooflineData', () => {
  it('places rows with work, one roof per data type, the ridge at peak / bandwidth', () => {
    const data = rooflineData(
      [
        row('aten::mm', {
          tflops: 687.2,
          gbps: 503,
          intensity: 1365,
          dtype: 'bf16',
          bound: 'compute',
        }),
        row('aten::copy_', { tflops: 0, gbps: 1000, intensity: 0 }),
        row('aten::view', {}),
      ],
      [H100],
      (r) => r.t,
    );
    assert.deepEqual(
      data.points.map((p) => p.name),
      ['aten::mm'],
    );
    assert.equal(data.offChart, 1); // the copy: no FLOPs, not on log axes
    assert.equal(data.lines.length, 1);
    const line = data.lines[0];
    assert.ok(line);
    assert.equal(line.dtype, 'bf16');
    assert.ok(line.ridge !== null && Math.abs(line.ridge - (989.5 * 1000) / 3350) < 1e-9);
    assert.deepEqual(line.points[1], [line.ridge, 989.5]);
    assert.equal(data.match, 'exact'); // how the device found its peaks entry
  });

  it("carries a kernel's occupancy limit to its dot, none for operators", () => {
    const kernel = { ...row('gemm', { tflops: 50, intensity: 80 }), occupancy_limited_by: 'REGS' };
    const data = rooflineData(
      [kernel, row('aten::mm', { tflops: 40, intensity: 60 })],
      [H100],
      (r) => r.t,
    );
    assert.deepEqual(
      data.points.map((p) => [p.name, p.limitedBy]),
      [
        ['gemm', 'REGS'],
        ['aten::mm', null],
      ],
    );
  });

  it('draws no roof on an unknown device', () => {
    const data = rooflineData(
      [row('a', { tflops: 1, intensity: 2, dtype: 'bf16' })],
      [],
      (r) => r.t,
    );
    assert.equal(data.points.length, 1);
    assert.equal(data.lines.length, 0);
    assert.equal(data.device, null);
    assert.equal(data.match, null);
  });

  it('draws the memory roof alone for dots of no known data type', () => {
    const data = rooflineData(
      [row('moe', { tflops: 20, gbps: 900, intensity: 30, dtype: null, t: 50 })],
      [H100],
      (r) => r.t,
    );
    assert.equal(data.lines.length, 1);
    const line = data.lines[0];
    assert.ok(line);
    assert.equal(line.dtype, null);
    assert.equal(line.peakTflops, null);
    // On the memory slope: TFLOP/s = GB/s × FLOP/B / 1000, both ends.
    for (const [x, y] of line.points) assert.ok(Math.abs(y - (3350 * x) / 1000) < 1e-9);
  });

  it('keeps a short far-off row off the axes (in whole decades), and says so', () => {
    const rows = [
      row('aten::mm', { tflops: 400, intensity: 300, dtype: 'bf16', bound: 'compute', t: 5000 }),
      row('aten::add', { tflops: 2, intensity: 0.2, dtype: 'bf16', bound: 'memory', t: 900 }),
      row('aten::sub', { tflops: 1e-5, intensity: 0.12, dtype: 'bf16', bound: 'memory', t: 30 }),
    ];
    const data = rooflineData(rows, [H100], (r) => r.t);
    assert.deepEqual(data.axes, { xMin: 0.1, xMax: 1000, yMin: 1, yMax: 10000 });
    assert.equal(data.hidden, 1); // 30 µs of 5930 (0.5 %), 7 decades below the GEMM
    // Taking 1 % of the time or more, it stays on the chart.
    const longer = rooflineData(rows, [H100], (r) => (r.name === 'aten::sub' ? 100 : r.t));
    assert.equal(longer.hidden, 0);
    assert.equal(longer.axes?.yMin, 1e-6);
    // The roof enters the chart at its bottom edge, not below it.
    const start = data.lines[0]?.points[0];
    assert.ok(start && Math.abs(start[1] - 1) < 1e-9);
  });

  it('sizes dots by time', () => {
    assert.equal(dotSize(0, 100), 6);
    assert.equal(dotSize(100, 100), 40);
    assert.equal(dotSize(5, 0), 6);
  });
});
