// Real-browser test of the GPU-idle analyses in the UI: a real TensorBoard on a logdir
// holding the corpus V100 ResNet-50 trace (six steps, every idle class present), HTA's
// five-stream sample and an HTA CPU-only trace, Debian's chromium driven by playwright-core. The Overview's "Why is the
// GPU idle?" section is checked against the `gpu_idle` route's JSON, an idle interval's
// link opens the trace view around it, and the trace view lists and draws the stream's
// queue-length counter track. Skipped without ../shared/corpus. Run with `npm run e2e`.
// Screenshots (1280 px wide): test-output/e2e/gpu_idle/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, sleep, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'gpu_idle');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 60_000;
const GPU_TRACE = path.join(
  CORPUS,
  'pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz',
);
const CPU_TRACE = path.join(
  CORPUS,
  'hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz',
);
/** HTA's sample: five streams on one GPU, two steps. */
const STREAMS_TRACE = path.join(CORPUS, 'hta/tests/data/trace_filter/sampled_rank-0.json.gz');
const GPU = { run: 'resnet50', worker: 'worker0', span: '1' };
const STREAMS = { run: 'streams', worker: 'worker0', span: '1' };
const CPU = { run: 'cpu_only', worker: 'worker0', span: '1' };
const CLASSES = ['host_wait', 'kernel_wait', 'other'];
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

function api(route, params) {
  return h.routeJson(env, route, params);
}

function frame() {
  return h.pluginFrame(env.page);
}

function hashOf(state) {
  const items = [PLUGIN, ...Object.entries(state).map(([k, v]) => `${P}${k}=${v}`)];
  return `#${items.map((i) => i.split('=').map(encodeURIComponent).join('=')).join('&')}`;
}

/** Opens the Overview of a worker-span and waits for its idle section to settle. */
async function openIdleSection(key) {
  await env.page.goto(`${env.base}${hashOf({ ...key, view: 'overview' })}`);
  const idle = frame().locator('[data-testid="overview-gpu-idle"]');
  await idle.waitFor({ state: 'visible', timeout: WAIT_MS });
  await waitUntil('the idle section to load', async () => {
    const state = await idle.getAttribute('data-state');
    return state !== 'loading' ? state : null;
  });
  return idle;
}

/** The rows of a table (its body, or its footer), each row's cells' data-value by column;
 *  the body is scrolled through (it is virtual) and its rows kept in order by `key`. */
async function tableRows(testid, { footer = false, key = null } = {}) {
  return frame()
    .locator(`[data-testid="${testid}"]`)
    .evaluate(
      async (el, [wantFooter, keyCol]) => {
        const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
        const read = () =>
          Array.from(el.querySelectorAll('[role="row"]'))
            .filter((row) => row.hasAttribute('data-total') === wantFooter)
            .filter((row) => row.querySelector('[data-col]'))
            .map((row) => {
              const cells = {};
              for (const cell of row.querySelectorAll('[data-col]'))
                cells[cell.dataset.col] = cell.dataset.value;
              return cells;
            });
        await tick();
        await tick();
        if (!keyCol) return read();
        const viewport = el.querySelector('.ks-tviewport');
        const seen = new Map();
        for (let top = 0; ; top += viewport.clientHeight / 2) {
          viewport.scrollTop = top;
          await tick();
          await tick();
          for (const row of read()) seen.set(row[keyCol], row);
          if (top >= viewport.scrollHeight) break;
        }
        viewport.scrollTop = 0;
        return [...seen.values()].sort((a, b) => Number(a[keyCol]) - Number(b[keyCol]));
      },
      [footer, key],
    );
}

/** The trace view's visible window (absolute µs) once it has drawn. */
async function traceWindowShown() {
  const timeline = frame().locator('[data-testid="trace-timeline"]');
  await timeline.waitFor({ state: 'visible', timeout: WAIT_MS });
  return waitUntil('the timeline to settle', async () => {
    const ds = await timeline.evaluate((el) => ({ ...el.dataset }));
    return ds.pending === '0' && Number(ds.responses) > 0
      ? { t0: Number(ds.t0), t1: Number(ds.t1), width: Number(ds.width) }
      : null;
  });
}

/** Opens the Overview of `key`, screenshots its idle section (a page tall enough for all
 *  of it) and checks every number it shows against the route's answer `data`. */
async function assertSectionMatches(key, data, shot) {
  const idle = await openIdleSection(key);
  assert.equal(await idle.getAttribute('data-state'), 'ready');
  await env.page.setViewportSize({ width: 1280, height: 3000 });
  await idle.evaluate((el) => el.scrollIntoView());
  await sleep(500); // the chart's entry animation
  await shoot(env.page, shot);
  await env.page.setViewportSize({ width: 1280, height: 1000 });
  for (const device of data.devices) {
    const d = device.device;
    // Totals: busy and each class, to the nanosecond.
    for (const key of ['busy', ...CLASSES]) {
      const want = key === 'busy' ? device.total.busy_ns : device.total[`${key}_ns`];
      const item = frame().locator(`[data-testid="idle-total-${d}-${key}"]`);
      assert.equal(Number(await item.getAttribute('data-value')), want, `total ${key}`);
    }
    const headline = await frame().locator(`[data-testid="idle-headline-${d}"]`).innerText();
    assert.ok(headline.includes(`${(device.total.idle_share * 100).toFixed(2)} %`), headline);
    // One row per step, the classes' ns as the route's; the footer is the total.
    const rows = await tableRows(`idle-steps-${d}`);
    assert.equal(rows.length, data.steps.length);
    rows.forEach((row, i) => {
      for (const key of ['step_ns', 'busy_ns', 'idle_ns', ...CLASSES.map((c) => `${c}_ns`)])
        assert.equal(Number(row[key]), device.per_step[i][key], `step ${i} ${key}`);
    });
    const [total] = await tableRows(`idle-steps-${d}`, { footer: true });
    for (const c of CLASSES) assert.equal(Number(total[`${c}_ns`]), device.total[`${c}_ns`]);
    const streams = await tableRows(`idle-streams-${d}`);
    assert.deepEqual(
      streams.map((s) => [Number(s.max_length), Number(s.empty_ns)]),
      device.streams.map((s) => [s.queue.max_length, s.queue.empty_ns]),
    );
    // The chart drew something.
    const chart = frame().locator(`[data-testid="idle-chart-${d}"] canvas`).first();
    assert.ok((await chart.boundingBox()).height > 100, 'the idle chart has a size');
  }
  // The longest intervals and the launch-delay outliers, in the route's order.
  const intervals = await tableRows('idle-intervals', { key: 'rank' });
  assert.deepEqual(
    intervals.map((r) => [r.idle_class, Number(r.duration_ns), Number(r.trace)]),
    data.top_intervals.map((i) => [i.idle_class, i.duration_ns, i.start_us]),
  );
  const outliers = await tableRows('idle-launch-outliers');
  const longest = Math.max(...data.launch_delay.outliers.map((o) => o.delay_ns));
  assert.equal(Number(outliers[0].delay_ns), longest);
  return intervals;
}

describe(
  'GPU idle analyses in TensorBoard',
  { timeout: 900_000, skip: !existsSync(GPU_TRACE) },
  () => {
    before(async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-gpu-idle-',
        log: path.join(OUT, 'tensorboard-gpu-idle.log'),
        viewport: { width: 1280, height: 1000 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          for (const [key, file] of [
            [GPU, GPU_TRACE],
            [STREAMS, STREAMS_TRACE],
            [CPU, CPU_TRACE],
          ]) {
            await h.copyTrace(file, path.join(logdir, key.run), `${key.worker}.1.pt.trace.json.gz`);
          }
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    });

    after(async () => {
      await h.stopEnv(env);
    });

    test('the Overview shows the three idle classes with the route’s numbers', async () => {
      const data = await api('gpu_idle', GPU);
      assert.ok(data.available, data.reason);
      const intervals = await assertSectionMatches(GPU, data, 'overview-gpu-idle');
      // Every class has time on this trace, so each shows a non-zero total.
      const device = data.devices[0];
      for (const c of CLASSES) assert.ok(device.total[`${c}_ns`] > 0, `${c} on the trace`);

      assert.ok(
        intervals.some((r) => r.idle_class === 'kernel_wait'),
        'kernel waits listed',
      );
      h.assertNoErrors(env.errors);
    });

    test('a GPU with five streams: a row per stream with its queue', async () => {
      const data = await api('gpu_idle', STREAMS);
      assert.ok(data.available, data.reason);
      assert.ok(data.devices[0].streams.length >= 2, 'several streams');
      await assertSectionMatches(STREAMS, data, 'overview-gpu-idle-streams');
      h.assertNoErrors(env.errors);
    });

    test('an idle interval’s link opens the trace view around it', async () => {
      const data = await api('gpu_idle', GPU);
      const first = data.top_intervals[0];
      await openIdleSection(GPU);
      const link = frame()
        .locator('[data-testid="idle-intervals"] [data-testid="idle-trace-link"]')
        .first();
      const hash = decodeURIComponent(new URL(await link.getAttribute('href')).hash);
      assert.ok(hash.includes(`${P}view=trace`), hash);
      await link.click();
      await frame()
        .locator(`[data-testid="trace"][data-ready="true"][data-run="${GPU.run}"]`)
        .waitFor({ state: 'visible', timeout: 300_000 });
      const shown = await traceWindowShown();
      // The gap is inside the window, which is at most twice as long (plus a margin).
      const length = first.end_us - first.start_us;
      assert.ok(shown.t0 <= first.start_us + 1e-3, `t0 ${shown.t0} > ${first.start_us}`);
      assert.ok(shown.t1 >= first.end_us - 1e-3, `t1 ${shown.t1} < ${first.end_us}`);
      assert.ok(shown.t1 - shown.t0 <= 2 * length + 2.01, `window ${shown.t1 - shown.t0} µs`);
      await shoot(env.page, 'trace-at-interval');
      h.assertNoErrors(env.errors);
    });

    test('the trace view lists and draws the stream’s queue length', async () => {
      const tracks = await api('tracks', GPU);
      const queue = tracks.tracks.find((t) => /^gpu\d+\.stream\d+\.queue$/.test(t.id));
      assert.ok(queue, `no queue track in ${tracks.tracks.map((t) => t.id)}`);
      assert.equal(queue.kind, 'counter');
      assert.equal(queue.counter.metric, 'gpu_queue_length');
      // The busiest stretch of the queue: a window around its first sample at the maximum.
      const whole = await api('trace', { ...GPU, tracks: queue.id, width: 2000 });
      const series = whole.tracks[0].counter;
      const at = series.value.indexOf(Math.max(...series.value));
      const t0 = series.start[at] - 200;
      const t1 = series.start[at] + 200;
      // A fresh page: the trace view reads t0/t1 when it opens.
      await env.page.close();
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
      await env.page.goto(
        `${env.base}${hashOf({ ...GPU, view: 'trace', t0: String(t0), t1: String(t1) })}`,
      );
      const label = frame().locator(`[data-testid="trace-track-label"][data-track="${queue.id}"]`);
      await label.waitFor({ state: 'attached', timeout: 300_000 });
      assert.match(await label.innerText(), /queue length/);
      await label.scrollIntoViewIfNeeded();
      const shown = await traceWindowShown();
      assert.ok(shown.t0 <= t0 + 1 && shown.t1 >= t1 - 1, `window ${shown.t0}..${shown.t1}`);
      assert.ok(shown.t1 - shown.t0 < 1000, 'the window asked for, not the whole trace');
      // Hover the track where the route says the queue is at its longest in this window.
      const win = await api('trace', {
        ...GPU,
        tracks: queue.id,
        t0: shown.t0,
        t1: shown.t1,
        width: shown.width,
      });
      const c = win.tracks[0].counter;
      const i = c.value.indexOf(Math.max(...c.value));
      const end = c.start[i + 1] ?? shown.t1;
      const mid = (Math.max(c.start[i], shown.t0) + Math.min(end, shown.t1)) / 2;
      const box = await frame().locator('[data-testid="trace-canvas"]').boundingBox();
      const lb = await label.boundingBox();
      const x = box.x + ((mid - shown.t0) / (shown.t1 - shown.t0)) * shown.width;
      await env.page.mouse.move(x, lb.y + lb.height / 2);
      const tip = frame().locator('.ks-tl-tooltip');
      await tip.waitFor({ state: 'visible' });
      const text = await tip.innerText();
      assert.ok(text.includes(queue.label), text);
      assert.ok(text.split('\n').includes(String(c.value[i])), `${text} lacks ${c.value[i]}`);
      assert.ok(c.value[i] >= 1, 'the queue holds work there');
      // The track's band of the canvas is drawn (more than the background's colour).
      const colours = await frame()
        .locator('[data-testid="trace-canvas"]')
        .evaluate(
          (canvas, y) => {
            const scale = canvas.height / canvas.getBoundingClientRect().height;
            const row = Math.round(y * scale);
            const data = canvas.getContext('2d').getImageData(0, row, canvas.width, 1).data;
            const seen = new Set();
            for (let p = 0; p < data.length; p += 4)
              seen.add(`${data[p]},${data[p + 1]},${data[p + 2]}`);
            return seen.size;
          },
          lb.y + lb.height * 0.75 - box.y,
        );
      assert.ok(colours >= 2, `the queue track's band looks empty (${colours} colours)`);
      await shoot(env.page, 'trace-queue-track');
      h.assertNoErrors(env.errors);
    });

    test('a CPU-only trace shows why there is no analysis, not zeros', async () => {
      const data = await api('gpu_idle', CPU);
      assert.equal(data.available, false);
      const idle = await openIdleSection(CPU);
      assert.equal(await idle.getAttribute('data-state'), 'unavailable');
      const text = await frame().locator('[data-testid="idle-unavailable"]').innerText();
      assert.ok(text.includes(data.reason), text);
      assert.equal(await frame().locator('[data-testid^="idle-steps-"]').count(), 0);
      h.assertNoErrors(env.errors);
    });
  },
);
