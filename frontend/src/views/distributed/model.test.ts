import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { DistributedResponse } from '../../api/types';
import { FIXTURE } from './fixture';
import {
  allWarnings,
  apiField,
  brokenRanks,
  causeLabel,
  collectiveRows,
  excessParts,
  lateness,
  findJobStep,
  formatRanks,
  formatSigned,
  gpuRows,
  jobSummary,
  lateRanks,
  median,
  parseRank,
  PARTS,
  rankProgress,
  rankRows,
  rankStep,
  rankValues,
  rowShare,
  seriesByRank,
  stepOptions,
  stragglerRows,
  SYNC_PARTS,
  traceLinkState,
  waitShare,
} from './model';
import { formatBandwidth, plural } from './text';

const view = FIXTURE;
const [rank0, rank1] = view.ranks;
if (!rank0 || !rank1) throw new Error('fixture has two ranks');

describe('steps', () => {
  it('offers all steps first, then each job step with its rank count when partial', () => {
    assert.deepEqual(stepOptions(view), [
      { value: '', label: 'All steps (total)' },
      { value: 'ProfilerStep#2', label: 'ProfilerStep#2' },
      { value: 'ProfilerStep#3', label: 'ProfilerStep#3' },
      { value: 'ProfilerStep#4', label: 'ProfilerStep#4 · 1 of 2 ranks' },
    ]);
  });

  it("finds a rank's own step by number", () => {
    const step = findJobStep(view, 'ProfilerStep#3');
    assert.ok(step);
    assert.equal(rankStep(rank1, view, step)?.start_us, 30000);
    const missing = findJobStep(view, 'ProfilerStep#4');
    assert.ok(missing);
    assert.equal(rankStep(rank0, view, missing), undefined);
    assert.equal(findJobStep(view, 'nope'), undefined);
  });

  it('matches unnumbered steps by position', () => {
    const steps = view.ranks.map((r) => ({
      ...r,
      steps: r.steps.map((s, i) => ({ ...s, number: null, name: `step ${i}` })),
    }));
    const unnumbered: DistributedResponse = {
      ...view,
      ranks: steps,
      steps: view.steps.slice(0, 2).map((s, i) => ({ ...s, number: null, name: `step ${i}` })),
    };
    const second = unnumbered.steps[1];
    assert.ok(second);
    assert.equal(rankStep(steps[0] ?? rank0, unnumbered, second)?.name, 'step 1');
  });
});

describe('rank values', () => {
  it("are the rank's totals for all steps, exactly the API fields", () => {
    const v = rankValues(rank0, view, undefined);
    assert.deepEqual(v, {
      step_time: rank0.step_time_us,
      computation: rank0.computation_us,
      overlap: rank0.overlap_us,
      communication: rank0.communication_us,
      other: rank0.other_us,
      sync_wait: rank0.sync_wait_us,
      transfer: rank0.transfer_us,
    });
    assert.equal(apiField('step_time', false), 'step_time_us');
    assert.equal(apiField('step_time', true), 'duration_us');
    assert.equal(apiField('sync_wait', true), 'sync_wait_us');
  });

  it("are the rank's step for one step, null when it lacks the step", () => {
    const step = findJobStep(view, 'ProfilerStep#2');
    const own = rank1.steps[0];
    assert.ok(step && own);
    const v = rankValues(rank1, view, step);
    assert.ok(v);
    assert.equal(v.step_time, own.duration_us);
    assert.equal(v.communication, own.communication_us);
    assert.equal(v.sync_wait, own.sync_wait_us);
    assert.equal(rankValues(rank1, view, findJobStep(view, 'ProfilerStep#4')), null);
  });

  it('builds rows with lateness per job or per step', () => {
    const all = rankRows(view, undefined);
    assert.deepEqual(
      all.map((r) => [r.rank, r.stepsLate, r.lateBy]),
      [
        [0, 1, 229.858],
        [1, 1, 132.964],
      ],
    );
    const step3 = rankRows(view, findJobStep(view, 'ProfilerStep#3'));
    assert.deepEqual(
      step3.map((r) => [r.rank, r.stepsLate, r.lateBy]),
      [
        [0, 0, 0],
        [1, 1, 132.964],
      ],
    );
    const row = all[0];
    assert.ok(row?.values);
    const parts = PARTS.reduce((a, p) => a + (row.values?.[p] ?? 0), 0);
    assert.ok(Math.abs(parts - row.values.step_time) < 1e-6, 'the four parts add up');
    assert.ok(Math.abs((rowShare(row, 'step_time') ?? 0) - 100) < 1e-9);
  });

  it('makes stacked series per rank with gaps for missing steps', () => {
    const rows = rankRows(view, findJobStep(view, 'ProfilerStep#4'));
    const data = seriesByRank(rows, SYNC_PARTS);
    assert.deepEqual(data.labels, ['0', '1']);
    assert.deepEqual(
      data.series.map((s) => s.key),
      ['sync_wait', 'transfer'],
    );
    assert.deepEqual(data.series[0]?.data, [null, null]);
    const totals = seriesByRank(rankRows(view, undefined), PARTS);
    assert.deepEqual(totals.series[0]?.data, [rank0.computation_us, rank1.computation_us]);
  });

  it('computes the wait share of collective time', () => {
    assert.equal(waitShare(null), null);
    assert.equal(
      waitShare({
        step_time: 10,
        computation: 0,
        overlap: 0,
        communication: 0,
        other: 0,
        sync_wait: 1,
        transfer: 3,
      }),
      25,
    );
  });
});

describe('job summary', () => {
  it('counts ranks against the world size', () => {
    const s = jobSummary(view);
    assert.equal(s.ranksText, '2 of 3');
    assert.equal(s.missingRanks, 1);
    assert.equal(s.backend, 'gloo');
    assert.equal(s.mode, 'CPU only');
    assert.equal(s.broken, 1);
    assert.equal(s.medianStepTime, (rank0.step_time_us + rank1.step_time_us) / 2);
    const none = jobSummary({ ...view, world_size: null, backend: null, mode: 'gpu' });
    assert.equal(none.ranksText, '2');
    assert.equal(none.backend, 'unknown');
    assert.equal(none.mode, 'GPU');
  });

  it('takes medians', () => {
    assert.equal(median([]), null);
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
  });

  it('writes rank lists as ranges', () => {
    assert.equal(formatRanks([0, 1, 2, 3, 7, 9, 10]), '0–3, 7, 9–10');
    assert.equal(formatRanks(null), '—');
    assert.equal(formatRanks([5]), '5');
    assert.equal(formatRanks([0, 2, 4, 6, 8], 3), '0, 2, 4, … (5 ranks)');
  });

  it('lists job warnings, then rank warnings, and broken ranks with their fields', () => {
    const partial: DistributedResponse = {
      ...view,
      ranks: [{ ...rank0, partial: true, warnings: ['odd event'] }, rank1],
    };
    assert.deepEqual(allWarnings(partial), [
      view.warnings[0],
      'rank 0 (rank0): the trace file was cut short',
      'rank 0 (rank0): odd event',
    ]);
    assert.deepEqual(brokenRanks(view.errors), [
      {
        worker: 'rank2',
        span: '1',
        message: 'rank2.1.pt.trace.json: the file is empty',
        fields: [
          ['File', 'rank2.1.pt.trace.json'],
          ['Kind', 'empty'],
        ],
      },
    ]);
    assert.deepEqual(brokenRanks([{ worker: 'w', span: '2', offset: 12 }])[0]?.fields, [
      ['Byte offset', '12'],
    ]);
  });
});

describe('collectives', () => {
  it('are the job rows or one rank rows, with the wait share', () => {
    const job = collectiveRows(view, undefined);
    assert.deepEqual(
      job.map((c) => c.name),
      ['all_reduce', 'broadcast'],
    );
    assert.ok(Math.abs((job[0]?.wait_pct ?? 0) - (362.822 / 8000) * 100) < 1e-9);
    assert.equal(collectiveRows(view, 1)[0]?.calls, rank1.collectives[0]?.calls);
    assert.deepEqual(collectiveRows(view, 9), []);
  });

  it('parses a rank from the URL only when the job has it', () => {
    assert.equal(parseRank(view, '1'), 1);
    assert.equal(parseRank(view, '7'), undefined);
    assert.equal(parseRank(view, 'x'), undefined);
    assert.equal(parseRank(view, undefined), undefined);
  });
});

describe('stragglers', () => {
  it('are one row per job step', () => {
    const rows = stragglerRows(view);
    assert.deepEqual(
      rows.map((r) => [r.step, r.straggler?.rank ?? null]),
      [
        ['ProfilerStep#2', 0],
        ['ProfilerStep#3', 1],
        ['ProfilerStep#4', null],
      ],
    );
  });

  it('link to the trace view with the worker, span and window', () => {
    const s = view.steps[0]?.straggler;
    assert.ok(s);
    assert.deepEqual(traceLinkState('ddp_gloo', s.window), {
      run: 'ddp_gloo',
      worker: 'rank0',
      span: '1',
      view: 'trace',
      t0: '1000',
      t1: '9624.87',
    });
  });

  it('explain the cause with every excess, largest first', () => {
    const s = view.steps[0]?.straggler;
    assert.ok(s);
    assert.deepEqual(excessParts(s), [
      'Host gaps +1.74 ms',
      'Data loading +55.5 µs',
      'Computation −630 µs',
      'Communication −1.82 ms',
    ]);
    assert.equal(causeLabel('unknown'), 'Unknown');
    assert.equal(causeLabel('arrived_late'), 'Entered the step late');
    const unknown = view.steps[1]?.straggler;
    assert.ok(unknown);
    assert.deepEqual(lateness(unknown), [
      'Entered the step 40 µs late (its first profiled step: why is not in the trace)',
      'Lost 93 µs inside the step',
      'Not explained: 93 µs',
    ]);
    assert.equal(causeLabel('new_factor'), 'new factor');
    assert.equal(formatSigned(0), '0 µs');
  });

  it('summarizes the ranks late most often', () => {
    assert.deepEqual(lateRanks(view, 1), [
      { rank: 0, worker: 'rank0', text: 'late in 1 step, 230 µs in total' },
    ]);
  });
});

describe('misc', () => {
  it('flattens GPUs per rank', () => {
    const device = {
      id: 3,
      label: 'GPU 3 · A100',
      vendor: 'nvidia',
      kind: 'cuda',
      short_label: 'GPU 3',
      name: 'A100',
      memory_bytes: 1024,
      compute_capability: '8.0',
      utilization_pct: 50,
      sm_efficiency_pct: null,
      achieved_occupancy_pct: null,
      tensor_core_pct: null,
      matrix_core_unknown_pct: null,
      matrix_core_name: 'Tensor Cores',
      kernel_time_us: 10,
    };
    const gpus = gpuRows({ ...view, ranks: [{ ...rank0, devices: [device] }, rank1] });
    assert.deepEqual(
      gpus.map((g) => [g.id, g.rank, g.worker]),
      [['0-3', 0, 'rank0']],
    );
    assert.deepEqual(gpuRows(view), []);
  });

  it('reports loading progress', () => {
    assert.deepEqual(rankProgress(37, 128), {
      done: 37,
      total: 128,
      percent: (37 / 128) * 100,
      text: 'Summarized 37 of 128 ranks',
    });
    assert.equal(rankProgress(0, 0).percent, null);
  });

  it('formats text', () => {
    assert.equal(formatBandwidth(null), '—');
    assert.equal(formatBandwidth(0.573), '0.573 GB/s');
    assert.equal(formatBandwidth(18.138), '18.1 GB/s');
    assert.equal(formatBandwidth(123.4), '123 GB/s');
    assert.equal(plural(1, 'rank'), '1 rank');
    assert.equal(plural(2, 'rank'), '2 ranks');
  });
});
