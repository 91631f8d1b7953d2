// A `distributed` response for unit tests: two ranks of a gloo job (numbers from the
// ddp_gloo sample, trimmed to two steps) plus one unreadable rank.

import type { DistributedRankStep, DistributedResponse } from '../../api/types';

function step(
  number: number,
  start: number,
  parts: [number, number, number, number],
  extra: [number, number, number, number],
): DistributedRankStep {
  const [computation, overlap, communication, other] = parts;
  const [dataloader, hostGap, wait, transfer] = extra;
  const duration = computation + overlap + communication + other;
  return {
    name: `ProfilerStep#${number}`,
    number,
    start_us: start,
    end_us: start + duration,
    duration_us: duration,
    computation_us: computation,
    overlap_us: overlap,
    communication_us: communication,
    other_us: other,
    dataloader_us: dataloader,
    host_gap_us: hostGap,
    sync_wait_us: wait,
    transfer_us: transfer,
    unmatched_us: 0,
  };
}

const r0steps = [
  step(2, 1000, [1294.58, 17.267, 1751.663, 5561.36], [489.39, 2458.722, 0, 1434.601]),
  step(3, 20000, [4473.924, 0, 1252.579, 1360.242], [384.083, 403.794, 0, 948.445]),
];
const r1steps = [
  step(2, 5000, [1942.326, 0, 4744.981, 2753.19], [433.877, 717.358, 229.858, 3251.696]),
  step(3, 30000, [1000, 8.262, 3000, 2000], [300, 500, 132.964, 2000]),
];

const sum = (steps: DistributedRankStep[], key: keyof DistributedRankStep): number =>
  steps.reduce((a, s) => a + (s[key] as number), 0);

function rank(r: number, steps: DistributedRankStep[]): DistributedResponse['ranks'][number] {
  return {
    rank: r,
    rank_source: 'distributedInfo',
    worker: `rank${r}`,
    span: '1',
    file: `rank${r}.1.pt.trace.json.gz`,
    host: 'vm',
    mode: 'cpu',
    steps_source: 'profiler_steps',
    step_count: steps.length,
    step_time_us: sum(steps, 'duration_us'),
    computation_us: sum(steps, 'computation_us'),
    overlap_us: sum(steps, 'overlap_us'),
    communication_us: sum(steps, 'communication_us'),
    other_us: sum(steps, 'other_us'),
    sync_wait_us: sum(steps, 'sync_wait_us'),
    transfer_us: sum(steps, 'transfer_us'),
    unmatched_collectives: 0,
    unmatched_us: 0,
    collectives: [
      {
        name: 'all_reduce',
        calls: 2,
        bytes: 1744464,
        total_us: sum(steps, 'sync_wait_us') + sum(steps, 'transfer_us'),
        avg_us: (sum(steps, 'sync_wait_us') + sum(steps, 'transfer_us')) / 2,
        sync_wait_us: sum(steps, 'sync_wait_us'),
        transfer_us: sum(steps, 'transfer_us'),
        unmatched_us: 0,
        algbw_gbps: 0.5,
        busbw_gbps: 0.5,
        group_size: 2,
        group_size_source: 'world_size',
      },
    ],
    steps,
    devices: [],
    partial: false,
    warnings: [],
  };
}

export const FIXTURE: DistributedResponse = {
  run: 'ddp_gloo',
  span: '1',
  state: 'ready',
  world_size: 3,
  backend: 'gloo',
  process_groups: [
    {
      name: '0',
      description: 'default_pg',
      backend_config: 'cpu:gloo,cuda:gloo',
      size: 3,
      ranks: [0, 1, 2],
    },
  ],
  mode: 'cpu',
  ranks_found: 2,
  ranks: [rank(0, r0steps), rank(1, r1steps)],
  collectives: [
    {
      name: 'all_reduce',
      calls: 4,
      bytes: 3488928,
      total_us: 8000,
      avg_us: 2000,
      sync_wait_us: 362.822,
      transfer_us: 7637.178,
      unmatched_us: 0,
      algbw_gbps: 0.573,
      busbw_gbps: 0.573,
      group_size: 2,
      group_size_source: 'world_size',
    },
    {
      name: 'broadcast',
      calls: 1,
      bytes: null,
      total_us: 10,
      avg_us: 10,
      sync_wait_us: 0,
      transfer_us: 10,
      unmatched_us: 0,
      algbw_gbps: null,
      busbw_gbps: null,
      group_size: 2,
      group_size_source: 'world_size',
    },
  ],
  steps: [
    {
      name: 'ProfilerStep#2',
      number: 2,
      ranks: 2,
      median_duration_us: 9032.684,
      max_duration_us: 9440.497,
      straggler: {
        rank: 0,
        worker: 'rank0',
        late_by_us: 229.858,
        measured: 'first_collective',
        cause: 'host_gap',
        cause_excess_us: 1741.363,
        cause_share_pct: 100,
        arrived_late_us: 0,
        entry_before_window: false,
        in_step_late_us: 229.858,
        explained_us: 229.858,
        unexplained_us: 0,
        excess_us: {
          computation: -630.479,
          dataloader: 55.513,
          host_gap: 1741.363,
          communication: -1817.096,
        },
        window: { worker: 'rank0', span: '1', start_us: 1000, end_us: 9624.87 },
      },
    },
    {
      name: 'ProfilerStep#3',
      number: 3,
      ranks: 2,
      median_duration_us: 6956.961,
      max_duration_us: 7086.745,
      straggler: {
        rank: 1,
        worker: 'rank1',
        late_by_us: 132.964,
        measured: 'first_collective',
        cause: 'unknown',
        cause_excess_us: 0,
        cause_share_pct: 0,
        arrived_late_us: 40,
        entry_before_window: true,
        in_step_late_us: 92.964,
        explained_us: 40,
        unexplained_us: 92.964,
        excess_us: { computation: -1, dataloader: -2, host_gap: 0, communication: -3 },
        window: { worker: 'rank1', span: '1', start_us: 30000, end_us: 36008.262 },
      },
    },
    {
      name: 'ProfilerStep#4',
      number: 4,
      ranks: 1,
      median_duration_us: 5000,
      max_duration_us: 5000,
      straggler: null,
    },
  ],
  recommendations: [
    {
      id: 'communication_wait',
      severity: 'warning',
      title: 'Communication takes 27.0 % of step time',
      message:
        'Communication covers 27.0 % of the step time (more than 10 %), and 61 % of it is waiting for other ranks to arrive.',
      evidence: {
        metric: 'communication_share_pct',
        value: 26.97,
        threshold: 10,
        steps: ['ProfilerStep#2'],
        time_us: 1919158,
        time_scope: 'mean per rank',
        sync_wait_pct: 61.33,
      },
      link: { view: 'distributed', anchor: 'stragglers' },
      docs_url: null,
    },
  ],
  stragglers: [
    { rank: 0, worker: 'rank0', steps_late: 1, late_by_us: 229.858 },
    { rank: 1, worker: 'rank1', steps_late: 1, late_by_us: 132.964 },
  ],
  groups: [
    {
      name: '0',
      description: 'default_pg',
      role: 'world',
      ranks: [0, 1, 2],
      ranks_found: 2,
      collectives: 4,
      p2p_ops: 0,
      transfer_us: 800,
      sync_us: 360,
      busbw_gbps: null,
      transfer_ratio: null,
      waits_for: 1,
      waits_for_us: 240,
      verdict: 'waits_for_rank',
      call: { type: 'all_reduce', seq: 3, rank: 1, start_us: 1500, end_us: 1900 },
    },
  ],
  slow_ranks: [1],
  slow_groups: [],
  links: [],
  clock_offsets: [],
  health: [],
  warnings: ['world size 3 but 2 rank traces found: waits are measured among the ranks found only'],
  errors: [
    {
      worker: 'rank2',
      span: '1',
      kind: 'empty',
      message: 'rank2.1.pt.trace.json: the file is empty',
      file: 'rank2.1.pt.trace.json',
      offset: null,
    },
  ],
};
