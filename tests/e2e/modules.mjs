// Real-browser test of the Module view: a real TensorBoard on a logdir holding the corpus
// H100 BERT trace (recorded with every profiler flag on, nn.Module python_function events
// included), Debian's chromium driven by playwright-core, the tree checked against the
// `modules` route. Skipped without ../shared/corpus. Run with `npm run e2e`.
// Screenshots: test-output/e2e/modules/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'modules');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 60_000;
const TRACE = path.join(
  CORPUS,
  'tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz',
);
const KEY = { run: 'bert', worker: 'worker0' };
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

// The route's JSON once it is ready; 30 s a request, 60 s in all (waitUntil's bounds).
const api = (route, params = {}) =>
  h.routeJson(env, route, params, { fetchMs: 30_000, waitMs: 60_000, everyMs: 250 });

function frame() {
  return h.pluginFrame(env.page);
}

function table() {
  return frame().locator('[data-testid="module-table"]');
}

/** The rows in view: each row's module path and its cells' data-value by column. */
async function shownRows() {
  return table().evaluate(async (el) => {
    const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
    await tick();
    await tick();
    return Array.from(el.querySelectorAll('.ks-twindow [role="row"]'), (row) => {
      const cells = {};
      for (const cell of row.querySelectorAll('[data-col]')) {
        cells[cell.dataset.col] = cell.dataset.value;
      }
      return { path: row.dataset.module, open: row.dataset.open, cells };
    });
  });
}

async function rowCount() {
  return Number(await frame().locator('[data-testid="module-count"]').getAttribute('data-rows'));
}

describe('Module view in TensorBoard', { timeout: 600_000, skip: !existsSync(TRACE) }, () => {
  before(async () => {
    await h.startEnv(env, {
      shots: SHOTS,
      tmpPrefix: 'kinetoscope-e2e-modules-',
      log: path.join(OUT, 'tensorboard-modules.log'),
      viewport: { width: 1440, height: 1400 },
      waitMs: WAIT_MS,
      populate: async (logdir) => {
        await h.copyTrace(TRACE, path.join(logdir, KEY.run), `${KEY.worker}.1.pt.trace.json.gz`);
      },
    });
    env.page = await env.context.newPage();
    h.watchErrors(env.page, env.errors);
  });

  after(async () => {
    await h.stopEnv(env);
  });

  test('the tree renders, expands, collapses and sorts with the route’s numbers', async () => {
    const data = await api('modules', KEY);
    assert.ok(data.available && data.modules.length > 10);
    const status = await api('status', KEY);
    assert.ok(status.views.includes('modules'), 'status lists the Modules page');

    await env.page.goto(`${env.base}${h.stateHash({ ...KEY, view: 'modules' })}`);
    await frame()
      .locator('[data-testid="modules"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    await shoot(env.page, 'tree');

    // First view: the roots and two levels open, so every row down to depth 2 shows.
    const firstLevels = data.modules.filter((r) => r.depth <= 2);
    assert.equal(await rowCount(), firstLevels.length);
    const rows = await shownRows();
    const root = data.modules[0];
    assert.equal(rows[0].path, root.path);
    for (const key of ['calls', 'host_self_us', 'host_total_us', 'device_total_us']) {
      assert.equal(Number(rows[0].cells[key]), root[key], `root ${key}`);
    }
    const byPath = new Map(data.modules.map((r) => [r.path, r]));
    for (const row of rows) {
      assert.equal(Number(row.cells.device_total_us), byPath.get(row.path).device_total_us);
    }

    await frame().locator('[data-testid="module-expand-all"]').click();
    assert.equal(await rowCount(), data.modules.length);
    await frame().locator('[data-testid="module-collapse-all"]').click();
    assert.equal(await rowCount(), data.modules.filter((r) => r.parent < 0).length);
    await table().locator('[data-testid="module-toggle"]').first().click();
    const children = data.modules.filter((r) => r.parent === root.id);
    assert.equal(await rowCount(), 1 + children.length);

    // Sorting orders each level: the root stays first, its children by device total.
    await table().locator('[role="columnheader"]', { hasText: 'Device total' }).click();
    const sorted = (await shownRows()).slice(1).map((r) => r.path);
    const want = children
      .slice()
      .sort((a, b) => b.device_total_us - a.device_total_us || a.id - b.id)
      .map((r) => r.path);
    assert.deepEqual(sorted, want);
    assert.match(decodeURIComponent(env.page.url()), /modules\.sort=device_total_us:desc/);

    // A module links to the trace view at its first call.
    const href = await table()
      .locator('[data-testid="module-trace-link"]')
      .first()
      .getAttribute('href');
    const hash = decodeURIComponent(new URL(href).hash);
    assert.ok(hash.includes(`${P}view=trace`), hash);
    assert.ok(hash.includes(`${P}t0=${root.first_start_us}`), hash);
    await shoot(env.page, 'sorted');
    h.assertNoErrors(env.errors);
  });
});
