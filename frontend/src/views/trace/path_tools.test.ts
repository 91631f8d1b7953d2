import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PathMark } from './path_model';
import { firstStepWindow, pathLegendKinds, stepText } from './path_tools';

const marks: PathMark[] = [
  { trackId: 't1', start: 0, dur: 1200, kind: 'cpu', name: 'aten::mm' },
  { trackId: 't2', start: 1200, dur: 300, kind: 'kernel', name: 'gemm' },
  { trackId: 't1', start: 1500, dur: 40, kind: 'cpu', name: 'aten::add' },
];

describe('the critical path tools', () => {
  it('legend: each kind once, in the order the path meets them', () => {
    assert.deepEqual(pathLegendKinds(marks), ['cpu', 'kernel']);
    assert.deepEqual(pathLegendKinds([]), []);
  });

  it('names the segment stepped to', () => {
    assert.equal(stepText(marks, 0), '1 of 3: aten::mm (CPU, 1.20 ms)');
    assert.equal(stepText(marks, 1), '2 of 3: gemm (Kernel, 300 µs)');
    assert.equal(stepText(marks, 3), '');
  });

  it("shows the first step's whole path, not its first segment alone", () => {
    const gapFirst: PathMark[] = [
      { trackId: 't1', start: 100, dur: 40, kind: 'idle', name: 'gap' },
      ...marks.map((m) => ({ ...m, start: m.start + 140 })),
    ];
    const whole = firstStepWindow(gapFirst, 1500);
    assert.deepEqual(whole && [whole.trackId, whole.start, whole.dur, whole.name], [
      't1',
      100,
      1500,
      "the first step's path (3 segments)",
    ]);
    assert.equal(firstStepWindow(gapFirst, 0)?.dur, 40); // no step length: the segment
    assert.equal(firstStepWindow([], 1500), null);
  });
});
