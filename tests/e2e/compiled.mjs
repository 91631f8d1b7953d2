// Real-browser test of compiled code in the Kernels page (issue 29): a real TensorBoard on
// a logdir holding the H100 `torch.compile` trace (tests/data/h100/compiled, with its
// inductor_code/ folder) and a trace without nn.Module calls; Debian's chromium driven by
// playwright-core. Checks the Source column against the `kernels` route, and that a link to
// the Modules view of a trace without modules says why. Run with `node --test` on this file.

import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'compiled');
const WAIT_MS = 60_000;
const H100 = path.join(REPO, 'tests', 'data', 'h100');
const COMPILED = { run: 'compiled', worker: 'gpu0' };
const NO_MODULES = { run: 'cudagraph_replay', worker: 'gpu0' };
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

// The route's JSON once it is ready; 30 s a request, 60 s in all (waitUntil's bounds).
const api = (route, params = {}) =>
  h.routeJson(env, route, params, { fetchMs: 30_000, waitMs: 60_000, everyMs: 250 });

const frame = () => h.pluginFrame(env.page);
const search = () => frame().locator('[data-testid="kernel-search"]');

const frameText = (f) => `${f.filename.split('/').pop()}${f.line === null ? '' : `:${f.line}`}`;

describe('Compiled kernels and modules in TensorBoard', { timeout: 600_000 }, () => {
  before(async () => {
    await h.startEnv(env, {
      shots: SHOTS,
      tmpPrefix: 'kinetoscope-e2e-compiled-',
      log: path.join(OUT, 'tensorboard-compiled.log'),
      viewport: { width: 1440, height: 1400 },
      waitMs: WAIT_MS,
      populate: async (logdir) => {
        await cp(path.join(H100, 'compiled'), path.join(logdir, 'compiled'), { recursive: true });
        await cp(path.join(H100, 'cudagraph_replay'), path.join(logdir, 'cudagraph_replay'), {
          recursive: true,
        });
      },
    });
    env.page = await env.context.newPage();
    h.watchErrors(env.page, env.errors);
  });

  after(async () => {
    await h.stopEnv(env);
  });

  test('Triton kernels show their model source line', async () => {
    const data = await api('kernels', COMPILED);
    const want = new Map(
      data.rows.filter((r) => r.source).map((r) => [r.name, r.source.map(frameText).join(' > ')]),
    );
    assert.ok(want.get('triton_poi_fused_gelu_view_2')?.startsWith('record_gpu.py:81 > '));
    await env.page.goto(`${env.base}${h.stateHash({ ...COMPILED, view: 'kernels' })}`);
    const table = frame().locator('[data-testid="kernel-table"]');
    await table.locator('.ks-twindow [data-col="source"]').first().waitFor({ timeout: WAIT_MS });
    await shoot(env.page, 'kernels');
    const shown = await table.evaluate((el) =>
      Array.from(el.querySelectorAll('.ks-twindow [role="row"]'), (row) => ({
        kernel: row.dataset.kernel,
        source: row.querySelector('[data-col="source"]')?.dataset.value,
      })),
    );
    const triton = shown.filter((r) => want.has(r.kernel));
    assert.ok(triton.length > 0, 'a Triton kernel row is in view');
    for (const row of triton) assert.equal(row.source, want.get(row.kernel));
    // The cell writes the fused ops, then the model line as an editor link (the wrapper's
    // hash name only as "generated wrapper").
    const gelu = data.rows.find((r) => r.name === 'triton_poi_fused_gelu_view_2');
    await search().fill('triton_poi_fused_gelu_view_2');
    const cell = table.locator(
      '.ks-twindow [role="row"][data-kernel="triton_poi_fused_gelu_view_2"] [data-col="source"]',
    );
    await cell.waitFor({ timeout: WAIT_MS });
    assert.equal(
      await cell.locator('.ks-source-ops').innerText(),
      gelu.fused_ops.map((o) => o.replace('aten::', '')).join(' + '),
    );
    const link = cell.locator('[data-testid="kernel-source-link"]');
    assert.equal(await link.innerText(), 'record_gpu.py:81');
    const wrapperOnly = data.rows.find((r) => r.source?.length === 1 && r.source[0].generated);
    if (wrapperOnly) {
      await search().fill(wrapperOnly.name);
      const other = table
        .locator(`.ks-twindow [role="row"][data-kernel="${wrapperOnly.name}"] [data-col="source"]`)
        .first();
      assert.match(
        await other.locator('.ks-source-where').innerText(),
        /^generated wrapper, line \d+$/,
      );
    }
    // At 1920 px no number of the table is cut ("224.39 …").
    await env.page.setViewportSize({ width: 1920, height: 1400 });
    await search().fill('');
    await env.page.waitForTimeout(500);
    const cut = await table.evaluate((el) =>
      Array.from(el.querySelectorAll('.ks-twindow [data-col] .ks-num'))
        .filter(
          (n) =>
            n.scrollWidth > n.clientWidth + 1 ||
            n.getBoundingClientRect().right >
              n.closest('[data-col]').getBoundingClientRect().right + 1,
        )
        .map((n) => `${n.closest('[data-col]').dataset.col}: ${n.textContent}`),
    );
    assert.deepEqual(cut, []);
    await table.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shoot(env.page, 'kernels-1920');
    await env.page.setViewportSize({ width: 1440, height: 1400 });
  });

  test('the Modules view of a trace without modules says so', async () => {
    const status = await api('status', NO_MODULES);
    assert.ok(!status.views.includes('modules'));
    await env.page.goto(`${env.base}${h.stateHash({ ...NO_MODULES, view: 'modules' })}`);
    const note = frame().locator('[data-testid="modules-unavailable"]');
    await note.waitFor({ state: 'visible', timeout: WAIT_MS });
    await shoot(env.page, 'no-modules');
    assert.match(await note.innerText(), /No module information/);
    h.assertNoErrors(env.errors);
  });
});
