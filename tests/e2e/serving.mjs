// Real-browser test of the Serving page: a real TensorBoard on a logdir holding the
// corpus's MI300X serving traces (vLLM piecewise graphs, SGLang prefill, SGLang's decode
// capture), the serving loop recorded on CPU by two tensor-parallel ranks
// (tests/data/serving/tp2) and a training trace; chromium driven by playwright-core. The
// page is checked against the `serving` route: the strip's boxes, the per-phase table, the
// iteration table; hovering the strip says the iteration, clicking it opens the trace
// view at it; a capture trace and a training trace say why they have no iterations; the
// Diff's serving section against the same SGLang trace with its GPU work twice as fast.
// Skipped without ../shared/corpus. Screenshots (1280 and 1920 px wide):
// test-output/e2e/serving/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';

import * as h from './harness.mjs';
import { CORPUS, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'serving');
const WAIT_MS = 90_000;
const INFERENCE = path.join(CORPUS, 'tracelens/tests/traces/inference');
const VLLM = path.join(INFERENCE, 'vllm_prefilldecode_piecewise/graph_execution.json.gz');
const SGLANG = path.join(INFERENCE, 'sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz');
const CAPTURE = path.join(INFERENCE, 'sglang_decode/capture_traces/bs_32_rank0.json.gz');
const TRAIN = path.join(
  CORPUS,
  'pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz',
);
const TP2 = path.join(REPO, 'tests/data/serving/tp2');
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

const api = (route, params = {}) =>
  h.routeJson(env, route, params, { fetchMs: 30_000, waitMs: WAIT_MS, everyMs: 250 });
const frame = () => h.pluginFrame(env.page);

/** The SGLang trace on a GPU twice as fast: its device events' times halved from the first. */
async function twiceAsFast(dest) {
  const doc = JSON.parse(zlib.gunzipSync(readFileSync(SGLANG)).toString('utf8'));
  const device = new Set(['kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_user_annotation']);
  const gpu = doc.traceEvents.filter((e) => device.has(e.cat));
  const first = Math.min(...gpu.map((e) => e.ts));
  for (const e of gpu) {
    e.ts = first + (e.ts - first) / 2;
    e.dur = e.dur / 2;
  }
  await mkdir(path.dirname(dest), { recursive: true });
  writeFileSync(dest, zlib.gzipSync(JSON.stringify(doc)));
}

async function openServing(key) {
  await env.page.goto(`${env.base}${h.stateHash({ ...key, view: 'serving' })}`);
  await frame()
    .locator('[data-testid="serving"][data-ready="true"]')
    .waitFor({ state: 'visible', timeout: WAIT_MS });
}

/** The iteration table's rows in view: data-iteration and each cell's data-value. */
async function tableRows() {
  return frame()
    .locator('[data-testid="serving-iteration-table"]')
    .evaluate(async (el) => {
      const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
      await tick();
      await tick();
      return Array.from(el.querySelectorAll('.ks-twindow [role="row"]'), (row) => {
        const cells = {};
        for (const cell of row.querySelectorAll('[data-col]'))
          cells[cell.dataset.col] = cell.dataset.value;
        return { iteration: Number(row.dataset.iteration), phase: row.dataset.phase, cells };
      });
    });
}

/** Hovers the strip over iteration `i` (the middle of its box); the tooltip's lines. */
async function hoverIteration(data, i) {
  const strip = frame().locator('[data-testid="serving-strip"] canvas');
  const box = await strip.boundingBox();
  const [lo, hi] = data.window_us;
  const it = data.iterations[i];
  const mid = (it.start_us - lo + it.dur_us / 2) / (hi - lo);
  await env.page.mouse.move(box.x + Math.min(mid * box.width, box.width - 2), box.y + 12);
  const tip = frame().locator('[data-testid="serving-strip-tip"]');
  await tip.waitFor({ state: 'visible' });
  return (await tip.innerText()).split('\n');
}

describe('Serving page in TensorBoard', { timeout: 900_000, skip: !existsSync(VLLM) }, () => {
  before(async () => {
    await h.startEnv(env, {
      shots: SHOTS,
      tmpPrefix: 'kinetoscope-e2e-serving-',
      log: path.join(OUT, 'tensorboard-serving.log'),
      viewport: { width: 1280, height: 1000 },
      waitMs: WAIT_MS,
      populate: async (logdir) => {
        await h.copyTrace(VLLM, path.join(logdir, 'vllm'), 'worker0.1.pt.trace.json.gz');
        await h.copyTrace(SGLANG, path.join(logdir, 'sglang'), 'worker0.1.pt.trace.json.gz');
        await twiceAsFast(path.join(logdir, 'sglang_fast', 'worker0.1.pt.trace.json.gz'));
        await h.copyTrace(CAPTURE, path.join(logdir, 'capture'), 'worker0.1.pt.trace.json.gz');
        await h.copyTrace(TRAIN, path.join(logdir, 'train'), 'worker0.1.pt.trace.json.gz');
        for (const rank of [0, 1]) {
          const file = `rank${rank}.pt.trace.json.gz`;
          await h.copyTrace(path.join(TP2, file), path.join(logdir, 'tp2'), file);
        }
      },
    });
    env.page = await env.context.newPage();
    h.watchErrors(env.page, env.errors);
  });

  after(async () => {
    await h.stopEnv(env);
  });

  test('a vLLM iteration: strip, phases and table hold the route’s numbers', async () => {
    const key = { run: 'vllm', worker: 'worker0' };
    const data = await api('serving', key);
    assert.equal(data.iteration_count, 1);
    const status = await api('status', key);
    assert.ok(status.views.includes('serving'), 'status lists the Serving page');

    await openServing(key);
    await shoot(env.page, 'vllm-1280');
    const views = await frame()
      .locator('[data-testid="view-select"] option')
      .evaluateAll((options) => options.map((o) => o.value));
    assert.ok(views.indexOf('serving') > views.indexOf('modules'), `${views}`);
    const strip = frame().locator('[data-testid="serving-strip"]');
    assert.equal(await strip.getAttribute('data-boxes'), '1');
    const phase = frame().locator('[data-testid="serving-phase-row"]');
    assert.equal(await phase.count(), 1);
    assert.equal(await phase.getAttribute('data-phase'), 'mixed');
    const [row] = await tableRows();
    const it = data.iterations[0];
    assert.equal(row.phase, 'mixed');
    for (const col of [
      'dur_us',
      'gpu_busy_us',
      'scheduling_us',
      'queue_us',
      'tokens',
      'requests',
    ]) {
      assert.equal(Number(row.cells[col]), it[col], col);
    }
    assert.equal(
      await frame().locator('[data-testid="serving-count"] .ks-tile-value').innerText(),
      '1',
    );
    h.assertNoErrors(env.errors);
  });

  test('tensor-parallel ranks: seven iterations, hover and click to the trace view', async () => {
    const key = { run: 'tp2', worker: 'rank1' };
    const data = await api('serving', key);
    assert.equal(data.iteration_count, 7);
    await openServing(key);
    assert.equal(
      await frame().locator('[data-testid="serving-strip"]').getAttribute('data-boxes'),
      '7',
    );
    const phases = await frame()
      .locator('[data-testid="serving-phase-row"]')
      .evaluateAll((rows) => rows.map((r) => [r.dataset.phase, Number(r.dataset.count)]));
    assert.deepEqual(
      phases,
      Object.entries(data.phases).map(([p, s]) => [p, s.count]),
    );
    assert.equal(
      await frame().locator('[data-testid="serving-rank"] .ks-tile-value').innerText(),
      '1 of 2',
    );
    const rows = await tableRows();
    assert.deepEqual(
      rows.map((r) => [r.iteration, r.phase, Number(r.cells.collective_us)]),
      data.iterations.map((i) => [i.index, i.phase, i.collective_us]),
    );
    assert.equal((await hoverIteration(data, 4))[0], 'Iteration 4 · Mixed');
    await shoot(env.page, 'tp2-hover-1280');

    // A click on the hovered box opens the trace view at that iteration.
    assert.equal((await hoverIteration(data, 4))[0], 'Iteration 4 · Mixed');
    const link = frame().locator('[data-testid="serving-strip-link"]');
    assert.equal(await link.getAttribute('data-iteration'), '4');
    const href = new URL(await link.getAttribute('href'));
    const linked = {};
    for (const item of href.hash.slice(1).split('&')) {
      const [k, v] = item.split('=').map(decodeURIComponent);
      if (v !== undefined) linked[k.replace('p.kinetoscope.', '')] = v;
    }
    const it = data.iterations[4];
    assert.ok(Number(linked.t0) <= it.start_us && Number(linked.t1) >= it.start_us + it.dur_us);
    await link.click();
    await frame()
      .locator('[data-testid="trace"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    await h.sleep(500);
    await shoot(env.page, 'tp2-trace-at-iteration-4');
    // The trace view opened on the link's window: it took (and cleared) the plain t0/t1.
    const state = await h.waitUntil('the trace view to take the window', async () => {
      const s = h.readStateHash(env.page);
      return s.view === 'trace' && s.t0 === undefined ? s : null;
    });
    assert.equal(state.worker, 'rank1');
    h.assertNoErrors(env.errors);
  });

  test('the page at 1920 px', async () => {
    await env.page.setViewportSize({ width: 1920, height: 1080 });
    await openServing({ run: 'tp2', worker: 'rank0' });
    const width = Number(
      await frame().locator('[data-testid="serving-strip"]').getAttribute('data-width'),
    );
    assert.ok(width > 1300, `the strip uses the width (${width} px)`);
    await shoot(env.page, 'tp2-1920');
    await openServing({ run: 'sglang', worker: 'worker0' });
    await shoot(env.page, 'sglang-1920');
    await env.page.setViewportSize({ width: 1280, height: 1000 });
    h.assertNoErrors(env.errors);
  });

  test('a capture trace and a training trace say why they have no iterations', async () => {
    const capture = await api('serving', { run: 'capture', worker: 'worker0' });
    await openServing({ run: 'capture', worker: 'worker0' });
    const reason = await frame().locator('[data-testid="serving-reason"]').innerText();
    assert.ok(reason.includes(capture.reason), reason);
    assert.ok(reason.includes('Graphs captured: batch 32 DECODE'), reason);
    await shoot(env.page, 'capture');

    const status = await api('status', { run: 'train', worker: 'worker0' });
    assert.ok(!status.views.includes('serving'), 'a training trace has no Serving page');
    await env.page.goto(
      `${env.base}${h.stateHash({ run: 'train', worker: 'worker0', view: 'serving' })}`,
    );
    const notice = frame().getByText('records no serving engine marker');
    await notice.waitFor({ state: 'visible', timeout: WAIT_MS });
    await shoot(env.page, 'train-absent');
    h.assertNoErrors(env.errors);
  });

  test('the Diff compares the serving phases of two runs', async () => {
    const key = { run: 'sglang', worker: 'worker0' };
    const target = { target_run: 'sglang_fast', target_worker: 'worker0' };
    const data = await api('diff', { ...key, ...target });
    const [prefill] = data.serving;
    assert.equal(prefill.phase, 'prefill');
    assert.ok(prefill.gpu_busy_median_us.target < prefill.gpu_busy_median_us.base);
    await env.page.goto(`${env.base}${h.stateHash({ ...key, ...target, view: 'diff' })}`);
    await frame()
      .locator('[data-testid="diff"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const section = frame().locator('[data-testid="diff-serving"]');
    await section.scrollIntoViewIfNeeded();
    const delta = await section
      .locator(
        '[role="row"][data-key="serving.prefill.gpu_busy_median_us"] [data-col="value.delta"]',
      )
      .getAttribute('data-value');
    assert.equal(Number(delta), prefill.gpu_busy_median_us.delta);
    await shoot(env.page, 'diff-serving');
    h.assertNoErrors(env.errors);
  });
});
