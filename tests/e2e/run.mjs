// Real-browser test of the kinetoscope plugin: a real TensorBoard on a temporary logdir,
// Debian's chromium driven by playwright-core, the plugin's iframe checked against the
// plugin's own HTTP API. Run with `npm run e2e` (builds the frontend first).
//
// Needs: <repo>/.venv with kinetoscope installed editable (pip install -e .) and torch;
// a chromium binary (CHROMIUM_PATH, else chromium / chromium-browser / google-chrome on
// PATH). Uses ../shared/corpus next to the repo when present (GPU run, broken worker).
// Screenshots and the TensorBoard log go to <repo>/test-output/e2e/.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CORPUS = path.resolve(REPO, '..', 'shared', 'corpus');
const OUT = path.join(REPO, 'test-output', 'e2e');
const VENV_BIN = path.join(REPO, '.venv', 'bin');
const PYTHON = process.env.KINETOSCOPE_PYTHON ?? path.join(VENV_BIN, 'python');
const TENSORBOARD = process.env.KINETOSCOPE_TENSORBOARD ?? path.join(VENV_BIN, 'tensorboard');
const PLUGIN = 'kinetoscope';
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
const IFRAME = `iframe[src*="plugin_entry.html?name=${PLUGIN}"]`;
const BROWSER_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const VIEWPORT = { width: 1440, height: 2000 };
const WAIT_MS = 60_000;

// ----- helpers ---------------------------------------------------------------------

function findChromium() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
      const file = path.join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {
        // not here
      }
    }
  }
  throw new Error('no chromium found: set CHROMIUM_PATH or put chromium on PATH');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(what, fn, timeoutMs = WAIT_MS, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ''}`);
}

async function copyGlob(dir, suffix, dest) {
  await mkdir(dest, { recursive: true });
  const names = (await readdir(dir)).filter((n) => n.endsWith(suffix)).sort();
  for (const name of names) await copyFile(path.join(dir, name), path.join(dest, name));
  return names;
}

/** Kills a detached child's whole process group; SIGKILL after a grace period. */
async function killGroup(child, graceMs = 5000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await Promise.race([exited, sleep(2000)]);
  }
}

// ----- shared state ----------------------------------------------------------------

const env = {
  tmp: '',
  logdir: '',
  base: '',
  tb: null,
  context: null,
  page: null,
  haveSample: false,
  haveCorpus: false,
  errors: [],
  shots: 0,
};

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
  return env.page.frameLocator(IFRAME);
}

async function screenshot(name) {
  env.shots += 1;
  const file = path.join(OUT, `${String(env.shots).padStart(2, '0')}-${name}.png`);
  await env.page.screenshot({ path: file });
  return file;
}

function watchErrors(page) {
  page.on('console', (message) => {
    if (message.type() === 'error') {
      const where = message.location()?.url ?? '';
      env.errors.push(`console error: ${message.text()} ${where}`.trim());
    }
  });
  page.on('pageerror', (error) => env.errors.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400 && response.url().includes(`/data/plugin/${PLUGIN}/`)) {
      env.errors.push(`HTTP ${response.status()} for ${response.url()}`);
    }
  });
}

function assertNoErrors() {
  const errors = env.errors.splice(0);
  assert.deepEqual(errors, [], `browser errors:\n${errors.join('\n')}`);
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
  for (const step of overview.steps) {
    assert.equal(
      Number(cells[`breakdown-${step.name}-total`]),
      step.duration_us,
      `${step.name} step time`,
    );
    for (const category of CATEGORIES) {
      const id = `breakdown-${step.name}-${category}`;
      assert.ok(id in cells, `missing cell ${id}`);
      assert.equal(Number(cells[id]), step.breakdown_us[category], id);
    }
  }
  for (const category of CATEGORIES) {
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
  watchErrors(env.page);
  return env.page;
}

/** Picks Light / Dark / Browser default in TensorBoard's own theme menu (its header). */
async function setTensorBoardTheme(label) {
  await env.page.getByRole('button', { name: 'Menu for changing light or dark theme' }).click();
  await env.page.getByRole('menuitem', { name: label, exact: true }).click();
}

// ----- the suite -------------------------------------------------------------------

describe('kinetoscope in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await mkdir(OUT, { recursive: true });
      for (const name of await readdir(OUT)) {
        if (name.endsWith('.png')) await rm(path.join(OUT, name));
      }
      assert.ok(existsSync(TENSORBOARD), `no TensorBoard at ${TENSORBOARD}: create .venv`);
      const built = path.join(REPO, 'tb_plugin', 'static', 'dist', 'index.js');
      assert.ok(existsSync(built), 'no built frontend: run `npm run build`');

      env.tmp = await mkdtemp(path.join(os.tmpdir(), 'kinetoscope-e2e-'));
      env.logdir = path.join(env.tmp, 'logdir');
      await mkdir(env.logdir, { recursive: true });

      const sample = path.join(REPO, 'samples', 'train_cpu.py');
      if (existsSync(sample)) {
        const result = spawnSync(PYTHON, [sample, '--logdir', env.logdir, '--no-ddp'], {
          cwd: REPO,
          encoding: 'utf8',
          timeout: 300_000,
        });
        assert.equal(
          result.status,
          0,
          `train_cpu.py failed (${result.status ?? result.signal}):\n${result.stderr?.slice(-3000)}`,
        );
        env.haveSample = true;
      }
      if (existsSync(CORPUS)) {
        const resnet = path.join(CORPUS, 'pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0');
        await copyGlob(resnet, '.gz', path.join(env.logdir, 'resnet50_gpu'));
        const mixed = path.join(env.logdir, 'mixed');
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
      assert.ok(env.haveSample || env.haveCorpus, 'neither samples/train_cpu.py nor the corpus');

      const port = await freePort();
      env.base = `http://127.0.0.1:${port}/`;
      const log = createWriteStream(path.join(OUT, 'tensorboard.log'));
      env.tb = spawn(
        TENSORBOARD,
        ['--logdir', env.logdir, '--host', '127.0.0.1', '--port', String(port)],
        {
          cwd: env.tmp,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            ...process.env,
            KINETOSCOPE_CACHE_DIR: path.join(env.tmp, 'cache'),
            KINETOSCOPE_RESCAN_SECONDS: '1',
          },
        },
      );
      env.tb.stdout.pipe(log);
      env.tb.stderr.pipe(log);
      process.once('exit', () => {
        try {
          process.kill(-env.tb.pid, 'SIGKILL');
        } catch {
          // gone
        }
      });
      await waitUntil(
        'TensorBoard to list the kinetoscope plugin',
        async () => {
          if (env.tb.exitCode !== null) throw new Error(`tensorboard exited ${env.tb.exitCode}`);
          const r = await fetch(new URL('data/plugins_listing', env.base));
          return r.ok && PLUGIN in (await r.json());
        },
        90_000,
        500,
      );
      const served = await fetch(new URL(`data/plugin/${PLUGIN}/static/index.js`, env.base));
      assert.equal(
        await served.text(),
        readFileSync(built, 'utf8'),
        'TensorBoard serves another index.js than the build: pip install -e . in .venv',
      );

      env.context = await chromium.launchPersistentContext(
        await mkdtemp(path.join(env.tmp, 'chromium-')),
        {
          executablePath: findChromium(),
          headless: true,
          args: BROWSER_ARGS,
          viewport: VIEWPORT,
          colorScheme: 'light',
          timeout: 60_000,
        },
      );
      env.context.setDefaultTimeout(WAIT_MS);
      for (const page of env.context.pages()) await page.close();
      await newPage();
    },
    { timeout: 600_000 },
  );

  after(
    async () => {
      try {
        await env.context?.close();
      } finally {
        await killGroup(env.tb);
        if (env.tmp) await rm(env.tmp, { recursive: true, force: true });
      }
    },
    { timeout: 60_000 },
  );

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
      // broken one: only the run-level Distributed view (the run has two workers).
      assert.equal(await frame().locator('[data-testid="worker-select"]').isEnabled(), true);
      assert.deepEqual(
        await frame()
          .locator('[data-testid="view-select"] option')
          .evaluateAll((options) => options.map((o) => o.value)),
        ['distributed'],
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
