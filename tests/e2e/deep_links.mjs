// Real-browser test of links that keep the view: a real TensorBoard on a logdir holding
// one of the repository's H100 traces, chromium driven by playwright-core. The trace view
// is driven (a search that selects a match, a zoom); its URL, pasted into a new page,
// opens the same run, worker, span and view with the same time window, selection and
// search.
//
// Same conventions as the other suites (harness.mjs): any console error, page error or
// 4xx/5xx of a plugin route fails. Screenshots: test-output/e2e/deep_links/NN-<state>.png.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { REPO, copyGlob, waitUntil } from './harness.mjs';

const SHOTS = path.join(REPO, 'test-output', 'e2e', 'deep_links');
const WAIT_MS = 90_000;
const H100 = path.join(REPO, 'tests', 'data', 'h100');
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();
const KEY = { run: 'gemm_bf16', worker: 'gpu0', span: '1' };
const QUERY = 'aten::addmm';

/** The trace view in `page`, ready, its timeline and search box. */
async function traceView(page) {
  const f = h.pluginFrame(page);
  await f
    .locator('[data-testid="trace"][data-ready="true"]')
    .waitFor({ state: 'visible', timeout: WAIT_MS });
  return {
    timeline: f.locator('[data-testid="trace-timeline"]'),
    search: f.locator('[data-testid="trace-search"]'),
    count: f.locator('[data-testid="trace-search-count"]'),
  };
}

describe('Links that keep the view', { timeout: 600_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-links-',
        log: path.join(REPO, 'test-output', 'e2e', 'tensorboard-deep-links.log'),
        viewport: { width: 1440, height: 1200 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          await copyGlob(path.join(H100, KEY.run), '.gz', path.join(logdir, KEY.run));
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 600_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('a pasted trace-view link restores the window, selection and search', async () => {
    await env.page.goto(`${env.base}${h.stateHash({ ...KEY, view: 'trace' })}`);
    const first = await traceView(env.page);
    // A search: Enter goes to the first match and selects it.
    await first.search.fill(QUERY);
    await first.search.press('Enter');
    const row = await waitUntil('a selected match', async () => {
      const v = await first.timeline.getAttribute('data-selected-row');
      return v ? Number(v) : null;
    });
    const hit = await h.routeJson(env, 'event', { ...KEY, row });
    assert.equal(hit.name, QUERY);
    // Zoom out a step with the keyboard (s: zoom out), so the window is one
    // the user made, not one the selection revealed.
    await first.search.evaluate((el) => el.blur()); // keys typed in the box search instead
    await first.timeline.hover();
    await env.page.keyboard.press('s');
    const state = await waitUntil('the URL to carry the state', async () => {
      const s = h.readStateHash(env.page);
      return s['trace.t0'] && s['trace.sel'] === String(row) && s['trace.q'] === QUERY ? s : null;
    });
    assert.deepEqual(
      [state.run, state.worker, state.span, state.view],
      [KEY.run, KEY.worker, KEY.span, 'trace'],
    );
    await shoot(env.page, 'trace-driven');
    const url = env.page.url();

    // The same link in a new page.
    const pasted = await env.context.newPage();
    h.watchErrors(pasted, env.errors);
    await pasted.goto(url);
    const second = await traceView(pasted);
    await waitUntil(
      'the selection restored',
      async () => (await second.timeline.getAttribute('data-selected-row')) === String(row),
    );
    assert.equal(await second.search.inputValue(), QUERY);
    await waitUntil('the search matches counted', async () =>
      /\d/.test((await second.count.textContent()) ?? ''),
    );
    // The window is the one shared: restoring the selection did not move it.
    await h.sleep(500);
    const restored = h.readStateHash(pasted);
    for (const key of ['trace.t0', 'trace.t1']) {
      const [a, b] = [Number(state[key]), Number(restored[key])];
      assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a)), `${key}: ${a} vs ${b}`);
    }
    assert.equal(restored['trace.sel'], String(row));
    assert.equal(restored['trace.q'], QUERY);
    await shoot(pasted, 'trace-pasted');
    await pasted.close();
    h.assertNoErrors(env.errors);
  });
});
