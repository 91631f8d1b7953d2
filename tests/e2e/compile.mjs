// Real-browser test of the compile logs beside the trace: a real TensorBoard on a
// temporary logdir of the recorded cases of tests/data/compile_logs (torch 2.13 on this
// CPU: TORCH_TRACE logs beside profiler traces of the same processes), Debian's chromium
// driven by playwright-core. The Compile page, the Trace page's compile track, the
// Overview's compile time per step, each against the plugin's own `compile` route.
//
// Logdir: "shapes" (recompiles from shapes), "breaks" (a graph break), "ranks" (two gloo
// ranks, a log each), "plain" (a trace without logs). Run with `node --test
// tests/e2e/compile.mjs` after `npm run build`. Screenshots go to test-output/e2e/compile/.

import assert from 'node:assert/strict';
import { cp, mkdir, copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PLUGIN, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e', 'compile');
const DATA = path.join(REPO, 'tests', 'data', 'compile_logs');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 120_000;
const ROW_HEIGHT = 18; // views/trace/layout.ts METRICS
const TRACK_PAD = 3;

const env = h.newEnv({});
const shoot = h.screenshotter(OUT, { fullPage: true });

/** The `compile` route's answer, waiting while it answers 202. */
function compileRoute(run) {
  return h.routeJson(env, 'compile', { run }, { waitMs: WAIT_MS });
}

function frame() {
  return h.pluginFrame(env.page);
}

function readData(selector) {
  return frame()
    .locator(selector)
    .evaluateAll((els) => els.map((el) => ({ ...el.dataset, text: el.textContent })));
}

async function open(hash, ready) {
  await env.page.goto(`${env.base}#${PLUGIN}&${hash}`, { timeout: WAIT_MS });
  await frame().locator(ready).waitFor({ state: 'visible', timeout: WAIT_MS });
}

async function copyCase(name, dest) {
  await cp(path.join(DATA, name), dest, { recursive: true });
}

describe('compile logs beside the trace, in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-e2e-compile-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: { width: 1280, height: 1600 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          await copyCase('recompile_shapes', path.join(logdir, 'shapes'));
          await copyCase('graph_break', path.join(logdir, 'breaks'));
          await copyCase('two_ranks', path.join(logdir, 'ranks'));
          const plain = path.join(logdir, 'plain');
          await mkdir(plain);
          const trace = (await readdir(path.join(DATA, 'graph_break'))).find((f) =>
            f.startsWith('worker0'),
          );
          await copyFile(path.join(DATA, 'graph_break', trace), path.join(plain, trace));
          // A run of compile logs alone (no profiler trace beside them).
          await cp(
            path.join(DATA, 'recompile_ints', 'torch_trace'),
            path.join(logdir, 'logsonly', 'torch_trace'),
            { recursive: true },
          );
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 300_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('the Compile page shows what the route says, at 1280 and 1920 px', async () => {
    const view = await compileRoute('shapes');
    await open(`${P}run=shapes&${P}view=compile`, '[data-testid="compile"][data-ready="true"]');
    const rows = await readData('[data-testid="compile-row"]');
    assert.deepEqual(
      rows.map((r) => r.compile),
      view.compiles.map((c) => c.compile_id),
    );
    const boxes = await readData('[data-testid="compile-box"]');
    const backward = view.compiles.filter((c) => c.backward).length;
    assert.equal(boxes.length, view.compiles.length + backward);
    assert.deepEqual(
      boxes.filter((b) => b.kind === 'recompile').map((b) => b.compile),
      ['0/1', '0/2'],
    );
    const steps = await readData('[data-testid="compile-steps"] li');
    assert.deepEqual(
      steps.map((s) => s.text.split(' (of a')[0]),
      view.steps.map((s) => `${s.worker}: ${s.text.replaceAll('`', '')}`), // code runs: <code>
    );
    const advice = await readData('[data-testid="compile-advice"] li');
    assert.deepEqual(
      advice.map((a) => a.rule),
      view.advice.map((a) => a.rule),
    );
    assert.ok(advice.some((a) => a.text.includes('mark_dynamic(x, 0)')));
    const recompiles = await readData('[data-testid="compile-recompiles"] li');
    assert.deepEqual(
      recompiles.map((r) => [r.compile, r.kind]),
      [
        ['0/1', 'shape'],
        ['0/2', 'shape'],
      ],
    );
    // The step of a compile opens the trace view at that compile.
    const href = await frame()
      .locator('[data-testid="compile-trace-link"]')
      .first()
      .getAttribute('href');
    assert.match(href, new RegExp(`${P.replace('.', '\\.')}view=trace`));
    await shoot(env.page, 'compile-1280');
    await env.page.setViewportSize({ width: 1920, height: 1400 });
    await frame().locator('[data-testid="compile-timeline"]').waitFor();
    await shoot(env.page, 'compile-1920');
    await env.page.setViewportSize({ width: 1280, height: 1600 });
    h.assertNoErrors(env.errors);
  });

  test('graph breaks link to the line in the editor; ranks are lanes', async () => {
    await open(`${P}run=breaks&${P}view=compile`, '[data-testid="compile"][data-ready="true"]');
    const link = await frame().locator('[data-testid="compile-break-link"]').getAttribute('href');
    assert.equal(link, 'vscode://file/repo/samples/record_compile_logs.py:60');
    const frameLink = await frame()
      .locator('[data-testid="compile-frame-link"]')
      .first()
      .getAttribute('href');
    assert.equal(frameLink, 'vscode://file/repo/samples/record_compile_logs.py:58');
    await shoot(env.page, 'compile-graph-break');
    const ranks = await compileRoute('ranks');
    await open(`${P}run=ranks&${P}view=compile`, '[data-testid="compile"][data-ready="true"]');
    const lanes = await frame().locator('.ks-cmp-lane-label').allInnerTexts();
    assert.deepEqual(lanes, ['rank 0', 'rank 1']);
    const breaks = await readData('[data-testid="compile-graph-breaks"] li');
    assert.equal(breaks.length, ranks.graph_breaks.length);
    await shoot(env.page, 'compile-ranks');
    h.assertNoErrors(env.errors);
  });

  test('the view is offered only for runs with compile logs', async () => {
    const body = await h.routeJson(env, 'runs');
    const views = Object.fromEntries(body.runs.map((r) => [r.name, r.views]));
    assert.ok(views.shapes.includes('compile') && views.ranks.includes('compile'));
    assert.ok(!views.plain.includes('compile'), String(views.plain));
    await open(
      `${P}run=plain&${P}worker=worker0&${P}view=overview`,
      '[data-testid="overview"][data-ready="true"]',
    );
    const options = await frame()
      .locator('[data-testid="view-select"] option')
      .evaluateAll((els) => els.map((o) => o.value));
    assert.ok(!options.includes('compile'), String(options));
    assert.equal(await frame().locator('[data-testid="overview-compile"]').isVisible(), false);
  });

  test('a run of compile logs alone shows its page without empty Workers/Spans boxes', async () => {
    const view = await compileRoute('logsonly');
    assert.ok(view.compiles.length > 0);
    await open(`${P}run=logsonly&${P}view=compile`, '[data-testid="compile"][data-ready="true"]');
    assert.equal(await frame().locator('[data-testid="worker-select"]').isVisible(), false);
    assert.equal(await frame().locator('[data-testid="span-select"]').isVisible(), false);
    await open(
      `${P}run=shapes&${P}worker=worker0&${P}view=overview`,
      '[data-testid="overview"][data-ready="true"]',
    );
    assert.equal(await frame().locator('[data-testid="worker-select"]').isVisible(), true);
  });

  test("the Overview says each step's compile time", async () => {
    const view = await compileRoute('shapes');
    await open(
      `${P}run=shapes&${P}worker=worker0&${P}view=overview`,
      '[data-testid="overview-compile"][data-state="ready"]',
    );
    const lines = await readData('[data-testid="overview-compile-steps"] li');
    assert.deepEqual(
      lines.map((l) => l.text.replace(/ \(\d+ % of the step\)$/, '')),
      view.steps.map((s) => s.text.replaceAll('`', '')),
    );
    assert.match(
      lines[0].text,
      /^step 0: 31\.1 s compiling frame 0\/0 \(forward, record_compile_logs\.py:71\)/,
    );
    const code = await frame().locator('[data-testid="overview-compile-steps"] li code').first();
    assert.equal(await code.innerText(), 'forward');
    await frame().locator('[data-testid="overview-compile"]').scrollIntoViewIfNeeded();
    await shoot(env.page, 'overview-compile');
    h.assertNoErrors(env.errors);
  });

  test('the Trace page draws a compile track; a phase shows its compile', async () => {
    const view = await compileRoute('shapes');
    const origin = view.alignments[0].time_origin_us;
    const dynamo = view.events.find((e) => e.name === 'dynamo' && e.compile_id === '0/1');
    const start = dynamo.start_us - origin;
    const t0 = start - dynamo.dur_us * 0.5;
    const t1 = start + dynamo.dur_us * 1.5;
    await open(
      `${P}run=shapes&${P}worker=worker0&${P}view=trace&${P}t0=${t0}&${P}t1=${t1}`,
      '[data-testid="trace"][data-compile-track="true"]',
    );
    const label = frame().locator('[data-testid="trace-track-label"][data-track="compile"]');
    await label.waitFor();
    const tl = frame().locator('[data-testid="trace-timeline"]');
    await h.waitUntil(
      'the timeline to draw',
      async () => {
        const ds = await tl.evaluate((el) => ({ ...el.dataset }));
        return ds.pending === '0' && Number(ds.responses) > 0 ? ds : null;
      },
      WAIT_MS,
      50,
    );
    const ds = await tl.evaluate((el) => ({ ...el.dataset }));
    const box = await frame().locator('[data-testid="trace-canvas"]').boundingBox();
    const lb = await label.boundingBox();
    const vt0 = Number(ds.t0);
    const vt1 = Number(ds.t1);
    const mid = start + dynamo.dur_us / 2;
    const x = box.x + ((mid - vt0) / (vt1 - vt0)) * box.width;
    const y = lb.y + TRACK_PAD + ROW_HEIGHT / 2;
    await env.page.mouse.click(x, y);
    const details = frame().locator('[data-testid="trace-compile-details"]');
    await details.waitFor();
    assert.match(await details.innerText(), /dynamo · compile 0\/1/);
    assert.match(await details.innerText(), /size mismatch at index 0\. expected 8, actual 4/);
    await shoot(env.page, 'trace-compile-track');
    h.assertNoErrors(env.errors);
  });
});
