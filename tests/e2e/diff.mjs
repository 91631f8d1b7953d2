// Real-browser test of the Diff page: a real TensorBoard on a temporary logdir with two
// runs (the old plugin's resnet50 samples with 0 and 4 data-loader workers when
// ../shared/corpus exists, else the CPU sample's "cnn" and "mlp"), chromium driven by
// playwright-core. The page opened from the URL shows the `diff` route's numbers; the
// side bar's "Compare with…" opens it for another target and leaves it.
//
// Same conventions as the other suites (harness.mjs): any console error, page error or
// 4xx/5xx of a plugin route fails. Screenshots: test-output/e2e/diff/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, copyGlob, waitUntil } from './harness.mjs';

const SHOTS = path.join(REPO, 'test-output', 'e2e', 'diff');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 90_000;
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const RESNET = path.join(CORPUS, 'pytorch-kineto/tb_plugin/samples');

const env = h.newEnv({ runs: /** @type {string[]} */ ([]) });

/** A plugin route from the API, waiting while a trace loads (202). */
async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return waitUntil(
    `${route} ${JSON.stringify(params)} from the API`,
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      const body = await response.json();
      if (response.status === 200) return body;
      if (response.status === 202) return null;
      throw new Error(`${route} answered ${response.status}: ${JSON.stringify(body)}`);
    },
    WAIT_MS,
    500,
  );
}

const frame = () => h.pluginFrame(env.page);

function hashFor(state) {
  const items = [PLUGIN];
  for (const [k, v] of Object.entries(state)) {
    items.push(`${encodeURIComponent(P + k)}=${encodeURIComponent(v)}`);
  }
  return `#${items.join('&')}`;
}

function hashState() {
  const out = {};
  for (const item of new URL(env.page.url()).hash.slice(1).split('&')) {
    const [k, v] = item.split('=');
    const key = decodeURIComponent(k);
    if (v !== undefined && key.startsWith(P)) out[key.slice(P.length)] = decodeURIComponent(v);
  }
  return out;
}

/** The Diff page, ready, for this target. */
async function waitDiff(target) {
  let selector = '[data-testid="diff"][data-ready="true"][data-busy="false"]';
  selector += `[data-target-run="${target.run}"][data-target-worker="${target.worker}"]`;
  if (target.span) selector += `[data-target-span="${target.span}"]`;
  await frame().locator(selector).waitFor({ state: 'visible', timeout: WAIT_MS });
}

/** The data-value of each column of a row of a table (by the row's data attribute). */
async function rowValues(tableTestid, attr, value) {
  const row = frame().locator(`[data-testid="${tableTestid}"] [role="row"][${attr}="${value}"]`);
  return row.evaluate((el) =>
    Object.fromEntries(
      [...el.querySelectorAll('[data-col]')].map((c) => [c.dataset.col, c.dataset.value]),
    ),
  );
}

/** The page's numbers are the route's: step time (tile and table) and operator rows
 *  (those of the status filter in force, in the route's order). */
async function assertShowsRoute(diff, status = 'all') {
  const delta = diff.steps.average_step_us.delta;
  const tile = frame().locator('[data-testid="diff-step-time-delta"]');
  assert.equal(await tile.getAttribute('data-value'), delta === null ? '' : String(delta));
  const stepRow = await rowValues('diff-steps-table', 'data-key', 'average_step_us');
  assert.equal(stepRow['value.base'], String(diff.steps.average_step_us.base));
  assert.equal(stepRow['value.target'], String(diff.steps.average_step_us.target));
  assert.equal(stepRow['value.delta'], delta === null ? '' : String(delta));
  assert.ok(diff.operators.length > 0, 'the route has operators');
  const ops = status === 'all' ? diff.operators : diff.operators.filter((r) => r.status === status);
  const count = frame().locator('[data-testid="diff-operators-count"]');
  assert.equal(Number(await count.getAttribute('data-rows')), ops.length);
  const first = ops[0];
  if (!first) return;
  const shown = await rowValues('diff-operators-table', 'data-name', first.name);
  assert.equal(shown['calls.delta'], String(first.calls.delta));
  assert.equal(shown.status, first.status);
}

describe('Diff page in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-diff-',
        log: path.join(REPO, 'test-output', 'e2e', 'tensorboard-diff.log'),
        viewport: { width: 1440, height: 1600 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          if (existsSync(RESNET)) {
            for (const n of ['0', '4']) {
              const from = path.join(RESNET, `resnet50_num_workers_${n}`);
              await copyGlob(from, '.gz', path.join(logdir, `resnet50_w${n}`));
            }
            env.runs = ['resnet50_w0', 'resnet50_w4'];
          } else {
            h.runSample(logdir, ['--no-ddp']);
            env.runs = ['cnn', 'mlp'];
          }
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 600_000 },
  );

  afterEach((t) => h.noteOutcome(env, t));
  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('opened from the URL, it shows the route; Compare with… changes the target', async () => {
    const { runs } = await api('runs');
    const byName = (name) => runs.find((r) => r.name === name);
    const [baseRun, targetRun] = env.runs.map(byName);
    assert.ok(baseRun && targetRun, `runs listed: ${runs.map((r) => r.name)}`);
    const baseWorker = baseRun.workers[0];
    const base = { run: baseRun.name, worker: baseWorker.name, span: baseWorker.spans[0].name };
    const target = { run: targetRun.name, worker: targetRun.workers[0].name };

    // 1. From the URL: base run/worker/span, view=diff, target_* keys.
    await env.page.goto(
      `${env.base}${hashFor({ ...base, view: 'diff', target_run: target.run, target_worker: target.worker })}`,
    );
    await waitDiff(target);
    const diff = await api('diff', {
      ...base,
      target_run: target.run,
      target_worker: target.worker,
    });
    await assertShowsRoute(diff);
    const views = await frame()
      .locator('[data-testid="view-select"] option')
      .evaluateAll((options) => options.map((o) => o.value));
    assert.ok(views.includes('diff'), `the View list offers the Diff page: ${views}`);
    await shoot(env.page, 'diff-from-url');

    // 2. The status filter keeps only that status; kept in the URL.
    await frame().locator('[data-testid="diff-operators-status"]').selectOption('changed');
    const changed = diff.operators.filter((r) => r.status === 'changed').length;
    await waitUntil('the status filter', async () => {
      const rows = await frame()
        .locator('[data-testid="diff-operators-count"]')
        .getAttribute('data-rows');
      return Number(rows) === changed;
    });
    assert.equal(hashState()['diff.operators.status'], 'changed');

    // 2b. A changed operator links to the base's trace view, which searches for its name.
    const op = diff.operators.find((r) => r.status === 'changed');
    assert.ok(op, 'a changed operator');
    const opRow = frame().locator(
      `[data-testid="diff-operators-table"] [role="row"][data-name="${op.name}"]`,
    );
    assert.equal(await opRow.locator('[data-testid="diff-trace-target"]').count(), 1);
    await opRow.locator('[data-testid="diff-trace-base"]').click();
    await frame()
      .locator('[data-testid="trace"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await frame().locator('[data-testid="trace-search"]').inputValue(), op.name);
    await waitUntil('the linked search found the operator', async () => {
      const text = await frame().locator('[data-testid="trace-search-count"]').textContent();
      return /\d/.test(text ?? '') && !/^0\b/.test(text ?? '');
    });
    const opened = hashState();
    assert.deepEqual([opened.view, opened.run, opened.q], ['trace', base.run, undefined]);
    await shoot(env.page, 'diff-trace-link');
    await env.page.goBack();
    await waitDiff(target);

    // 3. Compare with…: another target (a second span, else the base itself) reopens it.
    const second = baseWorker.spans[1]?.name;
    const next = second
      ? { run: base.run, worker: base.worker, span: second }
      : { run: base.run, worker: base.worker, span: base.span };
    await frame()
      .locator('[data-testid="compare-select"]')
      .selectOption(JSON.stringify([next.run, next.worker, next.span]));
    await waitDiff(next);
    const nextDiff = await api('diff', {
      ...base,
      target_run: next.run,
      target_worker: next.worker,
      target_span: next.span,
    });
    await assertShowsRoute(nextDiff, 'changed');
    const state = hashState();
    assert.equal(state.view, 'diff');
    assert.deepEqual(
      [state.target_run, state.target_worker, state.target_span],
      [next.run, next.worker, next.span],
    );
    await shoot(env.page, 'diff-compare-with');

    // 4. Nothing to compare with: back to the worker's first view, no Diff offered.
    await frame().locator('[data-testid="compare-select"]').selectOption('');
    await frame()
      .locator('[data-testid="overview"], .ks-view-host[data-view="overview"]')
      .first()
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(hashState().target_run, undefined);
    const after = await frame()
      .locator('[data-testid="view-select"] option')
      .evaluateAll((options) => options.map((o) => o.value));
    assert.ok(!after.includes('diff'), `no Diff without a target: ${after}`);

    // 5. The target edited in the URL (same base, same view) redraws the Diff page for it,
    //    and the control follows; then a URL without one leaves the page.
    const targetKeys = (t) => ({
      target_run: t.run,
      target_worker: t.worker,
      ...(t.span ? { target_span: t.span } : {}),
    });
    await env.page.goto(`${env.base}${hashFor({ ...base, view: 'diff', ...targetKeys(target) })}`);
    await waitDiff(target);
    await env.page.goto(`${env.base}${hashFor({ ...base, view: 'diff', ...targetKeys(next) })}`);
    await waitDiff(next);
    const compare = frame().locator('[data-testid="compare-select"]');
    assert.equal(await compare.inputValue(), JSON.stringify([next.run, next.worker, next.span]));
    await env.page.goto(`${env.base}${hashFor({ ...base, view: 'memory' })}`);
    await waitUntil('the control follows a URL without a target', async () => {
      return (await compare.inputValue()) === '';
    });
    h.assertNoErrors(env.errors);
  });

  test('a link naming only the target run compares with its first worker, the run shown', async () => {
    const { runs } = await api('runs');
    const [baseRun, targetRun] = env.runs.map((name) => runs.find((r) => r.name === name));
    const base = { run: baseRun.name, worker: baseRun.workers[0].name, span: '1' };
    const first = targetRun.workers[0].name;
    // As `kinetoscope diff --target RUN` writes it: no target_worker.
    await env.page.goto('about:blank');
    await env.page.goto(
      `${env.base}${hashFor({ ...base, view: 'diff', target_run: targetRun.name })}`,
    );
    await waitDiff({ run: targetRun.name, worker: first });
    assert.equal(hashState().target_worker, first);
    const diff = await api('diff', { ...base, target_run: targetRun.name });
    await assertShowsRoute(diff);
    // The closed "Compare with…" box names the run first (its groups' labels are not shown).
    const chosen = await frame()
      .locator('[data-testid="compare-select"]')
      .evaluate((el) => el.selectedOptions[0]?.text ?? '');
    assert.ok(chosen.startsWith(`${targetRun.name} · `), chosen);
    await shoot(env.page, 'diff-target-run-only');
    h.assertNoErrors(env.errors);
  });
});
