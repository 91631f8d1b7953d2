// Real-browser test of the kinetoscope plugin: a real TensorBoard on a temporary logdir,
// Debian's chromium driven by playwright-core, the plugin's iframe checked against the
// plugin's own HTTP API. Run with `npm run e2e` (builds the frontend first).
//
// Needs: <repo>/.venv with kinetoscope installed editable (pip install -e .) and torch;
// a chromium binary (CHROMIUM_PATH, else chromium / chromium-browser / google-chrome on
// PATH). Uses ../shared/corpus next to the repo when present (GPU run, broken worker).
// Screenshots and the TensorBoard log go to <repo>/test-output/e2e/.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, copyGlob, sleep, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const CATEGORIES = [
  'kernel',
  'memcpy',
  'memset',
  'communication',
  'runtime',
  'dataloader',
  'cpu_exec',
  'other',
];
const GPU_PARTS = ['kernel', 'memcpy', 'memset', 'communication', 'runtime'];
const VIEWPORT = { width: 1440, height: 2000 };
const WAIT_MS = 60_000;
const shoot = h.screenshotter(OUT);

// ----- shared state ----------------------------------------------------------------

const env = h.newEnv({
  haveSample: false,
  haveCorpus: false,
});

async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = await response.json();
  return { status: response.status, body };
}

/** The overview of one worker-span from the API, waiting while it loads (202). */
async function apiOverview(key) {
  return waitUntil(`overview ${JSON.stringify(key)} from the API`, async () => {
    const { status, body } = await api('overview', key);
    if (status === 200) return body;
    if (status === 202) return null;
    throw new Error(`overview answered ${status}: ${JSON.stringify(body)}`);
  });
}

function frame() {
  return h.pluginFrame(env.page);
}

async function screenshot(name) {
  return shoot(env.page, name);
}

function assertNoErrors() {
  h.assertNoErrors(env.errors);
}

async function selection() {
  const f = frame();
  return {
    run: await f.locator('[data-testid="run-select"]').inputValue(),
    worker: await f.locator('[data-testid="worker-select"]').inputValue(),
    span: await f.locator('[data-testid="span-select"]').inputValue(),
  };
}

/** Waits for a rendered Overview, optionally of a given run/worker/span. */
async function waitOverview(key = {}) {
  let selector = '[data-testid="overview"][data-ready="true"]';
  for (const [k, v] of Object.entries(key)) selector += `[data-${k}="${v}"]`;
  await frame().locator(selector).waitFor({ state: 'visible', timeout: WAIT_MS });
}

async function choose(testid, value) {
  await frame().locator(`[data-testid="${testid}"]`).selectOption(value, { timeout: WAIT_MS });
}

/**
 * Every breakdown cell of the table as {testid: data-value}; scrolls the virtualized body
 * from top to bottom so rows outside the viewport are read too.
 */
async function readBreakdownCells() {
  return frame()
    .locator('[data-testid="breakdown-table"]')
    .evaluate(async (table) => {
      const cells = {};
      const collect = () => {
        for (const el of table.querySelectorAll('[data-testid^="breakdown-"][data-value]')) {
          cells[el.dataset.testid] = el.dataset.value;
        }
      };
      const viewport = table.querySelector('.ks-tviewport');
      const frameTick = () => new Promise((r) => requestAnimationFrame(() => r()));
      viewport.scrollTop = 0;
      await frameTick();
      await frameTick();
      collect();
      const step = Math.max(1, viewport.clientHeight - 20);
      while (viewport.scrollTop + viewport.clientHeight < viewport.scrollHeight) {
        const before = viewport.scrollTop;
        viewport.scrollTop = before + step;
        await frameTick();
        await frameTick();
        collect();
        if (viewport.scrollTop === before) break;
      }
      viewport.scrollTop = 0;
      return cells;
    });
}

/** Asserts the table shows exactly the API's numbers for every step x category. */
async function assertTableMatchesApi(key) {
  const overview = await apiOverview(key);
  const cells = await readBreakdownCells();
  assert.ok(overview.steps.length > 0, `the API lists no steps for ${JSON.stringify(key)}`);
  // A trace with no GPU activity leaves out the GPU parts that are 0 in every step.
  const shown = CATEGORIES.filter(
    (c) =>
      overview.devices.length > 0 ||
      !GPU_PARTS.includes(c) ||
      overview.steps.some((s) => s.breakdown_us[c]),
  );
  for (const category of CATEGORIES.filter((c) => !shown.includes(c))) {
    assert.ok(!(`breakdown-average-${category}` in cells), `all-zero ${category} shown`);
  }
  for (const step of overview.steps) {
    assert.equal(
      Number(cells[`breakdown-${step.name}-total`]),
      step.duration_us,
      `${step.name} step time`,
    );
    for (const category of shown) {
      const id = `breakdown-${step.name}-${category}`;
      assert.ok(id in cells, `missing cell ${id}`);
      assert.equal(Number(cells[id]), step.breakdown_us[category], id);
    }
  }
  for (const category of shown) {
    const id = `breakdown-average-${category}`;
    assert.ok(id in cells, `missing cell ${id}`);
    assert.equal(Number(cells[id]), overview.average_breakdown_us[category], id);
  }
  assert.equal(Number(cells['breakdown-average-total']), overview.average_step_us, 'average');
  const stepRows = new Set(
    Object.keys(cells)
      .filter((id) => id.endsWith('-total') && id !== 'breakdown-average-total')
      .map((id) => id.slice('breakdown-'.length, -'-total'.length)),
  );
  assert.equal(stepRows.size, overview.steps.length, 'one table row per step');
  await frame()
    .locator('[data-testid="breakdown-average"]')
    .waitFor({ state: 'visible', timeout: 5000 });
  return overview;
}

async function newPage() {
  if (env.page) await env.page.close();
  env.page = await env.context.newPage();
  h.watchErrors(env.page, env.errors);
  return env.page;
}

async function setTensorBoardTheme(label) {
  await h.setTensorBoardTheme(env.page, label);
}

// ----- the suite -------------------------------------------------------------------

describe('kinetoscope in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-e2e-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: VIEWPORT,
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          if (existsSync(h.SAMPLE)) {
            h.runSample(logdir, ['--no-ddp']);
            env.haveSample = true;
          }
          if (existsSync(CORPUS)) {
            const resnet = path.join(
              CORPUS,
              'pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0',
            );
            await copyGlob(resnet, '.gz', path.join(logdir, 'resnet50_gpu'));
            const mixed = path.join(logdir, 'mixed');
            await mkdir(mixed, { recursive: true });
            await copyFile(
              path.join(CORPUS, 'hta/tests/data/trace_filter/sampled_rank-0.json.gz'),
              path.join(mixed, 'worker0.1.pt.trace.json.gz'),
            );
            await copyFile(
              path.join(CORPUS, 'derived/empty/empty.pt.trace.json'),
              path.join(mixed, 'worker1.2.pt.trace.json'),
            );
            env.haveCorpus = true;
          }
          assert.ok(
            env.haveSample || env.haveCorpus,
            'neither samples/train_cpu.py nor the corpus',
          );
        },
      });
      await newPage();
    },
    { timeout: 600_000 },
  );

  afterEach((t) => h.noteOutcome(env, t));
  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('the Overview of the first run shows the API numbers', { timeout: 180_000 }, async () => {
    await env.page.goto(`${env.base}#${PLUGIN}`, { timeout: WAIT_MS });
    await waitOverview();
    const key = await selection();
    const runs = (await api('runs')).body.runs;
    assert.equal(key.run, runs[0].name, 'the first run is selected');
    const overview = await assertTableMatchesApi(key);
    await screenshot(`overview-${key.run}-light`);
    // Sorting by step time: descending first, then ascending.
    const byTime = overview.steps.slice().sort((a, b) => a.duration_us - b.duration_us);
    const header = frame().getByRole('columnheader', { name: 'Step time' });
    const firstRow = frame()
      .locator('[data-testid="breakdown-table"] .ks-twindow [data-step]')
      .first();
    await header.click();
    assert.equal(await firstRow.getAttribute('data-step'), byTime.at(-1).name);
    await header.click();
    assert.equal(await firstRow.getAttribute('data-step'), byTime[0].name);
    assert.match(env.page.url(), new RegExp(`p\\.${PLUGIN}\\.run=${encodeURIComponent(key.run)}`));
    assertNoErrors();
  });

  test('switching run and span updates the view and the URL', { timeout: 240_000 }, async (t) => {
    if (!env.haveSample) return t.skip('no samples/train_cpu.py');
    await choose('run-select', 'mlp');
    await waitOverview({ run: 'mlp', span: '1' });
    await assertTableMatchesApi(await selection());
    await choose('span-select', '3');
    await waitOverview({ run: 'mlp', span: '3' });
    const key = await selection();
    assert.deepEqual(key, { run: 'mlp', worker: 'worker0', span: '3' });
    await assertTableMatchesApi(key);
    await screenshot('overview-mlp-span3-light');
    await waitUntil('the URL to hold the selection', () =>
      env.page.url().includes(`p.${PLUGIN}.run=mlp&p.${PLUGIN}.worker=worker0&p.${PLUGIN}.span=3`),
    );
    assertNoErrors();
  });

  test('a GPU run shows its device summary', { timeout: 240_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    await choose('run-select', 'resnet50_gpu');
    await waitOverview({ run: 'resnet50_gpu' });
    const overview = await assertTableMatchesApi(await selection());
    assert.equal(overview.device_type, 'GPU');
    const card = frame().locator('[data-testid="gpu-0"]');
    await card.waitFor({ state: 'visible' });
    assert.match(await card.innerText(), new RegExp(overview.devices[0].name));
    const recs = overview.recommendations.length;
    assert.equal(
      await frame().locator('[data-testid^="recommendation-"]:not([data-testid*="link"])').count(),
      recs,
    );
    await screenshot('overview-resnet50-gpu-light');
    const linked = overview.recommendations.find(
      (r) => r.link?.view === 'overview' && r.link.anchor,
    );
    if (linked) {
      await frame().locator(`[data-testid="recommendation-link-${linked.id}"]`).click();
      await frame()
        .locator(`[data-anchor="${linked.link.anchor}"].ks-flash`)
        .waitFor({ state: 'visible', timeout: 10_000 });
    }
    await choose('span-select', '2');
    await waitOverview({ run: 'resnet50_gpu', span: '2' });
    await assertTableMatchesApi(await selection());
    assertNoErrors();
  });

  test(
    'a broken worker shows its error; the good worker still renders',
    { timeout: 240_000 },
    async (t) => {
      if (!env.haveCorpus) return t.skip('no ../shared/corpus');
      await choose('run-select', 'mixed');
      await waitOverview({ run: 'mixed', worker: 'worker0' });
      await assertTableMatchesApi(await selection());
      await choose('worker-select', 'worker1');
      const panel = frame().locator('[data-testid="worker-error"][data-worker="worker1"]');
      await panel.waitFor({ state: 'visible' });
      const status = (await api('status', { run: 'mixed', worker: 'worker1', span: '1' })).body;
      assert.equal(status.state, 'error');
      assert.equal(
        await frame().locator('[data-testid="worker-error-message"]').innerText(),
        status.error.message,
      );
      if (status.error.file) {
        assert.equal(
          await frame().locator('[data-testid="worker-error-file"]').innerText(),
          status.error.file,
        );
      }
      // The worker list stays usable and the view selector offers no worker view for the
      // broken one: only the run-level Distributed view (the run has two workers) and the
      // logdir-level Trends page (the logdir has several runs).
      assert.equal(await frame().locator('[data-testid="worker-select"]').isEnabled(), true);
      assert.deepEqual(
        await frame()
          .locator('[data-testid="view-select"] option')
          .evaluateAll((options) => options.map((o) => o.value)),
        ['distributed', 'trends'],
      );
      await screenshot('worker-error-light');
      await choose('worker-select', 'worker0');
      await waitOverview({ run: 'mixed', worker: 'worker0' });
      await assertTableMatchesApi(await selection());
      assertNoErrors();
    },
  );

  test(
    'loading shows real progress and asks no view before ready',
    { timeout: 180_000 },
    async (t) => {
      if (!env.haveSample) return t.skip('no samples/train_cpu.py');
      await newPage();
      const FAKE_POLLS = 6;
      let faked = 0;
      let fakeOver = false;
      const early = [];
      env.page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.pathname.endsWith(`/${PLUGIN}/overview`) && !fakeOver) early.push(request.url());
      });
      // The real status, reported as still loading (40 % read) for the first polls.
      await env.page.route(`**/data/plugin/${PLUGIN}/status?*`, async (route) => {
        const response = await route.fetch();
        const body = await response.json();
        if (faked < FAKE_POLLS) {
          faked += 1;
          await route.fulfill({
            response,
            json: {
              ...body,
              state: 'loading',
              bytes_done: Math.round(body.bytes_total * 0.4),
              views: [],
              error: null,
            },
          });
          return;
        }
        fakeOver = true;
        await route.fulfill({ response, json: body });
      });
      await env.page.goto(`${env.base}#${PLUGIN}&p.${PLUGIN}.run=mlp&p.${PLUGIN}.span=2`, {
        timeout: WAIT_MS,
      });
      const loading = frame().locator(
        '[data-testid="loading"][data-bytes-total]:not([data-bytes-total="0"])',
      );
      await loading.waitFor({ state: 'visible' });
      assert.match(await loading.innerText(), /40 %/);
      assert.equal(
        await loading.locator('[role="progressbar"]').getAttribute('aria-valuenow'),
        '40',
      );
      await screenshot('loading-light');
      await waitOverview({ run: 'mlp', span: '2' });
      assert.ok(faked >= FAKE_POLLS, `status was polled ${faked} times`);
      assert.deepEqual(early, [], 'a view route was called before status said ready');
      await env.page.unrouteAll({ behavior: 'ignoreErrors' });
      assertNoErrors();
    },
  );

  test('a link with the selection reopens the same view', { timeout: 180_000 }, async (t) => {
    if (!env.haveSample) return t.skip('no samples/train_cpu.py');
    await newPage();
    const hash = `#${PLUGIN}&p.${PLUGIN}.run=cnn&p.${PLUGIN}.worker=worker0&p.${PLUGIN}.span=2&p.${PLUGIN}.view=overview`;
    await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
    await waitOverview({ run: 'cnn', worker: 'worker0', span: '2' });
    assert.deepEqual(await selection(), { run: 'cnn', worker: 'worker0', span: '2' });
    assert.ok(env.page.url().endsWith(hash), `TensorBoard kept the hash: ${env.page.url()}`);
    // Editing the hash (as a user would in the address bar) is followed.
    await env.page.evaluate(
      (h) => {
        window.location.hash = h;
      },
      hash.replace(`p.${PLUGIN}.span=2`, `p.${PLUGIN}.span=3`),
    );
    await waitOverview({ run: 'cnn', worker: 'worker0', span: '3' });
    assert.equal(await frame().locator('[data-testid="span-select"]').inputValue(), '3');
    assertNoErrors();
  });

  test('the theme follows TensorBoard dark mode', { timeout: 180_000 }, async () => {
    await setTensorBoardTheme('Dark');
    await waitUntil(
      'the plugin to switch to dark',
      async () => (await frame().locator('html').getAttribute('data-theme')) === 'dark',
    );
    if (env.haveCorpus) {
      await choose('run-select', 'resnet50_gpu');
      await waitOverview({ run: 'resnet50_gpu' });
    }
    await sleep(500); // chart re-render after the theme change
    await screenshot(`overview-${(await selection()).run}-dark`);
    if (env.haveCorpus) {
      await choose('run-select', 'mixed');
      await waitOverview({ run: 'mixed' });
      await choose('worker-select', 'worker1');
      await frame().locator('[data-testid="worker-error"]').waitFor({ state: 'visible' });
      await screenshot('worker-error-dark');
    }
    await setTensorBoardTheme('Light');
    await waitUntil(
      'the plugin to switch back to light',
      async () => (await frame().locator('html').getAttribute('data-theme')) === 'light',
    );
    assertNoErrors();
  });

  test(
    'new runs appear without a reload and keep the selection',
    { timeout: 120_000 },
    async (t) => {
      if (!env.haveSample) return t.skip('no samples/train_cpu.py');
      await choose('run-select', 'cnn');
      await waitOverview({ run: 'cnn' });
      const before = await selection();
      const source = path.join(env.logdir, 'mlp');
      await copyGlob(source, '.pt.trace.json.gz', path.join(env.logdir, 'zz_late'));
      await waitUntil(
        'the new run in the Runs list',
        async () =>
          (await frame().locator('[data-testid="run-select"] option[value="zz_late"]').count()) ===
          1,
        45_000,
        500,
      );
      assert.deepEqual(await selection(), before, 'the selection is kept');
      await choose('run-select', 'zz_late');
      await waitOverview({ run: 'zz_late' });
      await assertTableMatchesApi(await selection());
      assertNoErrors();
    },
  );
});
