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
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, sleep } from './harness.mjs';

const RESNET_DDP = 'gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp';
// A folder of its own: run.mjs clears every *.png of test-output/e2e/ when it starts.
const OUT = path.join(REPO, 'test-output', 'e2e', 'distributed');
const P = `p.${PLUGIN}.`;
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

/** h.waitUntil with this file's default timeout. */
function waitUntil(what, fn, timeoutMs = WAIT_MS, everyMs = 250) {
  return h.waitUntil(what, fn, timeoutMs, everyMs);
}

const shoot = h.screenshotter(OUT, { fullPage: true });

/** The files of one worker in a run folder, oldest span first. */
async function spanFiles(dir, worker) {
  const names = (await readdir(dir)).filter((n) => n.startsWith(`${worker}.`)).sort();
  assert.ok(names.length, `no trace of ${worker} in ${dir}`);
  return names;
}

// ----- shared state ----------------------------------------------------------------

const env = h.newEnv({
  haveCorpus: false,
});

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
  return h.pluginFrame(env.page);
}

async function screenshot(name) {
  return shoot(env.page, name);
}

function assertNoErrors() {
  h.assertNoErrors(env.errors);
}

async function newPage() {
  if (env.page) await env.page.close();
  env.page = await env.context.newPage();
  h.watchErrors(env.page, env.errors);
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

async function setTensorBoardTheme(label) {
  await h.setTensorBoardTheme(env.page, label);
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
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-e2e-dist-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: VIEWPORT,
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          // "mlp" (one worker) and "ddp_gloo" (rank0, rank1; three spans each).
          h.runSample(logdir, ['--runs', 'mlp']);
          const ddp = path.join(logdir, 'ddp_gloo');
          const firstSpan = {};
          for (const worker of ['rank0', 'rank1'])
            firstSpan[worker] = (await spanFiles(ddp, worker))[0];

          // Two good ranks and one whose file is not JSON.
          const broken = path.join(logdir, 'ddp_broken');
          await mkdir(broken, { recursive: true });
          for (const worker of ['rank0', 'rank1']) {
            await copyFile(
              path.join(ddp, firstSpan[worker]),
              path.join(broken, `${worker}.1.pt.trace.json.gz`),
            );
          }
          await writeFile(path.join(broken, 'rank2.1.pt.trace.json'), 'this is not json');

          // 40 ranks (copies of the two): the charts switch to heat strips.
          const many = path.join(logdir, 'many_ranks');
          await mkdir(many, { recursive: true });
          for (let i = 0; i < MANY_RANKS; i++) {
            await copyFile(
              path.join(ddp, firstSpan[`rank${i % 2}`]),
              path.join(many, `rank${i}.1.pt.trace.json.gz`),
            );
          }

          if (existsSync(path.join(CORPUS, RESNET_DDP))) {
            const dest = path.join(logdir, 'resnet50_ddp');
            await mkdir(dest, { recursive: true });
            for (const w of [0, 1]) {
              const name = `worker${w}_span1.pt.trace.json.gz`;
              await copyFile(path.join(CORPUS, RESNET_DDP, name), path.join(dest, name));
            }
            env.haveCorpus = true;
          }
        },
      });
      await newPage();
    },
    { timeout: 600_000 },
  );

  afterEach((t) => h.noteOutcome(env, t));
  after(() => h.stopEnv(env), { timeout: 60_000 });

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
    // Every run of this logdir of several runs also offers the logdir-level Trends page.
    assert.deepEqual(byName.mlp.views, ['trends'], 'mlp has one worker');
    assert.deepEqual(byName.ddp_gloo.views, ['distributed', 'trends']);

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
      // Every trace with events offers the trace view (status.views): the link lands there
      // (the link's t0/t1 were checked on every href above).
      await frame()
        .locator('.ks-view-host[data-view="trace"]')
        .first()
        .waitFor({ state: 'visible', timeout: WAIT_MS });
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
    // Rank 0 mostly waits for rank 1: the advice points at the stragglers, not at overlap.
    assert.deepEqual(
      view.recommendations.map((r) => r.id),
      ['communication_wait'],
    );
    const advice = frame().locator('[data-testid="recommendation-communication_wait"]');
    assert.match(await advice.innerText(), /waiting for other ranks/);
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
