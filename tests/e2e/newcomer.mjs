// Real-browser checks of what a new user meets first, in a 1280 px wide window: old
// `#pytorch_profiler` links land on our tab, and every table of the Operator, Kernel and
// Memory views fits the page (no column off-screen, names readable).
//
// Same harness and conventions as run.mjs (see harness.mjs). The logdir holds
// tests/data/tiny.pt.trace.json, plus the old plugin's resnet50 V100 sample and a CPU-only
// trace when ../shared/corpus exists. Screenshots: test-output/e2e/newcomer/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
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
const shoot = h.screenshotter(SHOTS, { fullPage: true });

/** The suite's shared state (harness.mjs's Env, plus whether the corpus runs are there). */
const env = {
  tmp: '',
  logdir: '',
  base: '',
  tb: null,
  context: null,
  page: null,
  haveCorpus: false,
  errors: [],
};

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
  await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
  const selector = `[data-testid="${testid}"][data-ready="true"][data-busy="false"]`;
  await frame().locator(selector).waitFor({ state: 'visible', timeout: WAIT_MS });
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
          await mkdir(path.join(logdir, 'tiny'), { recursive: true });
          await copyFile(
            path.join(REPO, 'tests', 'data', 'tiny.pt.trace.json'),
            path.join(logdir, 'tiny', 'worker0.1.pt.trace.json'),
          );
          if (existsSync(GPU_SAMPLE) && existsSync(CPU_ONLY)) {
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
});
