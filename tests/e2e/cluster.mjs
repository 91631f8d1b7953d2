// Real-browser test of the Distributed view's communication groups: a real TensorBoard on a
// logdir of synthetic jobs written as Kineto traces by tests/synthetic_job.py (the same
// generator the Python tests use, with a known slow rank and a known slow link), Debian's
// chromium driven by playwright-core, the page checked against the plugin's own route.
//
// Runs: "job" (TP 2 x PP 4 x DP 4 = 32 ranks; rank 9 computes 800 µs longer, group "2"
// transfers 3x slower) and "wide" (PP 80 x DP 2 = 160 ranks: the heat map draws blocks of
// 2 ranks). Run with `node --test tests/e2e/cluster.mjs` after `npm run build`.
// Screenshots go to test-output/e2e/cluster/NN-<state>.png.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PLUGIN, PYTHON, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e', 'cluster');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 180_000;
const JOBS = {
  job: 'Layout(2, 4, 4, slow_ranks={9}, slow_groups={"2"})',
  wide: 'Layout(1, 80, 2)',
};

const env = h.newEnv({});
const shoot = h.screenshotter(OUT, { fullPage: true });

function writeJobs(logdir) {
  const lines = ['import sys', `sys.path.insert(0, ${JSON.stringify(path.join(REPO, 'tests'))})`];
  lines.push('from pathlib import Path', 'from synthetic_job import Layout, write_traces');
  for (const [run, layout] of Object.entries(JOBS)) {
    lines.push(`write_traces(${layout}, Path(${JSON.stringify(path.join(logdir, run))}))`);
  }
  const done = spawnSync(PYTHON, ['-c', lines.join('\n')], { encoding: 'utf8', cwd: REPO });
  assert.equal(done.status, 0, done.stderr);
}

async function apiDistributed(run) {
  return h.waitUntil(
    `distributed ${run} from the API`,
    async () => {
      const url = new URL(`/data/plugin/${PLUGIN}/distributed`, env.base);
      url.searchParams.set('run', run);
      const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      if (response.status === 202) return null;
      assert.equal(response.status, 200);
      return response.json();
    },
    WAIT_MS,
    500,
  );
}

function frame() {
  return h.pluginFrame(env.page);
}

async function openDistributed(run) {
  await env.page.goto(`${env.base}#${PLUGIN}&${P}run=${run}&${P}view=distributed`, {
    timeout: WAIT_MS,
  });
  await frame()
    .locator(`[data-testid="distributed"][data-ready="true"][data-run="${run}"]`)
    .waitFor({ state: 'visible', timeout: WAIT_MS });
}

/** Our keys of a URL's hash. */
function hashState(url) {
  const state = {};
  for (const item of new URL(url).hash.slice(1).split('&')) {
    const [k, v] = item.split('=');
    if (v !== undefined && decodeURIComponent(k).startsWith(P)) {
      state[decodeURIComponent(k).slice(P.length)] = decodeURIComponent(v);
    }
  }
  return state;
}

/** The group table's verdict cells, read while scrolling the virtual table. */
async function verdictCells() {
  return frame()
    .locator('[data-testid="group-table"]')
    .evaluate(async (table) => {
      const cells = {};
      const viewport = table.querySelector('.ks-tviewport');
      const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
      viewport.scrollTop = 0;
      for (;;) {
        await tick();
        await tick();
        for (const el of table.querySelectorAll('[data-testid][data-value]')) {
          cells[el.dataset.testid] = el.dataset.value;
        }
        const before = viewport.scrollTop;
        viewport.scrollTop = before + Math.max(1, viewport.clientHeight - 20);
        if (viewport.scrollTop === before) break;
      }
      viewport.scrollTop = 0;
      return cells;
    });
}

describe('communication groups in the Distributed view', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-e2e-cluster-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: { width: 1440, height: 2200 },
        waitMs: WAIT_MS,
        populate: async (logdir) => writeJobs(logdir),
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 600_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('the slow rank, the slow link, the heat map and the jump to the trace', async () => {
    const view = await apiDistributed('job');
    assert.deepEqual(view.slow_ranks, [9]);
    assert.deepEqual(view.slow_groups, ['2']);
    // No PP group is slow: every send/recv pair moves its 4 MiB at the same speed.
    assert.equal(new Set(view.links.map((l) => l.gbps)).size, 1, JSON.stringify(view.links));
    await openDistributed('job');
    const line = frame().locator('[data-testid="group-verdicts"]');
    await line.scrollIntoViewIfNeeded();
    assert.equal(await line.getAttribute('data-slow-ranks'), '[9]');
    assert.equal(await line.getAttribute('data-slow-groups'), '["2"]');
    assert.match(await line.innerText(), /rank 9/);
    assert.match(await line.innerText(), /group 2/);

    const cells = await verdictCells();
    for (const g of view.groups) {
      assert.equal(cells[`group-${g.name}-verdict`], g.verdict, `group ${g.name}`);
    }
    assert.equal(
      Object.keys(cells).filter((k) => k.endsWith('-verdict')).length,
      view.groups.length,
    );

    // The heat map: one cell a rank for 32 ranks, the PP sends drawn; hovering reads out.
    const heat = frame().locator('[data-testid="link-heatmap"]');
    await heat.scrollIntoViewIfNeeded();
    assert.equal(await heat.getAttribute('data-block'), '1');
    assert.equal(await heat.getAttribute('data-cells'), '32');
    const link = view.links[0];
    const canvas = heat.locator('canvas');
    const box = await canvas.boundingBox();
    await env.page.mouse.move(
      box.x + ((link.dst + 0.5) / 32) * box.width,
      box.y + ((link.src + 0.5) / 32) * box.height,
    );
    await h.waitUntil('the heat map readout', async () =>
      (await frame().locator('[data-testid="link-heatmap-readout"]').innerText()).startsWith(
        `rank ${link.src} → rank ${link.dst}: `,
      ),
    );
    await shoot(env.page, 'groups');

    // The group waiting for rank 9 links to rank 9's trace at that call.
    const waiting = view.groups.find((g) => g.waits_for === 9);
    assert.ok(waiting, 'a group waits for rank 9');
    const a = frame().locator(`[data-testid="group-${waiting.name}-link"]`);
    await a.scrollIntoViewIfNeeded();
    const state = hashState(await a.getAttribute('href'));
    assert.equal(state.worker, 'rank9');
    assert.equal(state.view, 'trace');
    assert.equal(Number(state.t0), waiting.call.start_us);
    assert.equal(Number(state.t1), waiting.call.end_us);
    await a.click();
    await h.waitUntil(
      'the shell to follow the link',
      async () => (await frame().locator('[data-testid="worker-select"]').inputValue()) === 'rank9',
    );
    await frame()
      .locator('.ks-view-host[data-view="trace"]')
      .first()
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    await shoot(env.page, 'group-link-followed');
    h.assertNoErrors(env.errors);
  });

  test('160 ranks: the heat map draws blocks of ranks', async () => {
    const view = await apiDistributed('wide');
    assert.deepEqual(view.slow_ranks, []);
    assert.deepEqual(view.slow_groups, []);
    assert.equal(view.links.length, 2 * 79);
    await openDistributed('wide');
    const heat = frame().locator('[data-testid="link-heatmap"]');
    await heat.scrollIntoViewIfNeeded();
    assert.equal(await heat.getAttribute('data-block'), '2');
    assert.equal(await heat.getAttribute('data-cells'), '80');
    await shoot(env.page, 'wide-heatmap');
    h.assertNoErrors(env.errors);
  });
});
