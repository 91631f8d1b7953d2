import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FEW_FLOWS, flowsToDraw, selectionChain } from './flows';
import type { FlowArrow } from './render';

function arrow(srcRow: number, dstRow: number, srcTs = 0, srcTrack = 'cpu'): FlowArrow {
  return {
    srcTrack,
    srcTs,
    srcDepth: 1,
    srcRow,
    dstRow,
    dstTrack: 'gpu',
    dstTs: srcTs + 5,
    dstDepth: 0,
  };
}

// Rows 1..: an op (row 10, 0-100 µs on "cpu", depth 0) whose launch (row 11, at 20 µs)
// flows to a kernel (row 12), which a second flow chains to row 13; plus unrelated flows.
const launch = arrow(11, 12, 20);
const chained = arrow(12, 13, 30, 'gpu');
const unrelated = Array.from({ length: FEW_FLOWS }, (_, i) => arrow(100 + i, 200 + i, 500 + i));
const arrows = [launch, chained, ...unrelated];
const op = { trackId: 'cpu', row: 10, depth: 0, start: 0, dur: 100 };

describe('flows to draw', () => {
  it("draws only the selected op's launches and what they chain to when many", () => {
    assert.deepEqual(selectionChain(arrows, op), [launch, chained]);
    assert.deepEqual(flowsToDraw(arrows, op, false), [launch, chained]);
  });

  it('follows a selected kernel back to its launch', () => {
    const kernel = { trackId: 'gpu', row: 12, depth: 0, start: 25, dur: 10 };
    assert.deepEqual(selectionChain(arrows, kernel), [launch, chained]);
  });

  it('draws none without a selection, all on request or when few', () => {
    assert.deepEqual(flowsToDraw(arrows, null, false), []);
    assert.equal(flowsToDraw(arrows, null, true).length, arrows.length);
    const few = arrows.slice(0, FEW_FLOWS);
    assert.equal(flowsToDraw(few, null, false).length, FEW_FLOWS);
  });
});
