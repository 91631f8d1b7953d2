// Real-browser checks of what a new user meets first, in a 1280 px wide window: old
// `#pytorch_profiler` links land on our tab; every table of the Operator, Kernel, Memory
// and Distributed views fits the page (no column off-screen, names readable) and hidden
// columns come back through the Columns menu; tiles show their whole text; offline,
// "Open in Perfetto" gives up with the download link.
//
// Same harness and conventions as run.mjs (see harness.mjs). The logdir holds
// tests/data/tiny.pt.trace.json, plus the old plugin's resnet50 V100 sample, a CPU-only
// trace and a two-rank DDP job when ../shared/corpus exists. Screenshots:
// test-output/e2e/newcomer/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, copyGlob, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'newcomer');
const VIEWPORT = { width: 1280, height: 1000 };
const WAIT_MS = 60_000;
const GPU_RUN = 'resnet50_v100';
const GPU_SAMPLE = path.join(
  CORPUS,
  'pytorch-kineto',
  'tb_plugin',
  'samples',
  'resnet50_num_workers_0',
);
const CPU_ONLY = path.join(CORPUS, 'hta', 'tests', 'data', 'cpu_only');
const DDP_RUN = 'resnet50_ddp';
const DDP_PAIR = path.join(
  CORPUS,
  'gaoteng-git-kineto',
  'tb_plugin',
  'test',
  'data',
  'tracing',
  'resnet50_newAPI_ddp',
);
const shoot = h.screenshotter(SHOTS, { fullPage: true });

/** The suite's shared state (harness.mjs's Env, plus whether the corpus runs are there). */
const env = h.newEnv({
  haveCorpus: false,
});

function frame() {
  return h.pluginFrame(env.page);
}

async function newPage() {
  if (env.page) await env.page.close();
  env.page = await env.context.newPage();
  h.watchErrors(env.page, env.errors);
  return env.page;
}

/** TensorBoard's page with `hash`, then waits for a ready view with that test id. */
async function open(hash, testid) {
  // A new document each time: a hash-only change would keep the view (and its state).
  await env.page.goto('about:blank');
  await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
  const selector = `[data-testid="${testid}"][data-ready="true"]:not([data-busy="true"])`;
  await frame().locator(selector).waitFor({ state: 'visible', timeout: WAIT_MS });
}

function ourHash(state) {
  const items = [PLUGIN];
  for (const [k, v] of Object.entries(state)) {
    items.push(`${encodeURIComponent(`p.${PLUGIN}.${k}`)}=${encodeURIComponent(v)}`);
  }
  return `#${items.join('&')}`;
}

/**
 * The tables in view: each one's width, the width it needs (wider: it scrolls sideways,
 * columns off-screen) and its first column's width (where the names are).
 */
async function tableWidths() {
  return frame()
    .locator('body')
    .evaluate(() =>
      [...document.querySelectorAll('.ks-table-scroll, table')]
        .filter((el) => el instanceof HTMLElement && el.offsetParent !== null)
        .map((el) => {
          const first = el.querySelector('.ks-th, th');
          return {
            testid: el.closest('[data-testid]')?.getAttribute('data-testid') ?? el.className,
            width: el.clientWidth,
            needs: el.scrollWidth,
            firstColumn: first ? Math.round(first.getBoundingClientRect().width) : 0,
          };
        }),
    );
}

describe('a new user at 1280 px', { timeout: 600_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-newcomer-',
        log: path.join(OUT, 'tensorboard-newcomer.log'),
        viewport: VIEWPORT,
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          await h.copyTrace(
            path.join(REPO, 'tests', 'data', 'tiny.pt.trace.json'),
            path.join(logdir, 'tiny'),
            'worker0.1.pt.trace.json',
          );
          if (existsSync(GPU_SAMPLE) && existsSync(CPU_ONLY) && existsSync(DDP_PAIR)) {
            await copyGlob(DDP_PAIR, '.pt.trace.json.gz', path.join(logdir, DDP_RUN));
            await copyGlob(GPU_SAMPLE, '.pt.trace.json.gz', path.join(logdir, GPU_RUN));
            await copyGlob(CPU_ONLY, '.json.gz', path.join(logdir, 'cpu_only'));
            env.haveCorpus = true;
          }
        },
      });
      await newPage();
    },
    { timeout: 300_000 },
  );

  after(async () => {
    await h.stopEnv(env);
  });

  test('an old #pytorch_profiler link opens our tab with its run and view', async () => {
    const listing = await (await fetch(new URL('data/plugins_listing', env.base))).json();
    assert.equal(listing.pytorch_profiler?.enabled, false, 'the old name is registered, tab-less');
    const old = '#pytorch_profiler&p.pytorch_profiler.run=tiny&p.pytorch_profiler.view=Operator';
    await open(old, 'operators');
    await waitUntil('the hash to name our tab', async () =>
      (await env.page.evaluate(() => location.hash)).startsWith(`#${PLUGIN}`),
    );
    const hash = await env.page.evaluate(() => location.hash);
    assert.match(hash, /p\.kinetoscope\.run=tiny/);
    assert.doesNotMatch(hash, /pytorch_profiler/);
    await shoot(env.page, 'old-link');
    h.assertNoErrors(env.errors);
  });

  test('every table of the Operator, Kernel, Memory and Distributed views fits 1280 px', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const pages = [
      ['operators', 'op-table', { 'operators.group_by': 'name' }],
      ['operators', 'op-table', { 'operators.group_by': 'shape' }],
      ['kernels', 'kernel-table', { 'kernels.group_by': 'name' }],
      ['kernels', 'kernel-table', { 'kernels.group_by': 'op' }],
      ['memory', 'memory-op-table', {}],
    ];
    const measured = [];
    for (const [view, table, extra] of pages) {
      const state = { run: GPU_RUN, worker: 'worker0', span: '1', view, ...extra };
      await open(ourHash(state), view);
      await frame().locator(`[data-testid="${table}"] .ks-twindow [role="row"]`).first().waitFor();
      await shoot(env.page, `${view}-${Object.values(extra).join('-') || 'default'}`);
      measured.push({ view, extra, tables: await tableWidths() });
    }
    // The run-level Distributed view of a two-rank job.
    await open(ourHash({ run: DDP_RUN, view: 'distributed' }), 'distributed');
    await shoot(env.page, 'distributed');
    measured.push({ view: 'distributed', extra: {}, tables: await tableWidths() });
    await writeFile(path.join(SHOTS, 'tables.json'), JSON.stringify(measured, null, 1));
    const sideways = measured.flatMap((m) =>
      m.tables.filter((t) => t.needs > t.width).map((t) => `${m.view} ${t.testid}`),
    );
    assert.deepEqual(sideways, [], 'tables that scroll sideways at 1280 px');
    // Kernel names get room (they were cut at about 25 characters).
    const kernels = measured.find((m) => m.view === 'kernels')?.tables ?? [];
    assert.ok(
      kernels.some((k) => k.firstColumn >= 320),
      JSON.stringify(kernels),
    );
    h.assertNoErrors(env.errors);
  });

  test('summary tiles show their whole text', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    for (const view of ['overview', 'operators', 'kernels', 'memory']) {
      await open(ourHash({ run: GPU_RUN, worker: 'worker0', span: '1', view }), view);
      const cut = await frame()
        .locator('.ks-tile')
        .evaluateAll((tiles) =>
          tiles
            .flatMap((tile) => [...tile.querySelectorAll('*')])
            .filter((el) => el.scrollWidth > el.clientWidth + 1 && el.children.length === 0)
            .map((el) => el.textContent),
        );
      assert.deepEqual(cut, [], `${view}: tile text cut off`);
    }
    h.assertNoErrors(env.errors);
  });

  test('the column chooser brings a hidden column back', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    await open(ourHash({ run: GPU_RUN, worker: 'worker0', span: '1', view: 'kernels' }), 'kernels');
    const chooser = frame().locator('[data-testid="kernel-table-columns"]');
    assert.match(await chooser.locator('summary').innerText(), /hidden/);
    const grid = frame().getByRole('columnheader', { name: 'Grid' });
    assert.equal(await grid.isVisible(), false);
    await chooser.locator('summary').click();
    await chooser.locator('input[data-col="grid"]').check();
    await grid.waitFor({ state: 'visible' });
    await shoot(env.page, 'kernels-grid-shown');
    h.assertNoErrors(env.errors);
  });

  test('CPU-only traces: no tensor-core column in the operator table', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const listing = await (await fetch(new URL(`data/plugin/${PLUGIN}/runs`, env.base))).json();
    const run = listing.runs.find((r) => r.name === 'cpu_only');
    const worker = run.workers[0].name;
    await open(
      ourHash({ run: 'cpu_only', worker, span: run.workers[0].spans[0].name, view: 'operators' }),
      'operators',
    );
    await frame().getByRole('columnheader', { name: 'Calls' }).waitFor();
    assert.equal(
      await frame().getByRole('columnheader', { name: 'TC eligible' }).isVisible(),
      false,
    );
    await shoot(env.page, 'operators-cpu-only');
    h.assertNoErrors(env.errors);
  });

  test(
    'offline, Open in Perfetto gives up with the download link',
    { timeout: 120_000 },
    async () => {
      // No internet: the Perfetto page cannot load.
      await env.context.route('https://ui.perfetto.dev/**', (route) => route.abort());
      await open(ourHash({ run: 'tiny', worker: 'worker0', span: '1', view: 'trace' }), 'trace');
      const popup = env.context.waitForEvent('page');
      await frame().locator('[data-testid="trace-open-perfetto"]').click();
      const tab = await popup;
      const link = frame().locator('[data-testid="trace-perfetto-download"]');
      await link.waitFor({ state: 'visible', timeout: 60_000 });
      assert.match((await link.getAttribute('href')) ?? '', /download\?/);
      await shoot(env.page, 'perfetto-offline');
      await tab.close();
      h.assertNoErrors(env.errors);
    },
  );
});
