// Real-browser tests of what a new user trips on in the newer pages, on real traces of
// every vendor: a real TensorBoard, Debian's chromium driven by playwright-core (see
// harness.mjs). Editor links on an H100 trace's relative frames (resolved through
// KINETOSCOPE_SOURCE_ROOTS, a note where they are not, links refreshed when the mapping
// changes, the settings' fields); the roofline of MI300X serving traces (a roof for dots of
// no known data type, a far-off short op off the axes); the memory snapshot opening on its
// trace; the Kernels table's queued launches; the Overview's per-step header; the trace
// view's times; and every changed page at 1280 and 1920 px.
//
// Logdir: the corpus H100 Qwen trace ("qwen"), the MI300X vLLM replay and SGLang decode
// capture, the V100 ResNet-50 sample, the H100 memory snapshot and compiled runs of
// tests/data. Skipped without ../shared/corpus. Screenshots:
// test-output/e2e/new_pages/NN-<page>-<width>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PYTHON, REPO, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'new_pages');
const WAIT_MS = 90_000;
const TRACELENS = path.join(CORPUS, 'tracelens', 'tests', 'traces');
const RUNS = {
  qwen: path.join(TRACELENS, 'h100', 'Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz'),
  vllm: path.join(
    TRACELENS,
    'inference',
    'vllm_prefilldecode_piecewise',
    'graph_execution.json.gz',
  ),
  decode: path.join(
    TRACELENS,
    'inference',
    'sglang_decode',
    'capture_traces',
    'bs_32_rank0.json.gz',
  ),
  v100: path.join(
    CORPUS,
    'pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz',
  ),
};
const DATA = path.join(REPO, 'tests', 'data', 'h100');
const QWEN = { run: 'qwen', worker: 'worker0', span: '1' };
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv({ sitePackages: '' });
const frame = () => h.pluginFrame(env.page);

/** A page of the tab, loaded fresh, and its view's element once ready. */
async function open(state, testid) {
  await env.page.goto('about:blank');
  await env.page.goto(`${env.base}${h.stateHash(state)}`);
  const view = frame().locator(`[data-testid="${testid}"][data-ready="true"]`).first();
  await view.waitFor({ state: 'visible', timeout: WAIT_MS });
  return view;
}

/** Screenshots of the page at 1280 and 1920 px, `scroll` (a selector) at the top. */
async function shootWidths(name, scroll) {
  for (const width of [1280, 1920]) {
    await env.page.setViewportSize({ width, height: 1000 });
    await env.page.waitForTimeout(400);
    if (scroll) {
      await frame()
        .locator(scroll)
        .first()
        .evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await env.page.waitForTimeout(300);
    }
    await shoot(env.page, `${name}-${width}`);
  }
  await env.page.setViewportSize({ width: 1280, height: 1000 });
}

describe(
  'the newer pages for a new user',
  { timeout: 900_000, skip: !existsSync(RUNS.qwen) },
  () => {
    before(
      async () => {
        // Relative frames (torch/...) are found in this interpreter's site-packages.
        env.sitePackages = (await import('node:child_process'))
          .execFileSync(
            PYTHON,
            ['-c', 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))'],
            {
              encoding: 'utf8',
            },
          )
          .trim();
        process.env.KINETOSCOPE_SOURCE_ROOTS = env.sitePackages;
        await h.startEnv(env, {
          shots: SHOTS,
          tmpPrefix: 'kinetoscope-e2e-new-pages-',
          log: path.join(OUT, 'tensorboard-new-pages.log'),
          viewport: { width: 1280, height: 1000 },
          waitMs: WAIT_MS,
          populate: async (logdir) => {
            for (const [run, file] of Object.entries(RUNS)) {
              await h.copyTrace(file, path.join(logdir, run), 'worker0.1.pt.trace.json.gz');
            }
            await cp(path.join(DATA, 'memory_snapshot'), path.join(logdir, 'snapshot'), {
              recursive: true,
            });
            await cp(path.join(DATA, 'compiled'), path.join(logdir, 'compiled'), {
              recursive: true,
            });
          },
        });
        delete process.env.KINETOSCOPE_SOURCE_ROOTS;
        env.page = await env.context.newPage();
        h.watchErrors(env.page, env.errors);
      },
      { timeout: 600_000 },
    );

    after(() => h.stopEnv(env), { timeout: 60_000 });

    test('editor links: resolved relative frames, a note for the rest, refreshed on a mapping', async () => {
      const paths = await h.routeJson(env, 'source_paths', QWEN);
      const linear = 'torch/nn/modules/linear.py';
      assert.equal(paths.resolved[linear], path.join(env.sitePackages, linear));
      await open({ ...QWEN, view: 'operators', 'operators.stack': 'aten::mm' }, 'operators');
      const panel = frame().locator('[data-testid="callstack-panel"][data-state="ready"]');
      await panel.waitFor({ state: 'visible', timeout: WAIT_MS });
      // A resolved frame is a link at once, to the file on this machine.
      const frameLink = panel
        .locator(
          `[data-testid="stack-frame"][data-file="${linear}"] [data-testid="frame-editor-link"]`,
        )
        .first();
      await waitUntil(
        'the resolved link',
        async () => (await frameLink.getAttribute('href')) !== null,
      );
      assert.equal(
        await frameLink.getAttribute('href'),
        `vscode://file${path.join(env.sitePackages, linear)}:${await panel.locator(`[data-testid="stack-frame"][data-file="${linear}"]`).first().getAttribute('data-line')}`,
      );
      // transformers/ is not installed here: plain text, and a note says what makes links.
      const unresolved = panel
        .locator(
          '[data-testid="stack-frame"][data-file^="transformers/"] [data-testid="frame-editor-link"]',
        )
        .first();
      assert.equal(await unresolved.getAttribute('href'), null);
      const note = panel.locator('[data-testid="editor-link-note"]');
      assert.ok(await note.isVisible());
      assert.match(
        await note.innerText(),
        /transformers\/…[\s\S]*local path prefix under "Editor links"/,
      );
      // The settings: the URL template field is hidden while VS Code is chosen, and the
      // placeholders read as examples (lighter, italic, "e.g.").
      await frame().locator('[data-testid="editor-settings"] summary').click();
      const template = frame().locator('[data-testid="editor-template"]');
      assert.equal(await template.isVisible(), false);
      const mapTo = frame().locator('[data-testid="editor-map-to"]');
      assert.match(await mapTo.getAttribute('placeholder'), /^e\.g\. /);
      const look = await mapTo.evaluate((el) => {
        const p = getComputedStyle(el, '::placeholder');
        return { style: p.fontStyle, colour: p.color, text: getComputedStyle(el).color };
      });
      assert.equal(look.style, 'italic');
      assert.notEqual(look.colour, look.text);
      await shootWidths('operators-call-stacks', '[data-testid="callstack-panel"]');
      // A local prefix for relative paths: the open panel's frames become links at once.
      await mapTo.fill('/home/me/src');
      await waitUntil(
        'the open panel refreshed',
        async () => (await unresolved.getAttribute('href')) !== null,
      );
      assert.match(
        await unresolved.getAttribute('href'),
        /^vscode:\/\/file\/home\/me\/src\/transformers\//,
      );
      assert.equal(await note.isVisible(), false);
      // Choosing "URL template" shows its field.
      await frame().locator('[data-testid="editor-select"]').selectOption('custom');
      assert.equal(await template.isVisible(), true);
      await frame().locator('[data-testid="editor-select"]').selectOption('vscode');
      await mapTo.fill('');
      h.assertNoErrors(env.errors);
    });

    test('roofline of AMD serving traces: a roof always, a far-off short op off the axes', async () => {
      const ops = await h.routeJson(env, 'operators', {
        run: 'vllm',
        worker: 'worker0',
        span: '1',
      });
      assert.ok(ops.roofs.length > 0, 'the MI300X is known');
      await open({ run: 'vllm', view: 'operators' }, 'operators');
      const card = frame().locator('[data-testid="op-roofline"]');
      await waitUntil('the roofline', async () => (await card.getAttribute('data-roofs')) || null);
      assert.equal(await card.getAttribute('data-hidden'), '1');
      assert.match(
        await card.innerText(),
        /1 row far below the others, each under 1\.0 % of the time, off the chart/,
      );
      assert.doesNotMatch(await card.innerText(), /\b1 rows\b/);
      await shootWidths('operators-roofline-vllm', '[data-testid="op-roofline"]');
      // A decode capture: its one op has no known data type; the memory roof still shows.
      await open({ run: 'decode', view: 'kernels' }, 'kernels');
      const kernels = frame().locator('[data-testid="kernel-roofline"]');
      const points = Number(await kernels.getAttribute('data-points'));
      if (points > 0) assert.ok((await kernels.getAttribute('data-roofs')) !== '');
      h.assertNoErrors(env.errors);
    });

    test('the memory snapshot opens on its trace, peak and OOM', async () => {
      const view = await h.routeJson(env, 'memory_snapshot', { run: 'snapshot' });
      const device = view.snapshots[0].devices[0];
      const alignment = view.snapshots[0].alignment;
      assert.equal(alignment.state, 'aligned');
      await open({ run: 'snapshot', view: 'memory_snapshot' }, 'memory-snapshot');
      const chart = frame().locator('[data-testid="snapshot-chart-0"]');
      await waitUntil('the chart', async () =>
        chart.evaluate((el) => typeof el.xPixel === 'function'),
      );
      const ms = (us) => (us - alignment.trace_start_us) / 1000;
      const at = await chart.evaluate(
        (el, times) => times.map((t) => el.xPixel(t)),
        [
          0,
          ms(alignment.trace_end_us),
          ms(device.peak_time_us),
          ms(device.ooms[0].time_us),
          ms(device.first_time_us),
        ],
      );
      const width = await chart.evaluate((el) => el.clientWidth);
      const [start, end, peak, oom, first] = at;
      for (const x of [start, end, peak, oom]) assert.ok(x > 0 && x < width, `${at} in ${width}`);
      assert.ok(end - start > 40, `the trace is ${end - start} px wide, not a sliver`);
      assert.ok(first < 0, 'the history before is off the opening window (the slider has it)');
      await shootWidths('memory-snapshot', '[data-testid="snapshot-timeline-0"]');
      h.assertNoErrors(env.errors);
    });

    test('kernels: a launch delay far past the kernel says it queued; compiled source', async () => {
      // At 1920 px the launch delay columns show (1280 px drops them first).
      await env.page.setViewportSize({ width: 1920, height: 1000 });
      await open({ run: 'v100', view: 'kernels' }, 'kernels');
      const queued = frame().locator('[data-testid="kernel-queued"]').first();
      await queued.waitFor({ timeout: WAIT_MS });
      await env.page.setViewportSize({ width: 1280, height: 1000 });
      const title = await queued.evaluate((el) => el.closest('[title]')?.getAttribute('title'));
      assert.match(title, /waited behind the work queued before it on its stream/);
      await shootWidths('kernels-v100', '[data-testid="kernels-table"]');
      await open({ run: 'compiled', view: 'kernels' }, 'kernels');
      await shootWidths('kernels-compiled', '[data-testid="kernels-table"]');
      h.assertNoErrors(env.errors);
    });

    test('the per-step header keeps each swatch beside its label', async () => {
      await open({ run: 'v100', view: 'overview' }, 'overview');
      const table = frame().locator('[data-testid="breakdown-table"]');
      await table.waitFor({ timeout: WAIT_MS });
      for (const width of [1280, 1920]) {
        await env.page.setViewportSize({ width, height: 1000 });
        await env.page.waitForTimeout(300);
        const apart = await table.evaluate((el) =>
          [...el.querySelectorAll('.ks-th .ks-swatch')]
            .filter((s) => {
              const label = s.parentElement;
              const a = s.getBoundingClientRect();
              const range = document.createRange();
              range.selectNodeContents(label);
              const text = [...range.getClientRects()].at(-1);
              return text && Math.abs(text.top - a.top) > a.height;
            })
            .map((s) => s.parentElement.textContent),
        );
        assert.deepEqual(apart, [], `at ${width} px`);
      }
      await shootWidths('overview-steps', '[data-testid="breakdown-table"]');
      await shootWidths('overview-health', '[data-testid="overview-health"]');
      h.assertNoErrors(env.errors);
    });

    test('the trace view writes times to sensible decimals', async () => {
      await open({ ...QWEN, view: 'trace', q: 'aten::mm' }, 'trace');
      const hit = frame().locator('.ks-hit-time').first();
      await hit.waitFor({ state: 'attached', timeout: WAIT_MS });
      await frame().locator('[data-testid="trace-tab-search"]').click();
      await hit.waitFor({ timeout: WAIT_MS });
      assert.match(await hit.innerText(), /^\d+(\.\d{1,4})? (µs|ms|s)$/);
      await frame().locator('[data-testid="trace-search-hit"]').first().click();
      const start = frame().locator('dt:text-is("Start") + dd').first();
      await start.waitFor({ state: 'attached', timeout: WAIT_MS });
      await frame().locator('[data-testid="trace-tab-details"]').click();
      await start.waitFor({ timeout: WAIT_MS });
      for (const dd of [start, frame().locator('dt:text-is("End") + dd').first()]) {
        const text = await dd.innerText();
        assert.match(text, /^\d+(\.\d)? µs$|^\d+(\.\d{1,3})? ms$|^\d+(\.\d{1,4})? s$/, text);
      }
      await shootWidths('trace-details');
      h.assertNoErrors(env.errors);
    });

    test('every other changed page at both widths', async () => {
      await open({ ...QWEN, view: 'flamegraph', 'flame.q': 'linear' }, 'flamegraph');
      await shootWidths('flamegraph-cpu');
      await open({ ...QWEN, view: 'memory' }, 'memory');
      await shootWidths('memory-peak-stack', '[data-testid="memory-peak"]');
      await open({ ...QWEN, view: 'diff', target_run: 'v100' }, 'diff');
      await shootWidths('diff');
      await open({ run: 'v100', view: 'trends' }, 'trends');
      await shootWidths('trends');
      h.assertNoErrors(env.errors);
    });
  },
);
