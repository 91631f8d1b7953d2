// Real-browser test of the Flame graph page and the Diff page's differential flame graph:
// a real TensorBoard on a logdir holding two of the repository's H100 traces (recorded
// with_stack: Python frames with files and lines), chromium driven by playwright-core.
// The canvas's numbers are checked against the `flamegraph` route; search, hover (the
// frame's file:line), click-to-zoom, the URL round trip and the differential colouring
// are driven through the real page; so are the side bar's editor-link settings, checked
// by the href of a flame frame's and an operator call-stack frame's editor link.
//
// Same conventions as the other suites (harness.mjs): any console error, page error or
// 4xx/5xx of a plugin route fails. Screenshots: test-output/e2e/flamegraph/NN-<state>.png.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { REPO, copyGlob, waitUntil } from './harness.mjs';

const SHOTS = path.join(REPO, 'test-output', 'e2e', 'flamegraph');
const WAIT_MS = 90_000;
const H100 = path.join(REPO, 'tests', 'data', 'h100');
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();
const BASE = { run: 'attention', worker: 'gpu0', span: '1' };
const TARGET = { run: 'gemm_bf16', worker: 'gpu0' };

const frame = () => h.pluginFrame(env.page);
const chart = () => frame().locator('[data-testid="flame-chart"]');

const hashState = () => h.readStateHash(env.page);

async function waitPage(metric) {
  const sel = `[data-testid="flamegraph"][data-ready="true"][data-metric="${metric}"]`;
  await frame().locator(sel).waitFor({ state: 'visible', timeout: WAIT_MS });
  await frame()
    .locator('[data-testid="flame-chart"][data-nodes]')
    .waitFor({ state: 'attached', timeout: WAIT_MS });
}

/** A point inside the widest search match (data-widest-match), relative to the canvas:
 *  `canvas.hover({ position })` / `click` scroll it into view and aim in one step. */
async function widestMatchPoint(locator) {
  const rect = await waitUntil('a search match on the canvas', async () => {
    const v = await locator.getAttribute('data-widest-match');
    return v ? v.split(',').map(Number) : null;
  });
  return { x: rect[0] + Math.min(rect[2] / 2, 40), y: rect[1] + rect[3] / 2 };
}

describe('Flame graph in TensorBoard', { timeout: 600_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-flame-',
        log: path.join(REPO, 'test-output', 'e2e', 'tensorboard-flamegraph.log'),
        viewport: { width: 1440, height: 1400 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          for (const run of [BASE.run, TARGET.run]) {
            await copyGlob(path.join(H100, run), '.gz', path.join(logdir, run));
          }
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 600_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('search, hover, zoom and the URL round trip on the GPU flame graph', async () => {
    const route = await h.routeJson(env, 'flamegraph', { ...BASE, metric: 'gpu' });
    const kernels = await h.routeJson(env, 'kernels', BASE);
    assert.ok(Math.abs(route.total_us - kernels.total_us) <= 0.005 * kernels.total_us);
    await env.page.goto(`${env.base}${h.stateHash({ ...BASE, view: 'flamegraph' })}`);
    await waitPage('cpu');
    // The CPU flame graph has its legend too: each kind of frame it draws, and a match.
    const cpuKinds = await frame()
      .locator('[data-testid="flame-legend"] [data-kind]')
      .evaluateAll((items) => items.map((i) => i.dataset.kind));
    assert.ok(
      ['thread', 'python', 'op', 'match'].every((k) => cpuKinds.includes(k)),
      `${cpuKinds}`,
    );
    await shoot(env.page, 'cpu-legend');
    await frame().locator('[data-testid="flame-metric"]').selectOption('gpu');
    await waitPage('gpu');
    const views = await frame()
      .locator('[data-testid="view-select"] option')
      .evaluateAll((options) => options.map((o) => o.value));
    assert.ok(views.includes('flamegraph'), `the View list offers it: ${views}`);
    await shoot(env.page, 'gpu-whole');
    // A legend names the colours of the kinds of frames drawn.
    const legend = await frame()
      .locator('[data-testid="flame-legend"] [data-kind]')
      .evaluateAll((items) => items.map((i) => i.dataset.kind));
    assert.deepEqual(legend, ['python', 'op', 'runtime', 'kernel', 'match']);

    // Search: the matching frames are counted and their share of kernel time given.
    const query = 'scaled_dot_product';
    await frame().locator('[data-testid="flame-search"]').fill(query);
    await frame().locator('[data-testid="flame-search"]').press('Enter');
    await waitUntil(
      'search matches',
      async () => Number(await chart().getAttribute('data-matches')) > 0,
    );
    const sdpa = route.node_total_us.reduce((sum, total, i) => {
      const name = route.frames[route.node_frame[i]].name.toLowerCase();
      const p = route.node_parent[i];
      const parentHit =
        p >= 0 && route.frames[route.node_frame[p]].name.toLowerCase().includes(query);
      return name.includes(query) && !parentHit ? sum + total : sum;
    }, 0);
    const pct = Number(await chart().getAttribute('data-match-pct'));
    assert.ok(Math.abs(pct - (100 * sdpa) / route.total_us) < 0.2, `match share ${pct}`);
    // The page says the share in words, as the README promises.
    const said = await frame().locator('[data-testid="flame-matches"]').innerText();
    const frames = await chart().getAttribute('data-matches');
    assert.match(
      said,
      new RegExp(`^${frames} frames? match “${query}”: ${pct.toFixed(1)} % of the kernel time \\(`),
    );
    assert.equal(hashState()['flame.q'], query);
    await shoot(env.page, 'gpu-search');

    // Hover on a Python frame shows its file:line.
    await frame().locator('[data-testid="flame-search"]').fill('record_gpu.py');
    await frame().locator('[data-testid="flame-search"]').press('Enter');
    const py = await widestMatchPoint(chart());
    await chart().locator('canvas').hover({ position: py });
    const source = frame().locator('[data-testid="flame-tip-source"]');
    await source.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match((await source.textContent()) ?? '', /record_gpu\.py:\d+$/);

    // Click-to-zoom into the first frame matching an op.
    const op = 'aten::_efficient_attention_forward';
    await frame().locator('[data-testid="flame-search"]').fill(op);
    await frame().locator('[data-testid="flame-search"]').press('Enter');
    const at = await widestMatchPoint(chart());
    await chart().locator('canvas').click({ position: at });
    await waitUntil('zoomed', async () => (await chart().getAttribute('data-zoom')) === op);
    const zoom = hashState()['flame.zoom'];
    assert.ok(zoom?.endsWith(op), `the zoom path is in the URL: ${zoom}`);
    await shoot(env.page, 'gpu-zoomed');

    // A pasted link opens the same metric, search and zoom.
    const url = env.page.url();
    const again = await env.context.newPage();
    h.watchErrors(again, env.errors);
    await again.goto(url);
    const f2 = h.pluginFrame(again);
    await f2
      .locator('[data-testid="flamegraph"][data-ready="true"][data-metric="gpu"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    const c2 = f2.locator('[data-testid="flame-chart"]');
    await waitUntil('restored zoom', async () => (await c2.getAttribute('data-zoom')) === op);
    assert.equal(await f2.locator('[data-testid="flame-search"]').inputValue(), op);
    await again.close();

    // Reset zoom goes back to the whole.
    await frame().locator('[data-testid="flame-reset"]').click();
    await waitUntil('unzoomed', async () => (await chart().getAttribute('data-zoom')) === '');
    h.assertNoErrors(env.errors);
  });

  test('the Diff page shows a differential flame graph of both traces', async () => {
    const state = {
      ...BASE,
      view: 'diff',
      target_run: TARGET.run,
      target_worker: TARGET.worker,
    };
    await env.page.goto(`${env.base}${h.stateHash(state)}`);
    const section = frame().locator('[data-testid="diff-flame"][data-ready="true"]');
    await section.waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await section.getAttribute('data-metric'), 'gpu');
    const diffChart = frame().locator('[data-testid="diff-flame-chart"]');
    // The two traces ran different kernels: frames grew (target only) and shrank (base only).
    assert.ok(Number(await diffChart.getAttribute('data-grew')) > 0, 'frames grew');
    assert.ok(Number(await diffChart.getAttribute('data-shrank')) > 0, 'frames shrank');
    const base = await h.routeJson(env, 'flamegraph', { ...BASE, metric: 'gpu' });
    const target = await h.routeJson(env, 'flamegraph', {
      run: TARGET.run,
      worker: TARGET.worker,
      metric: 'gpu',
    });
    const caption =
      (await frame().locator('[data-testid="diff-flame-caption"]').textContent()) ?? '';
    assert.match(caption, /base .*, target /);
    assert.ok(base.total_us > 0 && target.total_us > 0);
    // Search and zoom work there too; hover gives both sides' times.
    await frame().locator('[data-testid="diff-flame-search"]').fill('aten::mm');
    await frame().locator('[data-testid="diff-flame-search"]').press('Enter');
    const at = await widestMatchPoint(diffChart);
    await diffChart.locator('canvas').hover({ position: at });
    const tip = frame().locator('[data-testid="diff-flame-chart"] [data-testid="flame-tip"]');
    await tip.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match((await tip.textContent()) ?? '', /base .* → target /);
    const hovered = (await tip.locator('.ks-flame-tip-name').textContent()) ?? '';
    await diffChart.locator('canvas').click({ position: at });
    await waitUntil(
      `zoomed into ${hovered}`,
      async () => (await diffChart.getAttribute('data-zoom')) === hovered,
      10_000,
    );
    assert.match(hovered, /aten::mm/);
    await shoot(env.page, 'diff-flame');
    h.assertNoErrors(env.errors);
  });
  test('source links open the chosen editor at the mapped path (settings kept)', async () => {
    await env.page.goto(`${env.base}${h.stateHash({ ...BASE, view: 'flamegraph' })}`);
    await waitPage('cpu');
    // The side bar's settings: Cursor, and a local folder before relative paths.
    await frame().locator('[data-testid="editor-settings"] summary').click();
    await frame().locator('[data-testid="editor-select"]').selectOption('cursor');
    await frame().locator('[data-testid="editor-map-to"]').fill('/Users/me/ks/samples');
    const stored = await frame()
      .locator('body')
      .evaluate(() => JSON.parse(window.localStorage.getItem('kinetoscope.editor') ?? '{}'));
    assert.deepEqual(stored, {
      editor: 'cursor',
      template: '',
      mapFrom: '',
      mapTo: '/Users/me/ks/samples',
    });

    // The Flame graph: the zoomed Python frame's file:line links to Cursor.
    const route = await h.routeJson(env, 'flamegraph', { ...BASE, metric: 'cpu' });
    const script = route.frames.find((f) => f.file === 'record_gpu.py' && f.name === 'main');
    assert.ok(script, 'the trace has the script frame');
    await frame().locator('[data-testid="flame-search"]').fill('main');
    await frame().locator('[data-testid="flame-search"]').press('Enter');
    const at = await widestMatchPoint(chart());
    await chart().locator('canvas').click({ position: at });
    await waitUntil('zoomed', async () => (await chart().getAttribute('data-zoom')) === 'main');
    const link = frame().locator('[data-testid="flame-zoomed"] [data-testid="editor-link"]');
    await link.hover(); // the href follows the settings when the link is about to be used
    assert.equal(
      await link.getAttribute('href'),
      `cursor://file/Users/me/ks/samples/record_gpu.py:${script.line}`,
    );

    // The Operators page's call stacks: each frame with a file links the same way.
    const state = { ...BASE, view: 'operators', 'operators.stack': 'aten::addmm' };
    await env.page.goto(`${env.base}${h.stateHash(state)}`);
    const panel = frame().locator('[data-testid="callstack-panel"][data-state="ready"]');
    await panel.waitFor({ state: 'visible', timeout: WAIT_MS });
    const item = panel.locator('[data-testid="stack-frame"][data-file="record_gpu.py"]').first();
    const line = await item.getAttribute('data-line');
    const opLink = item.locator('[data-testid="frame-editor-link"]');
    await opLink.hover();
    assert.equal(
      await opLink.getAttribute('href'),
      `cursor://file/Users/me/ks/samples/record_gpu.py:${line}`,
    );
    // A reload keeps the settings (localStorage).
    await env.page.reload();
    await frame().locator('[data-testid="editor-settings"] summary').click();
    assert.equal(await frame().locator('[data-testid="editor-select"]').inputValue(), 'cursor');
    h.assertNoErrors(env.errors);
  });
});
