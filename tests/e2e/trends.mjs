// Real-browser test of the Trends page (issue 33): a real TensorBoard on a logdir of 7 runs
// built from a real H100 corpus trace (tests/trend_logdirs.py: its biggest GEMM kernel
// 1.5× from run 3, every allocation 1.3× from run 4, ±2 % noise on every duration);
// Debian's chromium driven by playwright-core. Checks the page's changes against the
// `trend` route, its charts, and that a change's link opens the Diff of that run against
// the run before it. Run with `node --test` on this file.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PYTHON, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'trends');
const WAIT_MS = 60_000;
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv({ names: /** @type {string[]} */ ([]), kernel: '' });

const frame = () => h.pluginFrame(env.page);

describe('Trends page in TensorBoard', { timeout: 600_000, skip: !existsSync(CORPUS) }, () => {
  before(async () => {
    await h.startEnv(env, {
      shots: SHOTS,
      tmpPrefix: 'kinetoscope-e2e-trends-',
      log: path.join(OUT, 'tensorboard-trends.log'),
      viewport: { width: 1440, height: 1400 },
      waitMs: WAIT_MS,
      populate: async (logdir) => {
        const script = path.join(REPO, 'tests', 'trend_logdirs.py');
        const made = JSON.parse(
          execFileSync(PYTHON, [script, CORPUS, logdir], { encoding: 'utf8' }),
        );
        env.names = made.names;
        env.kernel = made.kernel;
      },
    });
    env.page = await env.context.newPage();
    h.watchErrors(env.page, env.errors);
  });

  after(async () => {
    await h.stopEnv(env);
  });

  test('the changes and charts of the runs, as the route says', async () => {
    const data = await h.routeJson(env, 'trend', {});
    assert.deepEqual(
      data.runs.map((r) => r.run),
      env.names,
    );
    const named = (metric, name) =>
      data.regressions
        .filter((c) => c.metric === metric && c.name === name)
        .map((c) => c.first_run);
    assert.deepEqual(named('kernel', env.kernel), [env.names[3]]);
    assert.deepEqual(named('memory_peak', 'GPU0'), [env.names[4]]);

    await env.page.goto(`${env.base}${h.stateHash({ run: env.names[0], view: 'trends' })}`);
    const page = frame().locator('[data-testid="trends"][data-ready="true"]');
    await page.waitFor({ timeout: WAIT_MS });
    await shoot(env.page, 'trends');
    const rows = await frame()
      .locator('[data-testid="trend-change"]')
      .evaluateAll((els) =>
        els.map((el) => [el.dataset.kind, el.dataset.metric, el.dataset.name, el.dataset.run]),
      );
    const want = [
      ...data.regressions.map((c) => ['regression', c.metric, c.name, c.first_run]),
      ...data.improvements.map((c) => ['improvement', c.metric, c.name, c.first_run]),
    ];
    assert.deepEqual(rows.map((r) => r.join('|')).sort(), want.map((r) => r.join('|')).sort());
    for (const chart of ['trend-step-chart', 'trend-peak-chart']) {
      await frame()
        .locator(`[data-testid="${chart}"] canvas`)
        .first()
        .waitFor({ timeout: WAIT_MS });
    }
    const summary = await frame().locator('[data-testid="trend-summary"]').innerText();
    assert.match(
      summary,
      new RegExp(`^${env.names.length} runs · ${data.regressions.length} regression`),
    );
    // In words: metrics and phases by their labels, not their keys; a kernel's long name
    // on one line (its whole name in the tooltip); the rule's sentence a sentence.
    const cells = (metric) =>
      frame()
        .locator(`[data-testid="trend-change"][data-metric="${metric}"] td`)
        .evaluateAll((tds) => tds.map((td) => td.innerText));
    assert.equal((await cells('memory_peak'))[1], 'Memory peak');
    assert.deepEqual((await cells('phase')).slice(1, 3), ['Phase', 'Kernel']);
    const name = frame()
      .locator('[data-testid="trend-change"][data-metric="kernel"] .ks-trend-name')
      .first();
    assert.equal(await name.getAttribute('title'), env.kernel);
    const [height, line] = await name.evaluate((el) => [
      el.getBoundingClientRect().height,
      parseFloat(getComputedStyle(el).lineHeight) || 20,
    ]);
    assert.ok(height < 2 * line + 10, `the name takes ${height} px`);
    const rule = await frame()
      .locator(
        '[data-testid="trend-changes-section"] .ks-section-intro, [data-testid="trend-changes-section"] p',
      )
      .first()
      .innerText();
    assert.match(rule, /^[A-Z]/);
    // No CPU peak of a few bytes named (a change under 1 MiB is not news).
    assert.ok(data.regressions.every((c) => c.metric !== 'memory_peak' || c.name !== 'CPU'));
  });

  test("a change's link opens the Diff of its run against the one before", async () => {
    const row = frame().locator(
      `[data-testid="trend-change"][data-metric="kernel"][data-run="${env.names[3]}"]`,
    );
    await row.locator('[data-testid="trend-diff-link"]').click();
    const sides = frame().locator('[data-testid="diff-sides"]');
    await sides.waitFor({ timeout: WAIT_MS });
    await frame().locator('[data-testid="diff"][data-ready="true"]').waitFor({ timeout: WAIT_MS });
    await shoot(env.page, 'diff-from-trend');
    const base = await frame().locator('[data-testid="diff-side-base"]').innerText();
    const target = await frame().locator('[data-testid="diff-side-target"]').innerText();
    assert.match(base, new RegExp(env.names[2]));
    assert.match(target, new RegExp(env.names[3]));
    const hash = decodeURIComponent(await env.page.evaluate(() => window.location.hash));
    assert.match(hash, new RegExp(`p\\.kinetoscope\\.target_run=${env.names[3]}`));
    h.assertNoErrors(env.errors);
  });
});

describe(
  'Trends of runs without memory events',
  { timeout: 600_000, skip: !existsSync(CORPUS) },
  () => {
    const quiet = h.newEnv({});
    const replay = path.join(
      CORPUS,
      'tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz',
    );

    before(async () => {
      await h.startEnv(quiet, {
        shots: path.join(OUT, 'trends_no_memory'),
        tmpPrefix: 'kinetoscope-e2e-trends-no-memory-',
        log: path.join(OUT, 'tensorboard-trends-no-memory.log'),
        viewport: { width: 1280, height: 1000 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          for (const run of ['a', 'b', 'c']) {
            await h.copyTrace(replay, path.join(logdir, run), 'worker0.1.pt.trace.json.gz');
          }
        },
      });
      quiet.page = await quiet.context.newPage();
      h.watchErrors(quiet.page, quiet.errors);
    });

    after(() => h.stopEnv(quiet));

    test('a note, not an empty chart, when no run has memory events', async () => {
      const data = await h.routeJson(quiet, 'trend', {});
      assert.ok(data.runs.every((r) => Object.keys(r.memory_peak_bytes).length === 0));
      await quiet.page.goto(`${quiet.base}${h.stateHash({ run: 'a', view: 'trends' })}`);
      const f = h.pluginFrame(quiet.page);
      await f.locator('[data-testid="trends"][data-ready="true"]').waitFor({ timeout: WAIT_MS });
      assert.equal(await f.locator('[data-testid="trend-peak-chart"]').count(), 0);
      const note = f.locator('[data-testid="trend-peak-empty"]');
      assert.match(
        await note.innerText(),
        /No run has memory events: record with profile_memory=True/,
      );
      await f
        .locator('[data-testid="trend-step-chart"] canvas')
        .first()
        .waitFor({ timeout: WAIT_MS });
      await h.screenshotter(path.join(OUT, 'trends_no_memory'), { fullPage: true })(
        quiet.page,
        'trends-no-memory',
      );
      h.assertNoErrors(quiet.errors);
    });
  },
);
