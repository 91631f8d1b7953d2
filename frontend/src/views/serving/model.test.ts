import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Iteration, PhaseStats, ServingView } from '../../api/types';
import {
  boxAt,
  headline,
  iterationLines,
  iterationWindow,
  phaseRows,
  phasesOf,
  stripBoxes,
} from './model';

function iteration(index: number, phase: string, start: number, dur: number): Iteration {
  return {
    index,
    phase,
    phase_from: `engine annotation (${phase})`,
    marker: `execute_${index}`,
    start_us: start,
    dur_us: dur,
    host_dur_us: dur / 2,
    gpu_start_us: start + 10,
    gpu_end_us: start + dur,
    gpu_busy_us: dur / 2,
    gpu_idle_us: 0,
    kernel_us: dur / 2,
    graph_replayed_us: 0,
    graph_replayed_pct: 0,
    scheduling_us: 5,
    queue_us: 5,
    gap_before_us: null,
    gpu_gap_before_us: null,
    tokens: phase === 'decode' ? 8 : 512,
    requests: 8,
    counts_from: 'engine annotation',
    context_requests: null,
    context_tokens: null,
    generation_requests: null,
    generation_tokens: null,
    collective_calls: 0,
    collective_us: 0,
    top_kernels: [],
  };
}

const STAT = { median: 100, p90: 120, mean: 105, total: 400 };

function stats(over: Partial<PhaseStats> = {}): PhaseStats {
  const estimate = { value_us: null, assumption: '' };
  return {
    count: 2,
    dur_us: STAT,
    gpu_busy_us: STAT,
    scheduling_us: STAT,
    gap_before_us: STAT,
    tokens: 16,
    requests: 16,
    iterations_with_tokens: 2,
    tokens_per_s: 1234.6,
    kernel_us: 200,
    classes_us: { gemm: 150, attention: 50, conv: 0, communication: 0, other: 0, unknown: 0 },
    graph_replayed_pct: null,
    collective_calls: 0,
    collective_us: 0,
    collective_types: {},
    first_token_us: estimate,
    per_output_token_us: estimate,
    ...over,
  };
}

function view(): ServingView {
  return {
    engine: 'vllm',
    source: 'annotations',
    reason: null,
    rank: 1,
    world_size: 2,
    iteration_count: 3,
    window_us: [1000, 2000],
    iterations: [
      iteration(0, 'prefill', 1000, 400),
      iteration(1, 'decode', 1500, 100),
      iteration(2, 'decode', 1900, 100),
    ],
    offset: 0,
    limit: 10000,
    phases: {
      // Listed out of order: the page shows prefill first.
      decode: stats({ per_output_token_us: { value_us: 100, assumption: 'one token' } }),
      prefill: stats({ count: 1, first_token_us: { value_us: 400, assumption: 'one iteration' } }),
    },
    captures: [],
    notes: [],
  };
}

describe('the iteration strip', () => {
  it('places each iteration by start and duration on the window', () => {
    const boxes = stripBoxes(view(), 1000);
    assert.deepEqual(
      boxes.map((b) => [b.index, b.x, b.w, b.phase]),
      [
        [0, 0, 400, 'prefill'],
        [1, 500, 100, 'decode'],
        [2, 900, 100, 'decode'],
      ],
    );
  });

  it('draws the host marker and the GPU work, paler the more it idles', () => {
    // Host marker 200 µs; GPU from start + 10 to the end: 390 µs, 200 of them busy.
    assert.deepEqual(
      stripBoxes(view(), 1000).map((b) => [b.hostW, b.gpu]),
      [
        [200, { x: 10, w: 390, busy: 200 / 390 }],
        [50, { x: 510, w: 90, busy: 50 / 90 }],
        [50, { x: 910, w: 90, busy: 50 / 90 }],
      ],
    );
  });

  it('keeps a short iteration at least the minimum width', () => {
    const boxes = stripBoxes(view(), 10, 2);
    assert.deepEqual(
      boxes.map((b) => b.w),
      [4, 2, 2],
    );
  });

  it('finds the iteration under the pointer, or the nearest one close by', () => {
    const boxes = stripBoxes(view(), 1000);
    assert.equal(boxAt(boxes, 50), 0);
    assert.equal(boxAt(boxes, 550), 1);
    assert.equal(boxAt(boxes, 603), 1); // 3 px past its end
    assert.equal(boxAt(boxes, 750), -1); // between two, far from both
  });

  it('opens the trace view around the iteration and its GPU work', () => {
    const it0 = iteration(0, 'prefill', 1000, 400);
    assert.deepEqual(iterationWindow(it0), { t0: '900', t1: '1500' });
  });

  it('says the iteration in its tooltip', () => {
    const lines = iterationLines(iteration(1, 'decode', 1500, 100), 1000);
    assert.equal(lines[0], 'Iteration 1 · Decode');
    assert.ok(lines.includes('8 tokens, 8 requests'));
    assert.equal(lines.at(-1), 'engine annotation (decode)');
  });
});

describe('the phases', () => {
  it('come in phase order with their estimate and class shares', () => {
    assert.deepEqual(phasesOf(view()), ['prefill', 'decode']);
    const rows = phaseRows(view());
    assert.deepEqual(
      rows.map((r) => [r.phase, r.estimate]),
      [
        ['prefill', 400],
        ['decode', 100],
      ],
    );
    assert.deepEqual(
      rows[1]?.classShares.filter((c) => c.share > 0).map((c) => [c.cls, c.share]),
      [
        ['gemm', 0.75],
        ['attention', 0.25],
      ],
    );
  });

  it('headline: iterations, the estimates, decode tokens/s and the rank', () => {
    assert.deepEqual(
      headline(view()).map(([label, value]) => [label, value]),
      [
        ['Iterations', '3'],
        ['GPU busy', '50.0 %'],
        ['First token', '400 µs'],
        ['Per output token', '100 µs'],
        ['Decode tokens/s', '1,235'],
        ['Rank', '1 of 2'],
      ],
    );
    const single = { ...view(), rank: 0, world_size: 1 };
    assert.ok(!headline(single).some(([label]) => label === 'Rank'));
  });
});
