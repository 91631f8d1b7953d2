import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { DeviceIdle, GpuIdleView, IdleBreakdown, LaunchOutlier } from '../../api/types';
import {
  causeLabel,
  classPercent,
  idleHeadline,
  idleHelp,
  idleSeries,
  idleStepRows,
  idleTotalRow,
  intervalRows,
  outlierRows,
  queueEmptyPercent,
  shortStepName,
  traceWindow,
} from './idle_model';

/** A breakdown as the route builds it: idle = the classes, shares of the step (4 digits). */
function breakdown(step: number, host: number, kernel: number, other: number): IdleBreakdown {
  const idle = host + kernel + other;
  const share = (part: number): number | null =>
    step > 0 ? Math.round((part / step) * 1e4) / 1e4 : null;
  return {
    step_ns: step,
    busy_ns: step - idle,
    idle_ns: idle,
    host_wait_ns: host,
    kernel_wait_ns: kernel,
    other_ns: other,
    idle_share: share(idle),
    host_wait_share: share(host),
    kernel_wait_share: share(kernel),
    other_share: share(other),
  };
}

const STEP_A = breakdown(1_000_000, 300_000, 50_000, 150_000);
const STEP_B = breakdown(3_000_000, 200_000, 0, 100_000);
const TOTAL = breakdown(4_000_000, 500_000, 50_000, 250_000);

const DEVICE: DeviceIdle = {
  device: 0,
  label: 'GPU 0 · NVIDIA H100 80GB HBM3',
  short_label: 'GPU 0',
  total: TOTAL,
  per_step: [STEP_A, STEP_B],
  streams: [
    {
      stream: 7,
      total: TOTAL,
      per_step: [STEP_A, STEP_B],
      queue: { max_length: 3, time_at_max_ns: 1000, empty_ns: 1_000_000 },
    },
  ],
};

function outlier(name: string, delay: number, start: number): LaunchOutlier {
  return {
    name,
    launch_name: 'cudaLaunchKernel',
    device: 0,
    stream: 7,
    start_us: start,
    launch_start_us: start - delay / 1000,
    delay_ns: delay,
    launch_call_ns: 4000,
  };
}

const VIEW: GpuIdleView = {
  available: true,
  reason: null,
  device_word: 'GPU',
  queued_times: 'not recorded',
  kernel_wait_threshold_ns: 30_000,
  steps: [
    { name: 'ProfilerStep#5', start_us: 100, end_us: 1100, duration_ns: 1_000_000 },
    { name: 'ProfilerStep#6', start_us: 1100, end_us: 4100, duration_ns: 3_000_000 },
  ],
  devices: [DEVICE],
  top_intervals: [
    {
      device: 0,
      stream: 7,
      step: 1,
      idle_class: 'host_wait',
      cause: 'launched_late',
      start_us: 2000,
      end_us: 2200,
      duration_ns: 200_000,
      next_name: 'gemm',
    },
    {
      device: 0,
      stream: null,
      step: 0,
      idle_class: 'other',
      cause: 'blocking_sync',
      start_us: 500,
      end_us: 600,
      duration_ns: 100_000,
      next_name: null,
    },
  ],
  launch_delay: {
    activities: 3,
    linked: 3,
    graph_kernels_after_first: 0,
    names: 2,
    rows: [],
    outliers: [outlier('a', 5000, 300), outlier('b', 9000, 200), outlier('c', 5000, 250)],
  },
};

describe('idle rows per step', () => {
  it('names each step and keeps the route’s numbers', () => {
    const rows = idleStepRows(VIEW, DEVICE);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.name, r.breakdown.host_wait_ns]),
      [
        ['step', 'ProfilerStep#5', 300_000],
        ['step', 'ProfilerStep#6', 200_000],
      ],
    );
    const total = idleTotalRow(DEVICE.total);
    assert.equal(total.kind, 'total');
    assert.equal(total.breakdown.idle_ns, 800_000);
  });

  it('takes the route’s shares as percentages, null staying null', () => {
    assert.equal(classPercent(STEP_A, 'host_wait'), 30);
    assert.equal(classPercent(STEP_A, 'idle'), 50);
    assert.equal(classPercent(breakdown(0, 0, 0, 0), 'other'), null);
  });
});

describe('idle chart series', () => {
  it('stacks busy and the three classes to 100 % of each step', () => {
    const series = idleSeries(DEVICE);
    assert.deepEqual(
      series.map((s) => s.key),
      ['busy', 'host_wait', 'kernel_wait', 'other'],
    );
    for (const step of [0, 1]) {
      const sum = series.reduce((acc, s) => acc + (s.data[step] ?? 0), 0);
      assert.ok(Math.abs(sum - 100) < 1e-9, `step ${step}: ${sum}`);
    }
    const host = series.find((s) => s.key === 'host_wait');
    assert.ok(host);
    assert.deepEqual(host.ns, [300_000, 200_000]);
    assert.ok(Math.abs((host.data[1] ?? 0) - 6.6667) < 1e-3);
  });

  it('draws an empty step as zeros', () => {
    const empty = { ...DEVICE, per_step: [breakdown(0, 0, 0, 0)] };
    assert.deepEqual(
      idleSeries(empty).map((s) => s.data),
      [[0], [0], [0], [0]],
    );
  });

  it('labels steps by their number', () => {
    assert.equal(shortStepName('ProfilerStep#12'), '12');
    assert.equal(shortStepName('step 3 (from markers)'), 'step 3 (from markers)');
  });
});

describe('links and top lists', () => {
  it('opens the trace view with the range in the middle half', () => {
    const { t0, t1 } = traceWindow(1000, 1200);
    assert.equal(Number(t0), 900);
    assert.equal(Number(t1), 1300);
    // A very short range still gets a visible margin.
    const tiny = traceWindow(1000.25, 1000.5);
    assert.ok(Number(tiny.t0) <= 999.25 && Number(tiny.t1) >= 1001.5);
    // Trace times keep nanoseconds, and no float noise beyond them.
    assert.equal(traceWindow(1419247332972.313, 1419247333430.849).t0, '1419247332743.045');
  });

  it('ranks the intervals in the route’s order with their step names', () => {
    const rows = intervalRows(VIEW, 10);
    assert.deepEqual(
      rows.map((r) => [r.rank, r.stepName, r.idle_class]),
      [
        [1, 'ProfilerStep#6', 'host_wait'],
        [2, 'ProfilerStep#5', 'other'],
      ],
    );
    assert.equal(intervalRows(VIEW, 1).length, 1);
  });

  it('lists the longest launch delays first, ties by time', () => {
    assert.deepEqual(
      outlierRows(VIEW, 10).map((r) => r.name),
      ['b', 'c', 'a'],
    );
    assert.equal(outlierRows(VIEW, 2).length, 2);
    assert.deepEqual(outlierRows({ ...VIEW, launch_delay: null }, 10), []);
  });
});

describe('idle texts', () => {
  it('names the largest class of a device', () => {
    assert.equal(idleHeadline(DEVICE), 'Idle 20.00 % of step time; mostly host wait (12.50 %).');
    const never = { ...DEVICE, total: breakdown(1000, 0, 0, 0) };
    assert.equal(idleHeadline(never), 'The GPU was never idle inside the steps.');
    assert.equal(idleHeadline(never, 'MTIA'), 'The MTIA was never idle inside the steps.');
    const none = { ...DEVICE, total: breakdown(0, 0, 0, 0) };
    assert.equal(idleHeadline(none), 'No step time on this device.');
  });

  it('explains the classes with the route’s threshold', () => {
    assert.match(idleHelp('kernel_wait', 30_000), /under 30 µs/);
    assert.match(idleHelp('host_wait', 30_000), /CPU had not launched/);
    assert.match(idleHelp('other', 30_000, 'MTIA'), /the MTIA waited longer/);
    assert.equal(causeLabel('blocking_sync'), 'blocking sync');
    assert.equal(causeLabel('some_new_cause'), 'some new cause');
  });

  it('gives a queue’s empty time as a share of step time', () => {
    const stream = DEVICE.streams[0];
    assert.ok(stream);
    assert.equal(queueEmptyPercent(stream), 25);
    assert.equal(queueEmptyPercent({ ...stream, total: breakdown(0, 0, 0, 0) }), null);
  });
});
