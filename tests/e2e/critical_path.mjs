// Real-browser test of the critical path and the what-if across the pages: a real
// TensorBoard on a logdir holding the recorded 2-rank gloo job (tests/data/whatif_gloo,
// its baseline) and a built 2-rank GPU job whose answers are worked out by hand
// (tests/critical_path_jobs.py: a kernel on the critical path of one rank only), chromium
// driven by playwright-core. Each page's numbers are checked against its route: the
// Overview's top gains, the Trace page's path highlight (one worker, then both ranks on
// one axis), the what-if panel of Operators and Kernels (a run of two workers: the ranks
// joined), and the Distributed page's path across ranks and its what-ifs.
//
// Same conventions as the other suites (harness.mjs): any console error, page error or
// 4xx/5xx of a plugin route fails. Screenshots at 1280 and 1920 px wide:
// test-output/e2e/critical_path/NN-<state>.png.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PYTHON, REPO, copyGlob } from './harness.mjs';

const SHOTS = path.join(REPO, 'test-output', 'e2e', 'critical_path');
const WAIT_MS = 120_000;
const GLOO = path.join(REPO, 'tests', 'data', 'whatif_gloo', 'baseline');
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();
const frame = () => h.pluginFrame(env.page);
const GLOO_KEY = { run: 'gloo', worker: 'rank0', span: '1' };
const GPU_KEY = { run: 'gpu_job', worker: 'rank0', span: '1' };

async function open(state, readySelector) {
  await env.page.goto(`${env.base}${h.stateHash(state)}`, { timeout: WAIT_MS });
  await frame().locator(readySelector).waitFor({ state: 'visible', timeout: WAIT_MS });
}

async function both(name) {
  for (const width of [1280, 1920]) {
    await env.page.setViewportSize({ width, height: 1100 });
    await h.sleep(300);
    await shoot(env.page, `${name}-${width}`);
  }
}

/** A job written by the test suite's builders: `call` of `module` (tests/), on `folder`. */
function writeBuiltJob(folder, module, call) {
  const code = [
    'import sys',
    'from pathlib import Path',
    "sys.path.insert(0, 'tests')",
    `import ${module}`,
    `${module}.${call}`,
  ].join('\n');
  const made = spawnSync(PYTHON, ['-c', code, folder], { cwd: REPO, encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
}

describe('Critical path and what-if in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-critpath-',
        log: path.join(REPO, 'test-output', 'e2e', 'tensorboard-critical_path.log'),
        viewport: { width: 1280, height: 1100 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          await copyGlob(GLOO, '.gz', path.join(logdir, 'gloo'));
          // The GPU job: two ranks, three steps of 770 µs.
          const gpuJob = 'one_rank_job(Path(sys.argv[1]))';
          writeBuiltJob(path.join(logdir, 'gpu_job'), 'critical_path_jobs', gpuJob);
          // 17 ranks: one more than the Overview re-times as one job on its own.
          const wideJob = 'rank_job(Path(sys.argv[1]), 17, steps=2, kernels_per_step=2)';
          writeBuiltJob(path.join(logdir, 'wide_job'), 'builders', wideJob);
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 600_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('the Overview ranks the changes worth most, across the run’s ranks', async () => {
    const route = await h.routeJson(env, 'run_top_gains', { run: 'gloo', span: '1' });
    await open({ ...GLOO_KEY, view: 'overview' }, '[data-testid="overview"][data-ready="true"]');
    const section = frame().locator('[data-testid="overview-gains"][data-state="ready"]');
    await section.waitFor({ state: 'visible', timeout: WAIT_MS });
    const best = route.gains[0];
    assert.equal(best.name, 'whatif::compute'); // rank 0's compute: the all_reduce waits for it
    assert.match(
      await section.locator('[data-testid="gains-best"]').innerText(),
      /whatif::compute/,
    );
    const first = section.locator('.ks-twindow .ks-tr').first();
    assert.match(await first.innerText(), /whatif::compute/);
    await section.scrollIntoViewIfNeeded();
    await both('overview-top-gains');
    h.assertNoErrors(env.errors);
  });

  test('a run of 17 ranks shows its trace’s gains and re-times the whole run when asked', async () => {
    const key = { run: 'wide_job', worker: 'rank0', span: '1' };
    await open({ ...key, view: 'overview' }, '[data-testid="overview"][data-ready="true"]');
    const section = frame().locator('[data-testid="overview-gains"]');
    await frame()
      .locator('[data-testid="overview-gains"][data-state="ready"][data-scope="span"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const ask = section.locator('[data-testid="gains-run"]');
    assert.match(await ask.innerText(), /17 ranks/);
    await ask.click();
    await frame()
      .locator('[data-testid="overview-gains"][data-state="ready"][data-scope="run"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const route = await h.routeJson(env, 'run_top_gains', { run: 'wide_job', span: '1' });
    assert.ok(route.gains.length > 0 && route.errors.length === 0);
    const best = await section.locator('[data-testid="gains-best"]').innerText();
    assert.ok(best.includes(route.gains[0].name), best);
    const first = await section.locator('.ks-twindow .ks-tr').first().innerText();
    assert.ok(first.includes(route.gains[0].name), first);
    assert.match(await section.locator('[data-testid="gains-best"]').innerText(), /run’s ranks/);
    assert.equal(await section.locator('[data-testid="gains-run"]').count(), 0);
    await section.scrollIntoViewIfNeeded();
    await both('overview-top-gains-17-ranks');
    h.assertNoErrors(env.errors);
  });

  test('the Trace page draws the path, for one rank and across both', async () => {
    const route = await h.routeJson(env, 'critical_path', GLOO_KEY);
    await open({ ...GLOO_KEY, view: 'trace' }, '[data-testid="trace"][data-ready="true"]');
    await frame().locator('[data-testid="trace-path-toggle"]').click();
    const timeline = frame().locator('.ks-timeline, [data-path-marks]').first();
    const marks = await h.waitUntil('path marks drawn', async () => {
      const v = await frame().locator('[data-path-marks]').first().getAttribute('data-path-marks');
      return v && Number(v) > 0 ? Number(v) : null;
    });
    assert.ok(marks > 0 && marks <= route.segments.length, `${marks} of ${route.segments.length}`);
    const status = await frame().locator('[data-testid="trace-path-status"]').innerText();
    assert.match(status, /mean step/);
    assert.ok(timeline);
    // Turned on, the path comes into view with its legend: the first step's whole path
    // (not its first segment alone, which can be a 40 µs gap), the timeline on screen;
    // ▶ steps along it segment by segment.
    const legend = await frame()
      .locator('[data-testid="trace-path-legend"] [data-kind]')
      .evaluateAll((els) => els.map((el) => el.dataset.kind));
    const kinds = new Set(route.segments.map((s) => s.kind));
    assert.ok(legend.length > 0 && legend.every((k) => kinds.has(k)), String(legend));
    const step = frame().locator('[data-testid="trace-path-step"]');
    assert.match(await step.innerText(), /^Showing the first step's path \(\d+ segments\)/);
    const shownUs = await h.waitUntil('the first step in view', async () => {
      const v = await frame()
        .locator('[data-viewport-us]')
        .first()
        .getAttribute('data-viewport-us');
      return v && Number(v) >= route.steps[0].step_us ? Number(v) : null;
    });
    assert.ok(shownUs < 3 * route.steps[0].step_us, `${shownUs} µs shown`);
    await frame().locator('[data-testid="trace-path-next"]').click();
    assert.match(await step.innerText(), /^1 of \d+: /);
    const named = (await step.innerText()).replace(/^1 of \d+: /, '').replace(/ \([^)]*\)$/, '');
    assert.ok(
      route.segments.some((s) => s.name === named),
      named,
    );
    const inView = await frame()
      .locator('[data-path-marks]')
      .first()
      .evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.top < window.innerHeight && r.bottom > 0;
      });
    assert.ok(inView, 'the timeline is on screen');
    await frame().locator('[data-testid="trace-path-next"]').click();
    assert.match(await step.innerText(), /^2 of \d+: /);
    assert.equal(await step.getAttribute('data-at'), '1');
    await frame().locator('[data-testid="trace-path-prev"]').click();
    assert.equal(await step.getAttribute('data-at'), '0');
    await both('trace-one-rank');
    // Both ranks on one axis: the run's path, which crosses to rank 1 at each all_reduce.
    const run = await h.routeJson(env, 'run_critical_path', { run: 'gloo', span: '1' });
    assert.ok(run.segments.some((s) => s.rank === 1) && run.segments.some((s) => s.rank === 0));
    await frame().locator('[data-testid="trace-workers"]').click();
    await frame().locator('[data-testid="trace-worker-rank1"] input').check();
    await frame().locator('[data-testid="trace-workers"]').click();
    await frame()
      .locator('[data-testid="trace"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    // Every segment of the run's path lands on a track of its rank (both are shown).
    await h.waitUntil('the run’s path on both ranks', async () => {
      const v = await frame().locator('[data-path-marks]').first().getAttribute('data-path-marks');
      return Number(v) === run.segments.length ? true : null;
    });
    await both('trace-both-ranks');
    h.assertNoErrors(env.errors);
  });

  test('the what-if panel of Operators predicts what the route predicts', async () => {
    const query = { run: 'gloo', span: '1', op: 'whatif::compute', factor: 0.5 };
    const route = await h.routeJson(env, 'run_whatif', query);
    await open({ ...GLOO_KEY, view: 'operators' }, '[data-testid="operators"][data-ready="true"]');
    const row = frame().locator('[data-op="whatif::compute"]').first();
    await row.locator('[data-testid="whatif-open"]').click();
    const panel = frame().locator('[data-testid="whatif-panel"][data-state="ready"]');
    await panel.waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(Number(await panel.getAttribute('data-predicted')), route.predicted_step_us);
    assert.equal(await panel.getAttribute('data-scope'), 'run'); // two workers: one job
    await panel.scrollIntoViewIfNeeded();
    await both('operators-whatif');
    // Twice as slow instead: asked again, the step grows.
    await frame().locator('[data-testid="whatif-factor-2"]').click();
    const slower = await h.routeJson(env, 'run_whatif', { ...query, factor: 2 });
    await h.waitUntil('the 2x prediction', async () =>
      Number(await panel.getAttribute('data-predicted')) === slower.predicted_step_us ? true : null,
    );
    assert.ok(slower.predicted_step_us > route.baseline_step_us);
    h.assertNoErrors(env.errors);
  });

  test('the what-if of a kernel on one rank’s path gives the hand-worked answer', async () => {
    await open({ ...GPU_KEY, view: 'kernels' }, '[data-testid="kernels"][data-ready="true"]');
    const row = frame().locator('[data-kernel="gemm_big"]').first();
    await row.locator('[data-testid="whatif-open"]').click();
    const panel = frame().locator('[data-testid="whatif-panel"][data-state="ready"]');
    await panel.waitFor({ state: 'visible', timeout: WAIT_MS });
    // gemm_big halved on both ranks: rank 0 arrives at 320 µs, the step is 470 µs (was 770).
    assert.equal(Number(await panel.getAttribute('data-predicted')), 470);
    assert.match(
      await panel.locator('[data-testid="whatif-result"]').innerText(),
      /770 µs → 470 µs/,
    );
    await panel.scrollIntoViewIfNeeded();
    await both('kernels-whatif');
    h.assertNoErrors(env.errors);
  });

  test('the Distributed page draws the path rank by rank, with its what-ifs', async () => {
    const route = await h.routeJson(env, 'run_critical_path', { run: 'gpu_job', span: '1' });
    await open(
      { run: 'gpu_job', span: '1', view: 'distributed' },
      '[data-testid="distributed"][data-ready="true"]',
    );
    const section = frame().locator('[data-testid="distributed-critical_path"]');
    await frame()
      .locator('[data-anchor="critical_path"][data-state="ready"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const gantt = frame().locator('[data-testid="critical-gantt"][data-segments]');
    await gantt.waitFor({ state: 'attached', timeout: WAIT_MS });
    assert.equal(await gantt.locator('.ks-path-gantt-row[data-rank]').count(), 2);
    assert.ok(Number(await gantt.getAttribute('data-segments')) > 0);
    // A time axis under the ranks: round times from the step's start.
    const ticks = await gantt
      .locator('[data-testid="path-gantt-axis"] .ks-path-gantt-tick')
      .allInnerTexts();
    assert.ok(ticks.length >= 3 && ticks[0] === '0 µs', String(ticks));
    // The gemm of rank 0 (600 µs) is on the path, rank 1's (200 µs) is not.
    const gemm = route.segments.filter((s) => s.name === 'gemm_big');
    assert.deepEqual([...new Set(gemm.map((s) => s.rank))], [0]);
    await section.first().scrollIntoViewIfNeeded();
    await both('distributed-critical-path');
    await frame().locator('[data-testid="critical-whatif-all_reduce"]').click();
    const panel = frame().locator('[data-testid="dist-whatif-panel"][data-state="ready"]');
    await panel.waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(Number(await panel.getAttribute('data-predicted')), 720); // the transfer halved
    await panel.scrollIntoViewIfNeeded();
    await both('distributed-whatif');
    h.assertNoErrors(env.errors);
  });
});
