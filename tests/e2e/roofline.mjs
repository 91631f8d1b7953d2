// Real-browser test of the roofline (docs/metrics.md#roofline) on the Operator and Kernel
// pages: a real TensorBoard on a logdir holding the real H100 bf16 GEMM trace
// (tests/data/h100/gemm_bf16), Debian's chromium driven by playwright-core. The table's
// roofline cells must equal the plugin's own API; the chart must draw one dot per row with
// FLOPs, under the H100's roofs; a click on a dot must select its row.
// Run with `npm run build && node --test tests/e2e/roofline.mjs`.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PLUGIN, REPO, copyGlob, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'roofline');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 60_000;
const KEY = { run: 'gemm_bf16', worker: 'gpu0', span: '1' };
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv({});

async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries({ ...KEY, ...params })) url.searchParams.set(k, v);
  return waitUntil(`${route} from the API`, async () => {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    if (response.status === 202) return null;
    assert.equal(response.status, 200, `${route} answered ${response.status}`);
    return response.json();
  });
}

function frame() {
  return h.pluginFrame(env.page);
}

async function open(view) {
  const items = [PLUGIN, `${encodeURIComponent(P + 'view')}=${view}`];
  for (const [k, v] of Object.entries(KEY)) items.push(`${encodeURIComponent(P + k)}=${v}`);
  await env.page.goto(`${env.base}#${items.join('&')}`, { timeout: WAIT_MS });
  await frame()
    .locator(`[data-testid="${view}"][data-ready="true"]`)
    .first()
    .waitFor({ state: 'visible', timeout: WAIT_MS });
}

/** Every row's cells (data-col → data-value) of a table, scrolled through. */
async function cells(testid) {
  return frame()
    .locator(`[data-testid="${testid}"]`)
    .evaluate(async (table) => {
      const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
      await tick();
      await tick();
      const rows = [];
      for (const row of table.querySelectorAll('.ks-twindow [role="row"]')) {
        const out = { selected: row.dataset.selected === 'true' };
        for (const cell of row.querySelectorAll('[data-col]'))
          out[cell.dataset.col] = cell.dataset.value;
        rows.push(out);
      }
      return rows;
    });
}

function assertRoofCells(shown, rows) {
  const byName = new Map(rows.map((r) => [r.name, r]));
  let withWork = 0;
  for (const row of shown) {
    const want = byName.get(row.name);
    if (!want) continue;
    assert.ok('pct_of_peak' in row && 'bound' in row, 'the % of peak and bound columns show');
    for (const k of ['tflops', 'gbps', 'intensity', 'pct_of_peak']) {
      if (!(k in row)) continue; // dropped by a narrow table
      const value = row[k] === undefined || row[k] === '' ? null : Number(row[k]);
      assert.equal(value, want[k], `${row.name} ${k}`);
    }
    assert.equal(row.bound || null, want.bound, `${row.name} bound`);
    if (want.pct_of_peak !== null) withWork += 1;
  }
  assert.ok(withWork >= 3, 'rows with a % of peak are shown');
}

/** Clicks the longest row's dot (where the chart draws it now) and returns its name. */
async function clickLongestDot(chartTestid) {
  const chart = frame().locator(`[data-testid="${chartTestid}"][data-longest-dot]`);
  await chart.waitFor({ state: 'visible', timeout: WAIT_MS });
  await chart.scrollIntoViewIfNeeded();
  const dot = await chart.evaluate((el) => el.longestDot());
  assert.ok(dot, 'the chart places its longest dot');
  await chart.click({ position: { x: dot.x, y: dot.y }, timeout: WAIT_MS });
  return dot.name;
}

describe('Roofline in TensorBoard', { timeout: 600_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-roofline-',
        log: path.join(OUT, 'tensorboard-roofline.log'),
        viewport: { width: 1440, height: 1800 },
        waitMs: WAIT_MS,
        args: ['--headless', ...h.BROWSER_ARGS],
        populate: async (logdir) => {
          const src = path.join(REPO, 'tests', 'data', 'h100', 'gemm_bf16');
          await copyGlob(src, '.gz', path.join(logdir, 'gemm_bf16'));
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 300_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('Operators: chart under the H100 roofs, cells equal the API, a dot selects its row', async () => {
    const data = await api('operators');
    assert.equal(data.roofs[0].device, 'H100-SXM');
    await open('operators');
    const card = frame().locator('[data-testid="op-roofline"]');
    await waitUntil(
      'the roofline draws its dots',
      async () => Number(await card.getAttribute('data-points')) > 0,
    );
    const onChart = data.rows.filter((r) => r.intensity > 0 && r.tflops > 0).length;
    assert.equal(Number(await card.getAttribute('data-points')), onChart);
    assertRoofCells(await cells('op-table'), data.rows);
    const name = await clickLongestDot('op-roofline-chart');
    const selected = await waitUntil('the clicked row is selected', async () =>
      (await cells('op-table')).find((r) => r.selected),
    );
    assert.equal(selected.name, name);
    await shoot(env.page, '01-operators');
    h.assertNoErrors(env.errors);
  });

  test('Kernels: cells equal the API, a dot selects its row', async () => {
    const data = await api('kernels');
    await open('kernels');
    const card = frame().locator('[data-testid="kernel-roofline"]');
    await waitUntil(
      'the roofline draws its dots',
      async () => Number(await card.getAttribute('data-points')) > 0,
    );
    assertRoofCells(await cells('kernel-table'), data.rows);
    const name = await clickLongestDot('kernel-roofline-chart');
    const selected = await waitUntil('the clicked row is selected', async () =>
      (await cells('kernel-table')).find((r) => r.selected),
    );
    // The kernels of one op share its rate: their dots coincide, the click takes the top one.
    const at = (n) => data.rows.find((r) => r.name === n);
    assert.deepEqual(
      [at(selected.name).intensity, at(selected.name).tflops],
      [at(name).intensity, at(name).tflops],
    );
    await shoot(env.page, '02-kernels');
    h.assertNoErrors(env.errors);
  });
});
