// Real-browser test of graph replays in the Kernel view: a real TensorBoard on a logdir
// holding the H100 CUDA-graph replay trace with its capture_traces/ folder (tests/data/h100),
// Debian's chromium driven by playwright-core. The capture folder is no run of its own; the
// Kernel view grouped by op shows the capturing ops, marks the replayed rows and says how
// much of the replayed time was matched, as the `kernels` route does, and where each
// replayed kernel was captured (its capture's Python frames). The Operator view
// badges the replayed rows (ops called only in the capture: 0 calls) and says what they
// are; a replay with no capture profiled (compiled_cudagraphs) is listed with its reason.
// Run with `npm run e2e` (builds the frontend first).
// Screenshots: test-output/e2e/graph_replay/NN-<state>.png.

import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'graph_replay');
const WAIT_MS = 60_000;
const SOURCE = path.join(REPO, 'tests', 'data', 'h100', 'cudagraph_replay');
const KEY = { run: 'cudagraph_replay', worker: 'gpu0' };
const NO_CAPTURE = path.join(REPO, 'tests', 'data', 'h100', 'compiled_cudagraphs');
const NO_CAPTURE_KEY = { run: 'compiled_cudagraphs', worker: 'gpu0' };
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

// The route's JSON once it is ready; 30 s a request, 60 s in all (waitUntil's bounds).
const api = (route, params = {}) =>
  h.routeJson(env, route, params, { fetchMs: 30_000, waitMs: 60_000, everyMs: 250 });

function frame() {
  return h.pluginFrame(env.page);
}

describe('Graph replays in the Kernel view', { timeout: 600_000 }, () => {
  before(async () => {
    await h.startEnv(env, {
      shots: SHOTS,
      tmpPrefix: 'kinetoscope-e2e-graph-replay-',
      log: path.join(OUT, 'tensorboard-graph-replay.log'),
      viewport: { width: 1440, height: 1400 },
      waitMs: WAIT_MS,
      populate: async (logdir) => {
        await cp(SOURCE, path.join(logdir, KEY.run), { recursive: true });
        await cp(NO_CAPTURE, path.join(logdir, NO_CAPTURE_KEY.run), { recursive: true });
      },
    });
    env.page = await env.context.newPage();
    h.watchErrors(env.page, env.errors);
  });

  after(async () => {
    await h.stopEnv(env);
  });

  test('replayed kernels show their capturing op, marked replayed', async () => {
    const runs = (await api('runs')).runs;
    assert.deepEqual(
      runs.map((r) => r.name).sort(),
      [NO_CAPTURE_KEY.run, KEY.run],
      'capture_traces/ is not a run',
    );
    const data = await api('kernels', { ...KEY, group_by: 'op' });
    assert.equal(data.graph_replay.matched, data.graph_replay.kernels);
    assert.ok(data.rows.every((r) => r.replayed && r.op_name && r.op_name.startsWith('aten::')));

    await env.page.goto(
      `${env.base}${h.stateHash({ ...KEY, view: 'kernels', 'kernels.group_by': 'op' })}`,
    );
    await frame()
      .locator('[data-testid="kernels"][data-ready="true"][data-busy="false"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const tile = frame().locator('[data-testid="kernels-graph-replay"]');
    await tile.waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.ok((await tile.innerText()).includes(data.graph_replay.note));
    // The tile says what its percentage is of.
    assert.match(
      await tile.innerText(),
      /Replayed time matched to its op[\s\S]*of the [\d,]+ graph-replayed kernels’ time, found under the op that captured them/,
    );
    const table = frame().locator('[data-testid="kernel-table"]');
    const shownOps = await table.evaluate((el) =>
      Array.from(el.querySelectorAll('[role="row"][data-op]'), (row) => row.dataset.op),
    );
    assert.ok(shownOps.length > 0);
    const wanted = new Set(data.rows.map((r) => r.op_name));
    assert.ok(
      shownOps.every((op) => wanted.has(op)),
      shownOps.join(', '),
    );
    assert.ok((await table.innerText()).includes('replayed'));
    // Each replayed row names the code that captured it (the capture's Python frames).
    assert.ok(data.rows.every((r) => r.captured_source?.length > 0));
    const captured = table.locator('[data-testid="kernel-captured-link"]');
    assert.ok((await captured.count()) > 0);
    const first = data.rows[0].captured_source[0];
    assert.ok(
      (await table.innerText()).includes(`${first.filename}:${first.line}`),
      `${first.filename}:${first.line}`,
    );
    await shoot(env.page, 'kernels-by-op');
    h.assertNoErrors(env.errors);
  });

  test('the Operator view marks replayed rows and says what they are', async () => {
    const ops = await api('operators', { ...KEY, group_by: 'name' });
    const replayed = ops.rows.filter((r) => r.replayed_us > 0);
    assert.ok(replayed.some((r) => r.calls === 0 && r.host_self_us === 0));
    assert.ok(ops.rows.every((r) => 'tflops' in r && 'bound' in r && 'replayed_us' in r));
    await env.page.goto(`${env.base}${h.stateHash({ ...KEY, view: 'operators' })}`);
    await frame()
      .locator('[data-testid="operators"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const note = frame().locator('[data-testid="operators-replayed-note"]');
    await note.waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.ok(
      (await note.innerText()).includes(
        'device time of kernels replayed from a CUDA/HIP graph captured by this op',
      ),
    );
    const badges = frame().locator('[data-testid="op-table"] [data-testid="op-replayed"]');
    assert.ok((await badges.count()) > 0);
    // The replayed rows say where their op captured the kernels (the capture's frames).
    assert.ok(replayed.some((r) => r.captured_at));
    const captured = frame().locator('[data-testid="op-table"] [data-testid="op-captured-link"]');
    assert.ok((await captured.count()) > 0);
    const roofline = frame().locator('[data-testid="op-roofline"]');
    const onChart = ops.rows.filter((r) => r.intensity > 0 && r.tflops > 0).length;
    assert.equal(await roofline.getAttribute('data-points'), String(onChart));
    await shoot(env.page, 'operators-replayed');
    h.assertNoErrors(env.errors);
  });

  test('a replay with no capture profiled is listed with its reason', async () => {
    const data = await api('kernels', { ...NO_CAPTURE_KEY, group_by: 'op' });
    assert.equal(data.graph_replay.matched, 0);
    assert.ok(data.graph_replay.unmatched.length > 0);
    await env.page.goto(
      `${env.base}${h.stateHash({ ...NO_CAPTURE_KEY, view: 'kernels', 'kernels.group_by': 'op' })}`,
    );
    await frame()
      .locator('[data-testid="kernels"][data-ready="true"][data-busy="false"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const note = frame().locator('[data-testid="kernels-unmatched-graphs"]');
    await note.waitFor({ state: 'visible', timeout: WAIT_MS });
    const items = frame().locator('[data-testid="kernels-unmatched-graph"]');
    assert.equal(await items.count(), Math.min(data.graph_replay.unmatched.length, 8));
    assert.ok((await note.innerText()).includes('capture not profiled'));
    await shoot(env.page, 'kernels-unmatched');
    h.assertNoErrors(env.errors);
  });
});
