// Real-browser test of the Distributed view (run-level): a real TensorBoard on a temporary
// logdir, Debian's chromium driven by playwright-core, the page checked against the
// plugin's own `distributed` route. Run with `npm run e2e` (builds the frontend first).
//
// Logdir: samples/train_cpu.py --runs mlp (the one-worker run "mlp" and the 2-rank gloo
// run "ddp_gloo"), "ddp_broken" (ddp_gloo's first spans plus a rank whose file is not
// JSON), "many_ranks" (40 copies of ddp_gloo's ranks: heat strips), and when
// ../shared/corpus exists "resnet50_ddp" (the old plugin's 2-GPU DDP pair).
// Needs what run.mjs needs: .venv with kinetoscope installed editable and torch; chromium
// (CHROMIUM_PATH, else chromium / chromium-browser / google-chrome on PATH).
// Screenshots go to test-output/e2e/distributed/NN-<state>.png, TensorBoard's log to
// test-output/e2e/distributed/tensorboard.log.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CORPUS = path.resolve(REPO, '..', 'shared', 'corpus');
const RESNET_DDP = 'gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp';
// A folder of its own: run.mjs clears every *.png of test-output/e2e/ when it starts.
const OUT = path.join(REPO, 'test-output', 'e2e', 'distributed');
const VENV_BIN = path.join(REPO, '.venv', 'bin');
const PYTHON = process.env.KINETOSCOPE_PYTHON ?? path.join(VENV_BIN, 'python');
const TENSORBOARD = process.env.KINETOSCOPE_TENSORBOARD ?? path.join(VENV_BIN, 'tensorboard');
const PLUGIN = 'kinetoscope';
const P = `p.${PLUGIN}.`;
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
const WAIT_MS = 90_000;
const MANY_RANKS = 40;
/** Per-rank table field -> the API field of a rank (all steps) and of a rank's step. */
const RANK_FIELDS = {
  step_time: ['step_time_us', 'duration_us'],
  computation: ['computation_us', 'computation_us'],
  overlap: ['overlap_us', 'overlap_us'],
  communication: ['communication_us', 'communication_us'],
  other: ['other_us', 'other_us'],
  sync_wait: ['sync_wait_us', 'sync_wait_us'],
  transfer: ['transfer_us', 'transfer_us'],
};
const COLLECTIVE_FIELDS = [
  'calls',
  'bytes',
  'total_us',
  'avg_us',
  'algbw_gbps',
  'busbw_gbps',
  'sync_wait_us',
  'transfer_us',
];
/** Worker-span routes: the Distributed view must call none of them. */
const WORKER_ROUTES = ['status', 'overview', 'operators', 'kernels', 'memory', 'tracks', 'trace'];

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

/** The files of one worker in a run folder, oldest span first. */
async function spanFiles(dir, worker) {
  const names = (await readdir(dir)).filter((n) => n.startsWith(`${worker}.`)).sort();
  assert.ok(names.length, `no trace of ${worker} in ${dir}`);
  return names;
}

// ----- shared state ----------------------------------------------------------------

const env = {
  tmp: '',
  logdir: '',
  base: '',
  tb: null,
  context: null,
  page: null,
  haveCorpus: false,
  errors: [],
  shots: 0,
};

async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: await response.json() };
}

/** The distributed view of a run from the API, waiting while it is computed (202). */
async function apiDistributed(run, span) {
  return waitUntil(
    `distributed ${run} from the API`,
    async () => {
      const { status, body } = await api('distributed', span ? { run, span } : { run });
      if (status === 200) return body;
      if (status === 202) return null;
      throw new Error(`distributed answered ${status}: ${JSON.stringify(body)}`);
    },
    180_000,
    500,
  );
}

function frame() {
  return env.page.frameLocator(IFRAME);
}

async function screenshot(name) {
  env.shots += 1;
  const file = path.join(OUT, `${String(env.shots).padStart(2, '0')}-${name}.png`);
  await env.page.screenshot({ path: file, fullPage: true });
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

async function newPage() {
  if (env.page) await env.page.close();
  env.page = await env.context.newPage();
  watchErrors(env.page);
  return env.page;
}

async function choose(testid, value) {
  await frame().locator(`[data-testid="${testid}"]`).selectOption(value, { timeout: WAIT_MS });
}

async function viewOptions() {
  return frame()
    .locator('[data-testid="view-select"] option')
    .evaluateAll((options) => options.map((o) => o.value));
}

async function waitOverview(key = {}) {
  let selector = '[data-testid="overview"][data-ready="true"]';
  for (const [k, v] of Object.entries(key)) selector += `[data-${k}="${v}"]`;
  await frame().locator(selector).waitFor({ state: 'visible', timeout: WAIT_MS });
}

async function waitDistributed(run, span) {
  let selector = `[data-testid="distributed"][data-ready="true"][data-run="${run}"]`;
  if (span) selector += `[data-span="${span}"]`;
  await frame().locator(selector).waitFor({ state: 'visible', timeout: 180_000 });
}

/** Our keys of the top page's hash. */
function hashState(url = env.page.url()) {
  const hash = new URL(url).hash.slice(1);
  const state = {};
  for (const item of hash.split('&')) {
    const [k, v] = item.split('=');
    if (v !== undefined && decodeURIComponent(k).startsWith(P)) {
      state[decodeURIComponent(k).slice(P.length)] = decodeURIComponent(v);
    }
  }
  return state;
}

/**
 * Every cell with a data-value in a virtual table as {testid: value}; scrolls the body
 * from top to bottom so rows outside the viewport are read too.
 */
async function readCells(testid) {
  return frame()
    .locator(`[data-testid="${testid}"]`)
    .evaluate(async (table) => {
      const cells = {};
      const collect = () => {
        for (const el of table.querySelectorAll('[data-testid][data-value]')) {
          cells[el.dataset.testid] = el.dataset.value;
        }
      };
      const viewport = table.querySelector('.ks-tviewport');
      const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
      viewport.scrollTop = 0;
      await tick();
      await tick();
      collect();
      const step = Math.max(1, viewport.clientHeight - 20);
      while (viewport.scrollTop + viewport.clientHeight < viewport.scrollHeight) {
        const before = viewport.scrollTop;
        viewport.scrollTop = before + step;
        await tick();
        await tick();
        collect();
        if (viewport.scrollTop === before) break;
      }
      viewport.scrollTop = 0;
      return cells;
    });
}

const cellNumber = (value) => (value === '' || value === undefined ? null : Number(value));

/** The per-rank table holds the API's numbers (all steps, or the given job step). */
async function assertRankTable(view, stepName) {
  const cells = await readCells('rank-table');
  const job = stepName ? view.steps.find((s) => s.name === stepName) : undefined;
  for (const rank of view.ranks) {
    assert.equal(
      cellNumber(cells[`rank-${rank.rank}-rank`]),
      rank.rank,
      `row of rank ${rank.rank}`,
    );
    const own = job
      ? rank.steps.find((s) =>
          job.number === null ? s.name === job.name : s.number === job.number,
        )
      : rank;
    for (const [field, [total, perStep]] of Object.entries(RANK_FIELDS)) {
      const id = `rank-${rank.rank}-${field}`;
      assert.ok(id in cells, `missing cell ${id}`);
      const expected = own ? own[job ? perStep : total] : null;
      assert.equal(cellNumber(cells[id]), expected, `${id}${job ? ` in ${job.name}` : ''}`);
    }
    assert.equal(
      cellNumber(cells[`rank-${rank.rank}-unmatched`]),
      rank.unmatched_collectives,
      `unmatched of rank ${rank.rank}`,
    );
    if (!job) {
      const late = view.stragglers.find((s) => s.rank === rank.rank);
      assert.equal(cellNumber(cells[`rank-${rank.rank}-late`]), late ? late.late_by_us : 0);
    }
  }
  const rows = Object.keys(cells).filter((id) => /^rank-\d+-rank$/.test(id));
  assert.equal(rows.length, view.ranks.length, 'one row per rank');
  return cells;
}

async function assertCollectiveTable(collectives) {
  const cells = await readCells('collective-table');
  for (const c of collectives) {
    for (const field of COLLECTIVE_FIELDS) {
      const id = `coll-${c.name}-${field}`;
      assert.ok(id in cells, `missing cell ${id}`);
      assert.equal(cellNumber(cells[id]), c[field], id);
    }
  }
  const rows = Object.keys(cells).filter((id) => id.endsWith('-calls'));
  assert.equal(rows.length, collectives.length, 'one row per collective type');
}

/** Picks Light / Dark / Browser default in TensorBoard's own theme menu (its header). */
async function setTensorBoardTheme(label) {
  await env.page.getByRole('button', { name: 'Menu for changing light or dark theme' }).click();
  await env.page.getByRole('menuitem', { name: label, exact: true }).click();
}

async function openDistributed(run) {
  await env.page.goto(`${env.base}#${PLUGIN}&${P}run=${run}&${P}view=distributed`, {
    timeout: WAIT_MS,
  });
  await waitDistributed(run);
}

// ----- the suite -------------------------------------------------------------------

describe('the Distributed view in TensorBoard', { timeout: 1_200_000 }, () => {
  before(
    async () => {
      await mkdir(OUT, { recursive: true });
      for (const name of await readdir(OUT)) {
        if (name.endsWith('.png')) await rm(path.join(OUT, name));
      }
      assert.ok(existsSync(TENSORBOARD), `no TensorBoard at ${TENSORBOARD}: create .venv`);
      const built = path.join(REPO, 'tb_plugin', 'static', 'dist', 'index.js');
      assert.ok(existsSync(built), 'no built frontend: run `npm run build`');

      env.tmp = await mkdtemp(path.join(os.tmpdir(), 'kinetoscope-e2e-dist-'));
      env.logdir = path.join(env.tmp, 'logdir');
      await mkdir(env.logdir, { recursive: true });

      // "mlp" (one worker) and "ddp_gloo" (rank0, rank1; three spans each).
      const result = spawnSync(
        PYTHON,
        [path.join(REPO, 'samples', 'train_cpu.py'), '--logdir', env.logdir, '--runs', 'mlp'],
        { cwd: REPO, encoding: 'utf8', timeout: 300_000 },
      );
      assert.equal(
        result.status,
        0,
        `train_cpu.py failed (${result.status ?? result.signal}):\n${result.stderr?.slice(-3000)}`,
      );
      const ddp = path.join(env.logdir, 'ddp_gloo');
      const firstSpan = {};
      for (const worker of ['rank0', 'rank1'])
        firstSpan[worker] = (await spanFiles(ddp, worker))[0];

      // Two good ranks and one whose file is not JSON.
      const broken = path.join(env.logdir, 'ddp_broken');
      await mkdir(broken, { recursive: true });
      for (const worker of ['rank0', 'rank1']) {
        await copyFile(
          path.join(ddp, firstSpan[worker]),
          path.join(broken, `${worker}.1.pt.trace.json.gz`),
        );
      }
      await writeFile(path.join(broken, 'rank2.1.pt.trace.json'), 'this is not json');

      // 40 ranks (copies of the two): the charts switch to heat strips.
      const many = path.join(env.logdir, 'many_ranks');
      await mkdir(many, { recursive: true });
      for (let i = 0; i < MANY_RANKS; i++) {
        await copyFile(
          path.join(ddp, firstSpan[`rank${i % 2}`]),
          path.join(many, `rank${i}.1.pt.trace.json.gz`),
        );
      }

      if (existsSync(path.join(CORPUS, RESNET_DDP))) {
        const dest = path.join(env.logdir, 'resnet50_ddp');
        await mkdir(dest, { recursive: true });
        for (const w of [0, 1]) {
          const name = `worker${w}_span1.pt.trace.json.gz`;
          await copyFile(path.join(CORPUS, RESNET_DDP, name), path.join(dest, name));
        }
        env.haveCorpus = true;
      }

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

  test('Distributed is offered for multi-worker runs only', { timeout: 240_000 }, async () => {
    const runs = (await api('runs')).body.runs;
    const byName = Object.fromEntries(runs.map((r) => [r.name, r]));
    for (const run of runs) {
      assert.equal(
        (run.views ?? []).includes('distributed'),
        run.workers.length >= 2,
        `${run.name}: views ${JSON.stringify(run.views)} with ${run.workers.length} workers`,
      );
    }
    assert.deepEqual(byName.mlp.views, [], 'mlp has one worker');
    assert.deepEqual(byName.ddp_gloo.views, ['distributed']);

    await env.page.goto(`${env.base}#${PLUGIN}&${P}run=mlp`, { timeout: WAIT_MS });
    await waitOverview({ run: 'mlp' });
    assert.ok(
      !(await viewOptions()).includes('distributed'),
      'a one-worker run has no Distributed',
    );
    await choose('run-select', 'ddp_gloo');
    await waitOverview({ run: 'ddp_gloo' });
    const options = await viewOptions();
    assert.ok(options.includes('overview') && options.includes('distributed'), String(options));
    assert.equal(
      await frame().locator('[data-testid="view-select"] option[value="distributed"]').innerText(),
      'Distributed',
    );
    await choose('run-select', 'mlp');
    await waitOverview({ run: 'mlp' });
    assert.ok(!(await viewOptions()).includes('distributed'), 'gone again for the one-worker run');
    assertNoErrors();
  });

  test(
    'loading shows ranks done / total and no worker route is called',
    { timeout: 240_000 },
    async () => {
      await newPage();
      const FAKE_POLLS = 4;
      let faked = 0;
      const workerCalls = [];
      env.page.on('request', (request) => {
        const route = new URL(request.url()).pathname.split(`/${PLUGIN}/`)[1];
        if (WORKER_ROUTES.includes(route)) workerCalls.push(request.url());
      });
      await env.page.route(`**/data/plugin/${PLUGIN}/distributed?*`, async (route) => {
        if (faked < FAKE_POLLS) {
          faked += 1;
          await route.fulfill({
            status: 202,
            contentType: 'application/json',
            body: JSON.stringify({
              run: 'ddp_gloo',
              span: '1',
              state: 'loading',
              ranks_done: 1,
              ranks_total: 2,
            }),
          });
          return;
        }
        await route.continue();
      });
      await env.page.goto(`${env.base}#${PLUGIN}&${P}run=ddp_gloo&${P}view=distributed`, {
        timeout: WAIT_MS,
      });
      const loading = frame().locator(
        '[data-testid="distributed-loading"][data-ranks-done="1"][data-ranks-total="2"]',
      );
      await loading.waitFor({ state: 'visible' });
      assert.match(await loading.innerText(), /1 of 2 ranks/);
      assert.equal(
        await loading.locator('[role="progressbar"]').getAttribute('aria-valuenow'),
        '50',
      );
      await screenshot('loading-light');
      await waitDistributed('ddp_gloo', '1');
      assert.ok(faked >= FAKE_POLLS, `distributed was polled ${faked} times`);
      assert.deepEqual(workerCalls, [], 'the run-level view called a worker route');
      assert.equal(
        await frame().locator('[data-testid="view-select"]').inputValue(),
        'distributed',
      );
      assert.equal(
        await frame().locator('[data-testid="worker-select"]').isDisabled(),
        true,
        'the Workers list is off for a run-level view',
      );
      await env.page.unrouteAll({ behavior: 'ignoreErrors' });
      assertNoErrors();
    },
  );

  test('per-rank numbers, collectives and state in the URL', { timeout: 300_000 }, async () => {
    await newPage();
    const view = await apiDistributed('ddp_gloo');
    assert.equal(view.ranks.length, 2);
    await openDistributed('ddp_gloo');
    await assertRankTable(view);
    await assertCollectiveTable(view.collectives);
    const summary = await frame().locator('[data-testid="tile-ranks"]').innerText();
    assert.match(summary, new RegExp(`\\b${view.ranks_found}\\b`));
    assert.match(
      await frame().locator('[data-testid="tile-backend"]').innerText(),
      new RegExp(view.backend),
    );
    assert.equal(
      await frame().locator('[data-testid="rank-breakdown-chart"]').getAttribute('data-mode'),
      'bars',
    );
    await frame().locator('[data-testid="rank-breakdown-chart"] canvas').first().waitFor();
    await frame().locator('[data-testid="no-gpus"]').waitFor();
    await screenshot('ddp_gloo-light');

    // One step: the table shows that step of every rank; the step is kept in the URL.
    const step = view.steps.at(-1);
    await choose('step-select', step.name);
    await assertRankTable(view, step.name);
    await waitUntil('the step in the URL', () => hashState()['distributed.step'] === step.name);

    // One rank's collectives.
    const rank = view.ranks[1];
    await choose('collective-scope', String(rank.rank));
    await assertCollectiveTable(rank.collectives);
    await waitUntil(
      'the rank in the URL',
      () => hashState()['distributed.rank'] === String(rank.rank),
    );

    // Sorting by computation, descending; kept in the URL and restored from it.
    await frame()
      .locator('[data-testid="rank-table"]')
      .getByRole('columnheader', { name: 'Computation' })
      .click();
    await waitUntil(
      'the sort in the URL',
      () => hashState()['distributed.sort'] === 'computation:desc',
    );
    const ownStep = (r) => r.steps.find((s) => s.number === step.number);
    const top = view.ranks
      .filter(ownStep)
      .sort((a, b) => ownStep(b).computation_us - ownStep(a).computation_us)[0];
    const firstRow = frame().locator('[data-testid="rank-table"] .ks-twindow [data-rank]').first();
    assert.equal(await firstRow.getAttribute('data-rank'), String(top.rank));
    const link = env.page.url();
    await newPage();
    await env.page.goto(link, { timeout: WAIT_MS });
    await waitDistributed('ddp_gloo');
    assert.equal(await frame().locator('[data-testid="step-select"]').inputValue(), step.name);
    assert.equal(
      await frame().locator('[data-testid="collective-scope"]').inputValue(),
      String(rank.rank),
    );
    assert.equal(
      await frame()
        .locator('[data-testid="rank-table"] .ks-twindow [data-rank]')
        .first()
        .getAttribute('data-rank'),
      String(top.rank),
    );
    await assertRankTable(view, step.name);
    await choose('step-select', '');
    await choose('collective-scope', '');

    // Another span: every rank's span 2.
    await choose('span-select', '2');
    await waitDistributed('ddp_gloo', '2');
    await assertRankTable(await apiDistributed('ddp_gloo', '2'));
    await choose('span-select', '1');
    await waitDistributed('ddp_gloo', '1');
    assertNoErrors();
  });

  test(
    'a straggler row links to the trace view of its rank and step',
    { timeout: 240_000 },
    async () => {
      const view = await apiDistributed('ddp_gloo');
      const late = view.steps.filter((s) => s.straggler);
      assert.ok(late.length > 0, 'the API finds stragglers in ddp_gloo');
      const cells = await readCells('straggler-table');
      for (const step of late) {
        const s = step.straggler;
        assert.equal(cellNumber(cells[`straggler-${step.name}-rank`]), s.rank);
        assert.equal(cellNumber(cells[`straggler-${step.name}-late_by`]), s.late_by_us);
        assert.equal(cells[`straggler-${step.name}-cause`], s.cause);
        const a = frame().locator(`[data-testid="straggler-${step.name}-link"]`);
        await a.scrollIntoViewIfNeeded();
        const href = await a.getAttribute('href');
        assert.equal(await a.getAttribute('target'), '_top');
        const state = hashState(href);
        assert.equal(state.run, 'ddp_gloo');
        assert.equal(state.worker, s.window.worker);
        assert.equal(state.span, s.window.span);
        assert.equal(state.view, 'trace');
        assert.equal(Number(state.t0), s.window.start_us, `${step.name} t0`);
        assert.equal(Number(state.t1), s.window.end_us, `${step.name} t1`);
        assert.ok(new URL(href).hash.startsWith(`#${PLUGIN}&`), 'the link keeps the plugin tab');
      }

      // Following a link: the shell leaves the run-level view for that worker's span, with
      // the window in the URL (the trace view when it is registered, else the worker's first view).
      const target = late.at(-1).straggler;
      await frame()
        .locator(`[data-testid="straggler-${late.at(-1).name}-link"]`)
        .click();
      await waitUntil(
        'the shell to follow the link',
        async () =>
          (await frame().locator('[data-testid="worker-select"]').inputValue()) ===
            target.window.worker &&
          (await frame().locator('[data-testid="worker-select"]').isEnabled()),
      );
      const state = hashState();
      assert.equal(state.worker, target.window.worker);
      assert.equal(state.span, target.window.span);
      assert.equal(Number(state.t0), target.window.start_us);
      assert.equal(Number(state.t1), target.window.end_us);
      // The trace view when the worker offers it, else the worker's first view.
      const status = (
        await api('status', { run: 'ddp_gloo', worker: target.window.worker, span: '1' })
      ).body;
      const shown = status.views.includes('trace')
        ? frame().locator('.ks-view-host[data-view="trace"]')
        : frame().locator(
            `[data-testid="overview"][data-ready="true"][data-worker="${target.window.worker}"]`,
          );
      await shown.first().waitFor({ state: 'visible', timeout: WAIT_MS });
      await screenshot('straggler-link-followed');
      // Back returns to the Distributed view.
      await env.page.goBack();
      await waitDistributed('ddp_gloo');
      assertNoErrors();
    },
  );

  test(
    'broken ranks are listed with their errors; the others render',
    { timeout: 240_000 },
    async () => {
      const view = await apiDistributed('ddp_broken');
      assert.equal(view.errors.length, 1);
      assert.equal(view.ranks.length, 2);
      await choose('run-select', 'ddp_broken');
      await waitDistributed('ddp_broken');
      const item = frame().locator('[data-testid="rank-errors"] [data-testid="rank-error-rank2"]');
      await item.waitFor({ state: 'visible' });
      assert.equal(
        await item.locator('[data-testid="rank-error-message"]').innerText(),
        view.errors[0].message,
      );
      await assertRankTable(view);
      await screenshot('broken-rank-light');
      assertNoErrors();
    },
  );

  test('40 ranks: heat strips and a virtual table', { timeout: 300_000 }, async () => {
    const view = await apiDistributed('many_ranks');
    assert.equal(view.ranks.length, MANY_RANKS);
    await choose('run-select', 'many_ranks');
    await waitDistributed('many_ranks');
    for (const id of ['rank-breakdown-chart', 'rank-sync-chart']) {
      assert.equal(
        await frame().locator(`[data-testid="${id}"]`).getAttribute('data-mode'),
        'heat',
      );
    }
    const strip = frame().locator('[data-testid="rank-breakdown-heat"]');
    assert.equal(await strip.getAttribute('data-columns'), String(MANY_RANKS));
    const rendered = await frame()
      .locator('[data-testid="rank-table"] .ks-twindow [data-rank]')
      .count();
    assert.ok(rendered < MANY_RANKS, `the table renders ${rendered} of ${MANY_RANKS} rows`);
    await assertRankTable(view);
    // Hovering a column shows that rank's numbers; clicking it picks the rank.
    const canvas = strip.locator('canvas');
    const box = await canvas.boundingBox();
    await env.page.mouse.move(box.x + 2, box.y + 10);
    const tip = strip.locator('.ks-heat-tip');
    await tip.waitFor({ state: 'visible' });
    assert.match(await tip.innerText(), /^Rank 0 · rank0/);
    await env.page.mouse.click(box.x + 2, box.y + 10);
    assert.equal(await frame().locator('[data-testid="collective-scope"]').inputValue(), '0');
    await screenshot('many-ranks-light');
    await choose('collective-scope', '');
    assertNoErrors();
  });

  test('a GPU job shows each rank’s device', { timeout: 240_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const view = await apiDistributed('resnet50_ddp');
    await choose('run-select', 'resnet50_ddp');
    await waitDistributed('resnet50_ddp');
    await assertRankTable(view);
    await assertCollectiveTable(view.collectives);
    const cells = await readCells('gpu-table');
    for (const rank of view.ranks) {
      for (const d of rank.devices) {
        assert.equal(cellNumber(cells[`gpu-${rank.rank}-${d.id}-util`]), d.utilization_pct);
      }
    }
    await screenshot('resnet50_ddp-light');
    assertNoErrors();
  });

  test('the theme follows TensorBoard dark mode', { timeout: 240_000 }, async () => {
    await setTensorBoardTheme('Dark');
    await waitUntil(
      'the plugin to switch to dark',
      async () => (await frame().locator('html').getAttribute('data-theme')) === 'dark',
    );
    for (const run of ['ddp_gloo', 'many_ranks', ...(env.haveCorpus ? ['resnet50_ddp'] : [])]) {
      await choose('run-select', run);
      await waitDistributed(run);
      await sleep(600); // chart re-render after the theme change
      await screenshot(`${run}-dark`);
    }
    await setTensorBoardTheme('Light');
    await waitUntil(
      'the plugin to switch back to light',
      async () => (await frame().locator('html').getAttribute('data-theme')) === 'light',
    );
    assertNoErrors();
  });
});
