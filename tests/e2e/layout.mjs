// Real-browser checks of what a new user trips on (issue 28), at 1280 and 1920 px: every
// view drawn and photographed at both widths; the step chart's legend whole (not paged),
// table headers whole, the trace's counter track labels whole, the "Compare with…" box
// showing its target, the Diff title naming both spans; at 1920 px pages use the width;
// on a CPU-only trace no all-zero GPU series or columns, and the step tooltip is titled by
// the step's name with its total; the Views list in the old plugin's order; a view the
// trace lacks says why on the page.
//
// Same harness and conventions as run.mjs (see harness.mjs). The logdir holds the old
// plugin's resnet50 V100 sample, a CPU-only BERT run, a two-rank DDP job (../shared/corpus)
// and the H100 bf16 GEMM trace (tests/data/h100, with nn.Module events). Screenshots:
// test-output/e2e/layout/NN-<width>-<view>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, copyGlob } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'layout');
const WAIT_MS = 90_000;
const GPU_RUN = 'resnet50_v100';
const CPU_RUN = 'bert_cpu';
const DDP_RUN = 'resnet50_ddp';
const H100_RUN = 'h100_gemm';
const TRACING = path.join(CORPUS, 'gaoteng-git-kineto', 'tb_plugin', 'test', 'data', 'tracing');
const SOURCES = {
  [GPU_RUN]: path.join(CORPUS, 'pytorch-kineto', 'tb_plugin', 'samples', 'resnet50_num_workers_0'),
  [CPU_RUN]: path.join(TRACING, 'bert_newAPI_cpu'),
  [DDP_RUN]: path.join(TRACING, 'resnet50_newAPI_ddp'),
};
const photograph = h.screenshotter(SHOTS, { fullPage: true });

/** A screenshot of the whole page: the plugin scrolls inside TensorBoard's iframe, so the
 * window is made as tall as the plugin's page for the picture, then put back. */
async function shoot(page, name) {
  const { width, height } = page.viewportSize() ?? { width: 1280, height: 1000 };
  const tall = await frame()
    .locator('body')
    .evaluate((body) => body.scrollHeight);
  await page.setViewportSize({ width, height: Math.min(Math.max(height, tall + 120), 8000) });
  await h.sleep(400); // charts follow the new size
  const file = await photograph(page, name);
  await page.setViewportSize({ width, height });
  return file;
}

const env = h.newEnv({ haveCorpus: false, workers: /** @type {Record<string, string>} */ ({}) });

function frame() {
  return h.pluginFrame(env.page);
}

function ourHash(state) {
  const items = [PLUGIN];
  for (const [k, v] of Object.entries(state)) {
    items.push(`${encodeURIComponent(`p.${PLUGIN}.${k}`)}=${encodeURIComponent(v)}`);
  }
  return `#${items.join('&')}`;
}

/** TensorBoard's page at `width` px with `hash`; waits for a ready view `testid`. */
async function open(width, hash, testid) {
  await env.page.setViewportSize({ width, height: 1000 });
  await env.page.goto('about:blank');
  await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
  const selector = `[data-testid="${testid}"][data-ready="true"]:not([data-busy="true"])`;
  await frame().locator(selector).first().waitFor({ state: 'visible', timeout: WAIT_MS });
}

/** A worker view of `run` (its first worker, span 1). */
function viewHash(run, view, extra = {}) {
  return ourHash({ run, worker: env.workers[run], span: '1', view, ...extra });
}

/** Elements whose text is cut (ellipsis or clipped): header cells, legends, labels. */
async function cutTexts(selector) {
  return frame()
    .locator(selector)
    .evaluateAll((els) =>
      els
        .filter((el) => el instanceof HTMLElement && el.offsetParent !== null)
        .filter((el) => el.scrollWidth > el.clientWidth + 1)
        .map((el) => el.textContent?.trim() ?? ''),
    );
}

describe('layout at 1280 and 1920 px', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-layout-',
        log: path.join(OUT, 'tensorboard-layout.log'),
        viewport: { width: 1280, height: 1000 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          await copyGlob(
            path.join(REPO, 'tests', 'data', 'h100', 'gemm_bf16'),
            '.pt.trace.json.gz',
            path.join(logdir, H100_RUN),
          );
          if (Object.values(SOURCES).every((dir) => existsSync(dir))) {
            for (const [run, dir] of Object.entries(SOURCES)) {
              await copyGlob(dir, '.pt.trace.json.gz', path.join(logdir, run));
            }
            env.haveCorpus = true;
          }
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
      const listing = await (await fetch(new URL(`data/plugin/${PLUGIN}/runs`, env.base))).json();
      for (const run of listing.runs) env.workers[run.name] = run.workers[0].name;
    },
    { timeout: 300_000 },
  );

  after(async () => {
    await h.stopEnv(env);
  });

  /** Colour of each category's swatch in the per-step table's headers, by label. */
  async function headerSwatches() {
    return frame()
      .locator('[data-testid="breakdown-table"] .ks-th')
      .evaluateAll((ths) =>
        Object.fromEntries(
          ths
            .filter((th) => th.querySelector('.ks-swatch'))
            .map((th) => [
              th.textContent?.trim() ?? '',
              getComputedStyle(/** @type {HTMLElement} */ (th.querySelector('.ks-swatch')))
                .backgroundColor,
            ]),
        ),
      );
  }

  /** Which of `colors` (css rgb()) the step chart draws in its legend band (above the bars). */
  async function legendColors(colors) {
    return frame()
      .locator('[data-testid="step-chart"] canvas')
      .first()
      .evaluate((canvas, wanted) => {
        const c = /** @type {HTMLCanvasElement} */ (canvas);
        const ctx = c.getContext('2d');
        if (!ctx) return [];
        const band = Math.round(c.height * (52 / 300)); // the legend's two lines
        const { data } = ctx.getImageData(0, 0, c.width, band);
        const rgb = (css) => (css.match(/\d+/g) ?? []).slice(0, 3).map(Number);
        return Object.entries(wanted)
          .filter(([, css]) => {
            const [r, g, b] = rgb(css);
            for (let i = 0; i < data.length; i += 4) {
              const near =
                Math.abs(data[i] - r) <= 3 &&
                Math.abs(data[i + 1] - g) <= 3 &&
                Math.abs(data[i + 2] - b) <= 3;
              if (near) return true;
            }
            return false;
          })
          .map(([name]) => name);
      }, colors);
  }

  /** The step chart's tooltip text over its first bar. */
  async function stepTooltip() {
    const chart = frame().locator('[data-testid="step-chart"]');
    await chart.scrollIntoViewIfNeeded();
    const box = await chart.boundingBox();
    assert.ok(box);
    // The first step's band: the left tenth of the plot, low enough to be inside a bar.
    await chart.hover({ position: { x: box.width * 0.08, y: box.height * 0.85 } });
    const tip = chart.locator('div', { hasText: /ProfilerStep#/ }).last();
    await tip.waitFor({ state: 'visible' });
    return (await tip.innerText()).trim();
  }

  test('every view at 1280 and 1920 px', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    for (const width of [1280, 1920]) {
      for (const view of ['overview', 'operators', 'kernels', 'trace', 'memory']) {
        await open(width, viewHash(GPU_RUN, view), view);
        await shoot(env.page, `${width}-${view}`);
      }
      await open(width, viewHash(H100_RUN, 'modules'), 'modules');
      await shoot(env.page, `${width}-modules`);
      await open(width, ourHash({ run: DDP_RUN, view: 'distributed' }), 'distributed');
      await shoot(env.page, `${width}-distributed`);
      const target = { target_run: DDP_RUN, target_worker: env.workers[DDP_RUN], target_span: '1' };
      await open(width, viewHash(GPU_RUN, 'diff', target), 'diff');
      await shoot(env.page, `${width}-diff`);
      await open(width, viewHash(CPU_RUN, 'overview'), 'overview');
      await shoot(env.page, `${width}-overview-cpu-only`);
    }
    h.assertNoErrors(env.errors);
  });

  test('the Views list is in the old plugin order', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const order = ['overview', 'operators', 'kernels', 'trace', 'memory', 'modules', 'diff'];
    for (const run of [GPU_RUN, H100_RUN]) {
      await open(1280, viewHash(run, 'overview'), 'overview');
      const values = await frame()
        .locator('[data-testid="view-select"] option')
        .evaluateAll((options) => options.map((o) => /** @type {HTMLOptionElement} */ (o).value));
      const known = values.filter((v) => order.includes(v));
      assert.deepEqual(
        known,
        order.filter((v) => values.includes(v)),
        `${run}: ${values}`,
      );
      assert.deepEqual(values.slice(0, 4), ['overview', 'operators', 'kernels', 'trace'], run);
    }
    h.assertNoErrors(env.errors);
  });

  test('a view the trace lacks says why on the page', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    // A GPU view on a CPU-only trace: the Overview, and a notice saying why. (A link to
    // Modules opens the Modules page, which says why itself: tests/e2e/compiled.mjs.)
    await open(1280, viewHash(CPU_RUN, 'kernels'), 'overview');
    const notice = frame().locator('[data-testid="view-absent"]');
    await notice.waitFor({ state: 'visible' });
    assert.match(await notice.innerText(), /Showing the Overview instead/);
    await shoot(env.page, '1280-absent-kernels');
    // Choosing a view the trace has clears it.
    await frame().locator('[data-testid="view-select"]').selectOption('operators');
    await frame().locator('[data-testid="operators"][data-ready="true"]').waitFor();
    assert.equal(await notice.isVisible(), false);
    // A GPU view on a CPU-only trace.
    await open(1280, viewHash(CPU_RUN, 'kernels'), 'overview');
    assert.match(await notice.innerText(), /No Kernels view for this trace: it has no GPU kernels/);
    h.assertNoErrors(env.errors);
  });

  test('step chart: whole legend, named tooltip, no all-zero GPU series on a CPU-only trace', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const gpuSwatches = {};
    for (const width of [1280, 1920]) {
      await open(width, viewHash(GPU_RUN, 'overview'), 'overview');
      const swatches = await headerSwatches();
      Object.assign(gpuSwatches, swatches);
      assert.equal(Object.keys(swatches).length, 8, JSON.stringify(swatches));
      // Every category in the legend (a paged legend hid "CPU Exec" at 1280 px).
      assert.deepEqual((await legendColors(swatches)).sort(), Object.keys(swatches).sort());
      const tip = await stepTooltip();
      assert.match(tip, /^ProfilerStep#5 · 187\.95 ms/, tip);
      assert.match(tip, /Kernel\s+98\.60 ms/);
    }
    await open(1280, viewHash(CPU_RUN, 'overview'), 'overview');
    const cpu = await headerSwatches();
    const gpuOnly = ['Kernel', 'Memcpy', 'Memset', 'Runtime'];
    for (const name of gpuOnly) assert.ok(!(name in cpu), `${name} column on a CPU-only trace`);
    assert.ok('CPU Exec' in cpu && 'Other' in cpu, JSON.stringify(cpu));
    const drawn = await legendColors(gpuSwatches);
    assert.deepEqual(
      drawn.filter((n) => gpuOnly.includes(n)),
      [],
      `GPU series drawn: ${drawn}`,
    );
    const tip = await stepTooltip();
    assert.match(tip, /^ProfilerStep#\d+ · [\d.]+ (ms|s)/);
    assert.doesNotMatch(tip, /Kernel|Memcpy/);
    await shoot(env.page, '1280-overview-cpu-only-tooltip');
    h.assertNoErrors(env.errors);
  });

  test('headers, counter labels, the Compare box and the Diff title are whole', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    for (const width of [1280, 1920]) {
      const pages = [
        [GPU_RUN, 'overview'],
        [GPU_RUN, 'operators'],
        [GPU_RUN, 'kernels'],
        [GPU_RUN, 'memory'],
        [H100_RUN, 'modules'],
      ];
      for (const [run, view] of pages) {
        await open(width, viewHash(run, view), view);
        assert.deepEqual(await cutTexts('.ks-th'), [], `${width} px ${view}: headers cut`);
      }
      await open(width, viewHash(GPU_RUN, 'trace'), 'trace');
      const counters = frame().locator('[data-testid="trace-track-label"].ks-tl-kind-counter');
      assert.ok((await counters.count()) >= 3);
      const cut = await counters.evaluateAll((els) =>
        els
          .filter(
            (el) => el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1,
          )
          .map((el) => el.textContent),
      );
      assert.deepEqual(cut, [], `${width} px: counter labels cut`);
      const target = { target_run: DDP_RUN, target_worker: env.workers[DDP_RUN], target_span: '1' };
      await open(width, viewHash(GPU_RUN, 'diff', target), 'diff');
      const chosen = frame().locator('[data-testid="compare-target"]');
      const line = await chosen.innerText();
      assert.equal(line, `Target: ${DDP_RUN} · ${env.workers[DDP_RUN]} (rank 0) · span 1`);
      assert.deepEqual(await cutTexts('[data-testid="compare-target"]'), []);
      const head = await frame().locator('[data-testid="diff"] .ks-view-head p').innerText();
      assert.equal(
        head,
        `${GPU_RUN} · ${env.workers[GPU_RUN]} · span 1 · against ${DDP_RUN} · ${env.workers[DDP_RUN]} · span 1`,
      );
    }
    h.assertNoErrors(env.errors);
  });

  test('at 1920 px the pages use the width', async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    for (const [view, testid] of [
      ['overview', 'breakdown-table'],
      ['operators', 'op-table'],
      ['kernels', 'kernel-table'],
    ]) {
      await open(1920, viewHash(GPU_RUN, view), view);
      const box = await frame().locator(`[data-testid="${testid}"]`).first().boundingBox();
      assert.ok(box && box.width > 1550, `${view}: ${testid} ${box?.width} px wide`);
      // The chart cards of a row share its whole width (no empty third track).
      const row = await frame()
        .locator('.ks-chart-grid, .ks-charts')
        .first()
        .evaluate((grid) => {
          const cards = [...grid.children].map((c) => c.getBoundingClientRect());
          const right = Math.max(...cards.map((c) => c.right));
          return { gap: grid.getBoundingClientRect().right - right, cards: cards.length };
        });
      assert.ok(row.cards >= 2 && row.gap < 4, `${view}: ${JSON.stringify(row)}`);
    }
    h.assertNoErrors(env.errors);
  });
});
