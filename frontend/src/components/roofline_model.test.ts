import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Roof, RooflineFields } from '../api/types';
import { dotSize, rooflineData } from './roofline_model';

type Row = RooflineFields & { name: string; t: number };

function row(name: string, over: Partial<Row>): Row {
  return {
    name,
    t: 10,
    flops: null,
    bytes: null,
    tflops: null,
    gbps: null,
    intensity: null,
    pct_of_peak: null,
    bound: null,
    dtype: null,
    ...over,
  };
}

const H100: Roof = {
  device_id: 0,
  device: 'H100-SXM',
  match: 'exact',
  memory_gbps: 3350,
  tflops: { bf16: 989.5, fp32: 67 },
  source: 'datasheet',
};

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
    assert.ok(Math.abs(line.ridge - (989.5 * 1000) / 3350) < 1e-9);
    assert.deepEqual(line.points[1], [line.ridge, 989.5]);
    assert.equal(data.match, 'exact'); // how the device found its peaks entry
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

  it('sizes dots by time', () => {
    assert.equal(dotSize(0, 100), 6);
    assert.equal(dotSize(100, 100), 40);
    assert.equal(dotSize(5, 0), 6);
  });
});
