import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SnapshotAlignment, SnapshotDevice, SnapshotIcicleNode } from '../../api/types';
import {
  alignmentText,
  curvePoints,
  fragmentationShare,
  frameText,
  icicleLayout,
  sourceFrames,
  timeOrigin,
  traceWindow,
} from './model';

function node(parent: number, depth: number, name: string, bytes: number): SnapshotIcicleNode {
  return { parent, depth, name, bytes, filename: `${name}.py`, line: 1 };
}

const ALIGNED: SnapshotAlignment = {
  worker: 'gpu0',
  span: '1',
  state: 'aligned',
  reason: null,
  trace_origin_us: 1000,
  trace_start_us: 5000,
  trace_end_us: 9000,
  matched_allocations: 3,
  clock_offset_us: -1,
};

describe('memory snapshot model', () => {
  it('lays the icicle out from the outermost frame, children inside their parent', () => {
    // The route's order for train(700) > [forward(400) > alloc_c(400), alloc_d(300)], none(132).
    const cells = icicleLayout([
      node(-1, 0, 'train', 700),
      node(0, 1, 'forward', 400),
      node(1, 2, 'alloc_c', 400),
      node(0, 1, 'alloc_d', 300),
      node(-1, 0, 'none', 132),
    ]);
    const at = cells.map((c) => [
      c.node.name,
      +(c.x * 832).toFixed(6),
      +(c.width * 832).toFixed(6),
    ]);
    assert.deepEqual(at, [
      ['train', 0, 700],
      ['forward', 0, 400],
      ['alloc_c', 0, 400],
      ['alloc_d', 400, 300],
      ['none', 700, 132],
    ]);
    assert.deepEqual(icicleLayout([]), []);
  });

  it('puts times on the trace axis when aligned, else from the first entry', () => {
    const device = { first_time_us: 2000 } as SnapshotDevice;
    assert.deepEqual(timeOrigin(device, ALIGNED)?.us, 5000);
    assert.deepEqual(timeOrigin(device, { ...ALIGNED, state: 'no_overlap' })?.us, 2000);
    assert.equal(timeOrigin({ first_time_us: null } as SnapshotDevice, null), null);
    const origin = { us: 5000, label: '' };
    assert.deepEqual(traceWindow(ALIGNED, origin), [0, 4]);
    assert.equal(traceWindow({ ...ALIGNED, state: 'no_overlap' }, origin), null);
    assert.deepEqual(curvePoints([5000, null, 7000], [1, 2, 3], origin), [
      [0, 1],
      [2, 3],
    ]);
  });

  it('writes frames as source and folds library frames', () => {
    const lib = { filename: '/x/site-packages/torch/nn.py', line: 3, name: 'lin', fx: null };
    const own = {
      filename: '/src/model.py',
      line: 12,
      name: 'forward',
      fx: { fx_node_name: 'mm_1' },
    };
    assert.equal(frameText(own), 'forward (model.py:12) [fx mm_1]');
    assert.equal(frameText({ ...lib, line: null }), 'lin (nn.py)');
    assert.deepEqual(sourceFrames([lib, own]), [own]);
    assert.deepEqual(sourceFrames([lib]), [lib]);
  });

  it('says how the snapshot is aligned, and fragmentation', () => {
    assert.match(
      alignmentText(ALIGNED),
      /Aligned with gpu0's trace .* 3 of the trace's allocations/,
    );
    assert.match(
      alignmentText({ ...ALIGNED, state: 'unknown', reason: 'no base' }),
      /Not aligned.*no base/,
    );
    assert.match(alignmentText(null), /No trace/);
    const device = { reserved_bytes: 200, inactive_bytes: 50 } as SnapshotDevice;
    assert.equal(fragmentationShare(device), 0.25);
    assert.equal(fragmentationShare({ ...device, reserved_bytes: 0 }), null);
  });
});
