// Real-browser test of the cross-vendor Diff (issue 33): a real TensorBoard on a logdir of
// a real MI300X trace (SGLang, Qwen3-8B) and a real H100 trace (Qwen1.5-0.5B), both from
// the corpus; Debian's chromium driven by playwright-core. The Diff page's "Kernels by what
// they do" table must show the route's pairs, the GEMMs (a `Cijk_…` kernel against an
// `sm90_xmma_gemm_…`) in one row. Run with `node --test` on this file.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'diff_vendors');
const WAIT_MS = 60_000;
const MI300X =
  'tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz';
const H100 = 'tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz';
const BASE = { run: 'mi300x', worker: 'worker0' };
const TARGET = { target_run: 'h100', target_worker: 'worker0' };
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

const frame = () => h.pluginFrame(env.page);

describe(
  'Cross-vendor Diff in TensorBoard',
  { timeout: 600_000, skip: !existsSync(CORPUS) },
  () => {
    before(async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-diff-vendors-',
        log: path.join(OUT, 'tensorboard-diff-vendors.log'),
        viewport: { width: 1440, height: 1400 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          await h.copyTrace(
            path.join(CORPUS, MI300X),
            path.join(logdir, 'mi300x'),
            'worker0.pt.trace.json.gz',
          );
          await h.copyTrace(
            path.join(CORPUS, H100),
            path.join(logdir, 'h100'),
            'worker0.pt.trace.json.gz',
          );
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    });

    after(async () => {
      await h.stopEnv(env);
    });

    test('kernels pair by what they do across MI300X and H100', async () => {
      const data = await h.routeJson(env, 'diff', { ...BASE, ...TARGET });
      assert.deepEqual(data.vendors, ['amd', 'nvidia']);
      const gemm = data.kernels_by_work.find((p) => p.work === 'gemm' && p.op === 'aten::mm');
      assert.ok(gemm, 'a GEMM pair under aten::mm');
      assert.ok(gemm.base.kernels.every((k) => k.startsWith('Cijk_')));
      assert.ok(gemm.target.kernels.every((k) => k.startsWith('sm90_xmma_gemm_')));

      await env.page.goto(`${env.base}${h.stateHash({ ...BASE, ...TARGET, view: 'diff' })}`);
      await frame()
        .locator('[data-testid="diff"][data-ready="true"]')
        .waitFor({ timeout: WAIT_MS });
      const section = frame().locator('[data-testid="diff-by-work"]');
      await section.scrollIntoViewIfNeeded();
      await shoot(env.page, 'diff-by-work');
      const shown = await frame()
        .locator('[data-testid="diff-work-pair"]')
        .evaluateAll((rows) => rows.map((r) => [r.dataset.work, r.dataset.op, r.dataset.match]));
      assert.deepEqual(
        shown,
        data.kernels_by_work.map((p) => [p.work, p.op ?? '', p.match]),
      );
      const row = frame().locator(
        '[data-testid="diff-work-pair"][data-work="gemm"][data-op="aten::mm"]',
      );
      const text = await row.innerText();
      assert.match(text, /Cijk_/);
      assert.match(text, /sm90_xmma_gemm_/);
      assert.equal(
        await row.locator('[data-testid="diff-work-ratio"]').innerText(),
        `${gemm.ratio.toFixed(3)}×`,
      );
      assert.match(await section.innerText(), /amd against nvidia/);
      h.assertNoErrors(env.errors);
    });
  },
);
