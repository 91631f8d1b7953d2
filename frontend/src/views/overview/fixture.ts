// The `overview` example of docs/http_api.md, for unit tests.

import type { OverviewResponse } from '../../api/types';

export const OVERVIEW_EXAMPLE: OverviewResponse = {
  steps: [
    {
      name: 'ProfilerStep#5',
      number: 5,
      start_us: 1623142624004.0,
      end_us: 1623142811952.0,
      duration_us: 187948.0,
      breakdown_us: {
        kernel: 98598.0,
        memcpy: 1941.0,
        memset: 90.0,
        communication: 0.0,
        runtime: 2796.0,
        dataloader: 69317.0,
        cpu_exec: 14091.0,
        other: 1115.0,
      },
    },
  ],
  breakdown_us: {
    kernel: 591532.0,
    memcpy: 11492.0,
    memset: 534.0,
    communication: 0.0,
    runtime: 17445.0,
    dataloader: 355571.0,
    cpu_exec: 82045.0,
    other: 6934.0,
  },
  step_count: 6,
  average_step_us: 177592.2,
  average_breakdown_us: {
    kernel: 98588.7,
    memcpy: 1915.3,
    memset: 89.0,
    communication: 0.0,
    runtime: 2907.5,
    dataloader: 59261.8,
    cpu_exec: 13674.2,
    other: 1155.7,
  },
  steps_source: 'profiler_steps',
  dropped_steps: [],
  device_type: 'GPU',
  device_word: 'GPU',
  devices: [
    {
      id: 0,
      label: 'GPU 0 · Tesla V100-DGXS-32GB',
      vendor: 'nvidia',
      kind: 'cuda',
      short_label: 'GPU 0',
      name: 'Tesla V100-DGXS-32GB',
      memory_bytes: 34084028416,
      compute_capability: '7.0',
      utilization_pct: 55.51,
      sm_efficiency_pct: 54.68,
      achieved_occupancy_pct: 49.13,
      tensor_core_pct: 0.0,
      matrix_core_unknown_pct: 0.0,
      matrix_core_name: 'Tensor Cores',
      kernel_time_us: 591532.0,
    },
  ],
  recommendations: [
    {
      id: 'dataloader',
      severity: 'warning',
      title: 'Input loading takes 33.4 % of step time',
      message:
        'DataLoader ranges cover 33.4 % of the step time. Set num_workers on the DataLoader to load data in worker processes.',
      evidence: {
        metric: 'dataloader_share_pct',
        value: 33.4,
        threshold: 5.0,
        steps: ['ProfilerStep#5', 'ProfilerStep#6'],
        time_us: 355571.0,
      },
      link: { view: 'overview', anchor: 'breakdown' },
      docs_url: 'https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading',
    },
  ],
  left_out_events: 0,
};
