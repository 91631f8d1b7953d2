// Real-browser test of the Trace view: a real TensorBoard on a temporary logdir, Debian's
// chromium driven by playwright-core, the canvas timeline checked against the plugin's own
// timeline routes (tracks, trace, event, search, flows, range_summary).
//
// Logdir: the CPU sample (samples/train_cpu.py --no-ddp: runs "cnn", "mlp") and, when
// ../shared/corpus exists, the old plugin's V100 ResNet-50 trace ("resnet50_gpu") and two
// ranks of HTA's trace_filter sample ("ranks"). With KINETOSCOPE_E2E_BIG_TRACE=<file> a
// big trace (e.g. make_big_trace.py's 1 GB tiling) is added as run "big" and the
// performance test measures first paint, per-zoom latency and the JS heap.
//
// Screenshots go to test-output/e2e/trace/NN-<state>.png (a folder of their own: run.mjs
// clears the *.png next to it when it starts), TensorBoard's log to
// test-output/e2e/trace/tensorboard.log, measurements to test-output/e2e/trace/perf.json.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, sleep } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e', 'trace');
const BIG_TRACE = process.env.KINETOSCOPE_E2E_BIG_TRACE ?? '';
const BROWSER_ARGS = [...h.BROWSER_ARGS, '--enable-precise-memory-info'];
const VIEWPORT = { width: 1440, height: 1000 };
const WAIT_MS = 60_000;
/** Must match views/trace/layout.ts METRICS. */
const ROW_HEIGHT = 18;
const TRACK_PAD = 3;

// ----- helpers ---------------------------------------------------------------------

/** h.waitUntil polling more often. */
function waitUntil(what, fn, timeoutMs = WAIT_MS, everyMs = 100) {
  return h.waitUntil(what, fn, timeoutMs, everyMs);
}

const shoot = h.screenshotter(OUT);

// ----- shared state ----------------------------------------------------------------

const env = h.newEnv({
  haveSample: false,
  haveCorpus: false,
  /** Every `trace` request of the page: its parameters, and the response once it came. */
  windows: [],
});

async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  return { status: response.status, body: await response.json() };
}

/** A timeline route's answer once every worker is loaded (202 while loading). */
async function apiReady(route, params) {
  return waitUntil(
    `${route} ${JSON.stringify(params)}`,
    async () => {
      const { status, body } = await api(route, params);
      if (status === 200) return body;
      if (status === 202) return null;
      throw new Error(`${route} answered ${status}: ${JSON.stringify(body)}`);
    },
    600_000,
    500,
  );
}

function frame() {
  return h.pluginFrame(env.page);
}

function tl() {
  return frame().locator('[data-testid="trace-timeline"]');
}

async function screenshot(name) {
  return shoot(env.page, name);
}

function watchPage(page) {
  h.watchErrors(page, env.errors);
  page.on('response', async (response) => {
    const url = response.url();
    if (!url.includes(`/data/plugin/${PLUGIN}/`)) return;
    if (new URL(url).pathname.endsWith('/trace') && response.status() === 200) {
      const entry = env.windows.find((w) => w.url === url && !w.body);
      if (!entry) return;
      try {
        entry.body = await response.json();
        entry.ms = Date.now() - entry.at;
      } catch {
        // the page went away
      }
    }
  });
  page.on('request', (request) => {
    const url = request.url();
    if (new URL(url).pathname.endsWith(`/data/plugin/${PLUGIN}/trace`)) {
      const p = new URL(url).searchParams;
      env.windows.push({
        url,
        at: Date.now(),
        t0: Number(p.get('t0')),
        t1: Number(p.get('t1')),
        width: Number(p.get('width')),
        tracks: (p.get('tracks') ?? '').split(',').filter(Boolean),
        body: null,
      });
    }
  });
}

function assertNoErrors() {
  h.assertNoErrors(env.errors);
}

async function newPage() {
  if (env.page) await env.page.close();
  env.page = await env.context.newPage();
  env.windows = [];
  watchPage(env.page);
  return env.page;
}

/** Opens the Trace view of a worker-span through a TensorBoard link. */
async function openTrace(run, worker = 'worker0', span = '1', extra = '') {
  const status = await waitUntil(
    `${run}/${worker} to load`,
    async () => {
      const { body } = await api('status', { run, worker, span });
      return body.state === 'ready' ? body : null;
    },
    900_000,
    250,
  );
  assert.ok(status.views.includes('trace'), `status.views lacks "trace": ${status.views}`);
  const hash =
    `#${PLUGIN}&p.${PLUGIN}.run=${encodeURIComponent(run)}&p.${PLUGIN}.worker=${worker}` +
    `&p.${PLUGIN}.span=${span}&p.${PLUGIN}.view=trace${extra}`;
  await newPage(); // a fresh page: the view starts from its defaults
  const started = Date.now();
  await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
  await frame()
    .locator(`[data-testid="trace"][data-ready="true"][data-run="${run}"]`)
    .waitFor({ state: 'visible', timeout: 600_000 });
  const readyMs = Date.now() - started;
  await settle();
  return { readyMs, settledMs: Date.now() - started };
}

/** Waits until the timeline has no request under way and has drawn. */
async function settle(timeout = WAIT_MS) {
  await tl().waitFor({ state: 'visible', timeout });
  await waitUntil(
    'the timeline to settle',
    async () => {
      const ds = await tl().evaluate((el) => ({ ...el.dataset }));
      return ds.pending === '0' && Number(ds.responses) > 0 ? ds : null;
    },
    timeout,
    50,
  );
  // the fetch debounce may still be pending: wait past it and check again
  await sleep(250);
  return waitUntil(
    'the timeline to settle',
    async () => {
      const ds = await tl().evaluate((el) => ({ ...el.dataset }));
      return ds.pending === '0' ? ds : null;
    },
    timeout,
    50,
  );
}

/** The visible window (absolute µs) and canvas geometry. */
async function viewState() {
  const ds = await tl().evaluate((el) => ({ ...el.dataset }));
  const box = await frame().locator('[data-testid="trace-canvas"]').boundingBox();
  return { t0: Number(ds.t0), t1: Number(ds.t1), width: Number(ds.width), box, ds };
}

/** Page coordinates of the middle of an event (absolute µs) at a depth of a track. */
async function eventPoint(trackId, start, dur, depth) {
  const { t0, t1, width, box } = await viewState();
  const label = frame().locator(`[data-testid="trace-track-label"][data-track="${trackId}"]`);
  const lb = await label.boundingBox();
  assert.ok(lb, `no label for track ${trackId}`);
  const mid = Math.max(start, t0) + (Math.min(start + dur, t1) - Math.max(start, t0)) / 2;
  const x = box.x + ((mid - t0) / (t1 - t0)) * width;
  const y = lb.y + TRACK_PAD + depth * ROW_HEIGHT + ROW_HEIGHT / 2;
  return { x, y };
}

/** The latest answered `trace` window (with its response). */
function lastWindow() {
  const done = env.windows.filter((w) => w.body);
  assert.ok(done.length, 'no trace window was answered');
  return done.at(-1);
}

/** The exact event of a track at a depth with the longest part in view [t0, t1]. */
async function longestEvent(trackId, depth = 0) {
  const { t0, t1 } = await viewState();
  for (const w of env.windows.filter((x) => x.body).reverse()) {
    const ev = w.body.tracks.find((t) => t.id === trackId)?.events;
    if (!ev) continue;
    const shown = (i) => Math.min(ev.start[i] + ev.dur[i], t1) - Math.max(ev.start[i], t0);
    let best = -1;
    for (let i = 0; i < ev.row.length; i++) {
      if (ev.depth[i] !== depth || shown(i) <= 0) continue;
      if (best < 0 || shown(i) > shown(best)) best = i;
    }
    if (best >= 0) {
      return {
        row: ev.row[best],
        name: w.body.names[ev.name[best]],
        start: ev.start[best],
        dur: ev.dur[best],
        depth,
      };
    }
  }
  return null;
}

async function hover(x, y) {
  await env.page.mouse.move(x, y);
}

async function pressKey(key, holdMs) {
  await env.page.keyboard.down(key);
  await sleep(holdMs);
  await env.page.keyboard.up(key);
}

async function setTensorBoardTheme(label) {
  await h.setTensorBoardTheme(env.page, label);
}

async function selectedRow() {
  return Number(await tl().getAttribute('data-selected-row'));
}

async function detailsName() {
  const el = frame().locator('[data-testid="trace-details-name"]');
  await el.waitFor({ state: 'visible' });
  return el.innerText();
}

// ----- the suite -------------------------------------------------------------------

describe('the Trace view in TensorBoard', { timeout: 1_800_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-trace-e2e-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: VIEWPORT,
        waitMs: WAIT_MS,
        args: BROWSER_ARGS,
        checkServed: false,
        populate: async (logdir) => {
          if (existsSync(h.SAMPLE)) {
            h.runSample(logdir, ['--no-ddp']);
            env.haveSample = true;
          }
          if (existsSync(CORPUS)) {
            const resnet = path.join(
              CORPUS,
              'pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0',
            );
            const gpu = path.join(logdir, 'resnet50_gpu');
            await mkdir(gpu, { recursive: true });
            const first = (await readdir(resnet)).filter((n) => n.endsWith('.gz')).sort()[0];
            await copyFile(path.join(resnet, first), path.join(gpu, first));
            const ranks = path.join(logdir, 'ranks');
            await mkdir(ranks, { recursive: true });
            for (const r of [0, 1]) {
              await copyFile(
                path.join(CORPUS, `hta/tests/data/trace_filter/sampled_rank-${r}.json.gz`),
                path.join(ranks, `rank${r}.1.pt.trace.json.gz`),
              );
            }
            env.haveCorpus = true;
          }
          if (BIG_TRACE) {
            assert.ok(existsSync(BIG_TRACE), `no big trace at ${BIG_TRACE}`);
            await mkdir(path.join(logdir, 'big'), { recursive: true });
            const name = BIG_TRACE.endsWith('.gz')
              ? 'worker0.1.pt.trace.json.gz'
              : 'worker0.1.pt.trace.json';
            await symlink(path.resolve(BIG_TRACE), path.join(logdir, 'big', name));
          }
          assert.ok(
            env.haveSample || env.haveCorpus,
            'neither samples/train_cpu.py nor the corpus',
          );
        },
      });
      await newPage();
    },
    { timeout: 900_000 },
  );

  afterEach((t) => h.noteOutcome(env, t));
  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('the CPU sample renders its tracks, counters and steps', { timeout: 300_000 }, async (t) => {
    if (!env.haveSample) return t.skip('no samples/train_cpu.py');
    const key = { run: 'cnn', worker: 'worker0', span: '1' };
    const status = await waitUntil(
      'the sample to load',
      async () => {
        const { body } = await api('status', key);
        return body.state === 'ready' ? body : null;
      },
      300_000,
      250,
    );
    assert.ok(status.views.includes('trace'), `status.views lacks "trace": ${status.views}`);
    await openTrace('cnn');
    const tracks = await apiReady('tracks', key);
    // The labels column lists the tracks in the server's order.
    const labels = await frame()
      .locator('[data-testid="trace-track-label"]')
      .evaluateAll((els) => els.map((el) => el.dataset.track));
    const expected = tracks.tracks.map((tr) => tr.id).slice(0, labels.length);
    assert.deepEqual(labels, expected);
    assert.ok(labels.length >= 3, `only ${labels.length} track labels`);
    // The first window asked covers the whole trace at about the canvas width.
    const { width, t0, t1 } = await viewState();
    const first = env.windows[0];
    assert.ok(first, 'no trace request');
    assert.ok(first.t0 <= t0 + 1 && first.t1 >= t1 - 1, 'the first window covers the view');
    assert.ok(first.width >= width / 2 && first.width <= 20_000, `width ${first.width}`);
    assert.ok((first.t1 - first.t0) / first.width <= (t1 - t0) / width, 'no coarser than a pixel');
    // The canvas shows the longest top-level event where the API says it is.
    const cpu = tracks.tracks.find((tr) => tr.kind === 'cpu');
    const ev = await longestEvent(cpu.id);
    assert.ok(ev, 'no exact event on the CPU track');
    const p = await eventPoint(cpu.id, ev.start, ev.dur, 0);
    await hover(p.x, p.y);
    const tip = frame().locator('.ks-tl-tooltip');
    await tip.waitFor({ state: 'visible' });
    assert.match(await tip.innerText(), new RegExp(ev.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    // Step bands and counters come from the tracks route.
    assert.ok(tracks.steps.length > 0, 'the sample has ProfilerStep ranges');
    assert.ok(
      tracks.tracks.some((tr) => tr.kind === 'counter'),
      'a memory counter track',
    );
    const drawn = await h.canvasColourCount(frame().locator('[data-testid="trace-canvas"]'));
    assert.ok(drawn > 20, `the canvas looks empty (${drawn} colours)`);
    // "Download trace" links the original file.
    const href = await frame().locator('[data-testid="trace-download"]').getAttribute('href');
    const file = await fetch(new URL(href, env.base));
    assert.equal(file.status, 200);
    assert.match(file.headers.get('content-disposition') ?? '', /attachment; filename=worker0\./);
    const listed = (await api('spans', { run: 'cnn', worker: 'worker0' })).body.spans[0];
    assert.equal((await file.arrayBuffer()).byteLength, listed.size);
    await env.page.mouse.move(5, 5);
    await screenshot('cpu-sample-light');
    assertNoErrors();
  });

  test('zooming and panning change what the server is asked', { timeout: 300_000 }, async (t) => {
    if (!env.haveSample) return t.skip('no samples/train_cpu.py');
    await openTrace('cnn');
    const before = await viewState();
    const asked = env.windows.length;
    const canvas = before.box;
    // W zooms in around the mouse.
    await hover(canvas.x + canvas.width * 0.4, canvas.y + 60);
    await pressKey('w', 700);
    await settle();
    const zoomed = await viewState();
    assert.ok(zoomed.t1 - zoomed.t0 < (before.t1 - before.t0) / 3, 'W zoomed in');
    const mid = (t) => t.t0 + 0.4 * (t.t1 - t.t0);
    assert.ok(
      Math.abs(mid(zoomed) - mid(before)) < (before.t1 - before.t0) * 0.02,
      'around the mouse',
    );
    assert.ok(env.windows.length > asked, 'zooming asked the server again');
    const w = lastWindow();
    const upp = (w.t1 - w.t0) / w.width;
    assert.ok(upp <= (zoomed.t1 - zoomed.t0) / zoomed.width + 1e-6, 'at least screen resolution');
    // the plan's level, or one finer still serving
    assert.ok(upp > (zoomed.t1 - zoomed.t0) / zoomed.width / 4.01, 'not needlessly fine');
    assert.ok(w.t0 <= zoomed.t0 && w.t1 >= zoomed.t1, 'the window covers the view');
    assert.ok(w.t1 - w.t0 < before.t1 - before.t0, 'a smaller window than at first');
    assert.ok(w.body.exact_min_us < env.windows[0].body.exact_min_us, 'finer exact events');
    // D pans later, A earlier; S zooms back out.
    await pressKey('d', 300);
    await settle();
    const panned = await viewState();
    assert.ok(panned.t0 > zoomed.t0, 'D panned to later times');
    await pressKey('a', 300);
    await settle();
    assert.ok((await viewState()).t0 < panned.t0, 'A panned to earlier times');
    await pressKey('s', 400);
    await settle();
    const out = await viewState();
    assert.ok(out.t1 - out.t0 > zoomed.t1 - zoomed.t0, 'S zoomed out');
    // Ctrl+wheel zooms too; a drag pans.
    const wheelFrom = await viewState();
    await hover(canvas.x + canvas.width / 2, canvas.y + 60);
    await env.page.keyboard.down('Control');
    await env.page.mouse.wheel(0, -300);
    await env.page.keyboard.up('Control');
    await settle();
    const wheeled = await viewState();
    assert.ok(wheeled.t1 - wheeled.t0 < wheelFrom.t1 - wheelFrom.t0, 'Ctrl+wheel zoomed in');
    await env.page.mouse.move(canvas.x + 600, canvas.y + 60);
    await env.page.mouse.down();
    await env.page.mouse.move(canvas.x + 400, canvas.y + 60, { steps: 5 });
    await env.page.mouse.up();
    await settle();
    const dragged = await viewState();
    assert.ok(dragged.t0 > wheeled.t0, 'dragging left shows later times');
    // Keys typed into the search box do not move the timeline.
    const search = frame().locator('[data-testid="trace-search"]');
    await search.click();
    await env.page.keyboard.type('wwwsss');
    await sleep(300);
    const typed = await viewState();
    assert.equal(typed.t0, dragged.t0, 'typing W/S in the search box does not zoom');
    assert.equal(await search.inputValue(), 'wwwsss');
    await search.fill('');
    await screenshot('cpu-sample-zoomed');
    // Reset shows everything again.
    await frame().locator('[data-testid="trace-reset-zoom"]').click();
    await settle();
    const reset = await viewState();
    assert.ok(reset.t1 - reset.t0 >= before.t1 - before.t0 - 1);
    assertNoErrors();
  });

  test('clicking an event shows its details; links jump', { timeout: 300_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const key = { run: 'resnet50_gpu', worker: 'worker0', span: '1' };
    await openTrace('resnet50_gpu');
    const tracks = await apiReady('tracks', key);
    const gpu = tracks.tracks.find((tr) => tr.kind === 'gpu');
    assert.ok(gpu, 'the GPU trace has a GPU stream track');
    // Zoom into the middle of a step so kernels come back as exact events.
    const step = tracks.steps[1] ?? tracks.steps[0];
    const vs = await viewState();
    const box = vs.box;
    const stepMid = (step.start_us + step.end_us) / 2;
    await hover(box.x + ((stepMid - vs.t0) / (vs.t1 - vs.t0)) * vs.width, box.y + 40);
    await pressKey('w', 900);
    await settle();
    const kernel = await longestEvent(gpu.id);
    assert.ok(kernel, 'no exact kernel in view');
    const p = await eventPoint(gpu.id, kernel.start, kernel.dur, 0);
    await env.page.mouse.click(p.x, p.y);
    assert.equal(await detailsName(), kernel.name);
    assert.equal(await selectedRow(), kernel.row);
    const details = await apiReady('event', { ...key, row: kernel.row });
    assert.equal(details.name, kernel.name);
    const panel = frame().locator('[data-testid="trace-details"]');
    assert.equal(await panel.getAttribute('data-row'), String(kernel.row));
    await frame().locator('[data-testid="trace-details-args"]').waitFor();
    const argsText = await frame().locator('[data-testid="trace-details-args"]').innerText();
    for (const k of Object.keys(details.args).slice(0, 3))
      assert.ok(argsText.includes(k), `arg ${k}`);
    await screenshot('gpu-kernel-details');
    // The kernel's launcher: the link button selects it and shows its details.
    const launcher = details.flows.find((f) => f.relation === 'launcher');
    assert.ok(launcher, 'the kernel has a launcher');
    await frame().locator('[data-testid="trace-link-launcher"]').first().click();
    await waitUntil(
      'the launcher to be selected',
      async () => (await selectedRow()) === launcher.row,
    );
    assert.equal(await detailsName(), launcher.name);
    // …and its CPU op, with input shapes and a call stack of path:line frames.
    const back = await apiReady('event', { ...key, row: launcher.row });
    const op = details.flows.find((f) => f.relation === 'cpu_op');
    if (op) {
      await frame().locator('[data-testid="trace-details-ancestors"] button').last().click();
      await waitUntil(
        'an enclosing op to be selected',
        async () => (await selectedRow()) !== launcher.row,
      );
      const opRow = await selectedRow();
      assert.ok(back.ancestors.some((a) => a.row === opRow));
      const opDetails = await apiReady('event', { ...key, row: opRow });
      assert.equal(await detailsName(), opDetails.name);
      if (opDetails.call_stack.length) {
        const stack = await frame().locator('[data-testid="trace-details-stack"]').innerText();
        assert.match(stack, /\.py:\d+/);
      }
      if (opDetails.input_shapes?.length) {
        await frame().locator('[data-testid="trace-details-shapes"]').waitFor();
      }
      // An op that launched kernels links back to them.
      const gpuLink = opDetails.flows.find((f) => f.relation === 'gpu_activity');
      if (gpuLink) {
        await frame().locator('[data-testid="trace-link-gpu_activity"]').first().click();
        await waitUntil(
          'the GPU kernel to be selected',
          async () => (await selectedRow()) === gpuLink.row,
        );
      }
    }
    await env.page.mouse.move(5, 5);
    await screenshot('gpu-op-details');
    // Flows: by default only the selected event's (a mesh of every launch otherwise); the
    // toggle draws every arrow in view.
    await waitUntil('flows in view', async () => Number(await tl().getAttribute('data-flows')) > 0);
    const inView = Number(await tl().getAttribute('data-flows'));
    const drawn = Number(await tl().getAttribute('data-flows-drawn'));
    assert.ok(inView <= 40 || drawn < inView, `${drawn} of ${inView} flows drawn by default`);
    await frame().locator('[data-testid="trace-flows-toggle"]').click();
    await waitUntil(
      'every flow drawn',
      async () =>
        Number(await tl().getAttribute('data-flows-drawn')) ===
        Number(await tl().getAttribute('data-flows')),
    );
    await settle();
    await screenshot('gpu-flows');
    await frame().locator('[data-testid="trace-flows-toggle"]').click();
    assertNoErrors();
  });

  test('search jumps to matches and selects them', { timeout: 300_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const key = { run: 'resnet50_gpu', worker: 'worker0', span: '1' };
    await openTrace('resnet50_gpu');
    const query = 'conv2d';
    const found = await apiReady('search', { ...key, q: query, limit: 500 });
    assert.ok(found.total > 1, 'the trace has conv2d ops');
    const search = frame().locator('[data-testid="trace-search"]');
    await search.fill(query);
    await search.press('Enter');
    await waitUntil(
      'the first match to be selected',
      async () => (await selectedRow()) === found.hits.row[0],
    );
    assert.match(await detailsName(), /conv2d/);
    assert.match(await frame().locator('[data-testid="trace-search-count"]').innerText(), /^1 \/ /);
    await settle();
    const vs = await viewState();
    const hitTs = found.hits.ts[0];
    assert.ok(hitTs >= vs.t0 && hitTs <= vs.t1, 'the view shows the match');
    await search.press('Enter');
    await waitUntil('the second match', async () => (await selectedRow()) === found.hits.row[1]);
    await frame().locator('[data-testid="trace-search-next"]').click();
    await waitUntil('the third match', async () => (await selectedRow()) === found.hits.row[2]);
    await search.press('Shift+Enter');
    await waitUntil('back to the second', async () => (await selectedRow()) === found.hits.row[1]);
    const listed = await frame().locator('[data-testid="trace-search-hit"]').count();
    assert.equal(listed, Math.min(found.hits.row.length, 500));
    await frame().locator('[data-testid="trace-tab-search"]').click();
    await frame().locator('[data-testid="trace-search-hit"]').nth(4).click();
    await waitUntil('a listed match', async () => (await selectedRow()) === found.hits.row[4]);
    await settle();
    await env.page.mouse.move(5, 5);
    await screenshot('search');
    assertNoErrors();
  });

  test('shift-drag sums up an area', { timeout: 300_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    const key = { run: 'resnet50_gpu', worker: 'worker0', span: '1' };
    await openTrace('resnet50_gpu');
    const { box } = await viewState();
    const ranges = [];
    env.page.on('request', (r) => {
      if (r.url().includes('/range_summary?')) ranges.push(new URL(r.url()).searchParams);
    });
    await env.page.keyboard.down('Shift');
    await env.page.mouse.move(box.x + 200, box.y + 10);
    await env.page.mouse.down();
    await env.page.mouse.move(box.x + 500, box.y + box.height - 10, { steps: 8 });
    await env.page.mouse.up();
    await env.page.keyboard.up('Shift');
    const summary = frame().locator('[data-testid="trace-range-summary"]');
    await summary.waitFor({ state: 'visible' });
    assert.equal(ranges.length, 1);
    const params = ranges[0];
    const expected = await apiReady('range_summary', {
      ...key,
      t0: params.get('t0'),
      t1: params.get('t1'),
      tracks: params.get('tracks'),
      limit: params.get('limit'),
    });
    assert.equal(await summary.getAttribute('data-events'), String(expected.event_count));
    assert.ok(expected.rows.length > 0);
    const top = frame().locator('[data-testid="trace-range-table"] .ks-twindow .ks-tr').first();
    assert.match(
      await top.innerText(),
      new RegExp(expected.rows[0].name.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
    );
    await screenshot('area-summary');
    await env.page.keyboard.press('Escape');
    assertNoErrors();
  });

  test('several ranks share one time axis, labelled by rank', { timeout: 300_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    await openTrace('ranks', 'rank0');
    await frame().locator('[data-testid="trace-workers"]').click();
    await frame().locator('[data-testid="trace-worker-rank1"] input').check();
    await frame().locator('[data-testid="trace-workers"]').click();
    await frame()
      .locator('[data-testid="trace-group-label"]', { hasText: 'rank 1' })
      .first()
      .waitFor({ state: 'visible', timeout: 120_000 });
    await settle();
    const w = lastWindow();
    assert.ok(new URL(w.url).searchParams.get('workers') === 'rank0,rank1', w.url);
    assert.ok(
      w.tracks.some((id) => id.startsWith('rank1:')),
      'rank 1 tracks requested',
    );
    const groups = await frame().locator('[data-testid="trace-group-label"]').allInnerTexts();
    assert.ok(groups.some((g) => g.includes('rank 0')) && groups.some((g) => g.includes('rank 1')));
    // A match on rank 1: selected on its track, its details read from rank 1 in epoch time.
    const both = { run: 'ranks', span: '1', workers: 'rank0,rank1' };
    const found = await apiReady('search', { ...both, q: 'ProfilerStep', limit: 500 });
    const onRank1 = found.hits.track.findIndex((id) => id.startsWith('rank1:'));
    assert.ok(onRank1 >= 0, 'rank 1 has steps');
    const search = frame().locator('[data-testid="trace-search"]');
    await search.fill('ProfilerStep');
    await search.press('Enter');
    await frame().locator('[data-testid="trace-tab-search"]').click();
    await frame().locator('[data-testid="trace-search-hit"]').nth(onRank1).click();
    const row = found.hits.row[onRank1];
    await waitUntil('the rank 1 step', async () => (await selectedRow()) === row);
    const ev = await apiReady('event', { run: 'ranks', span: '1', workers: 'rank1', row });
    await frame().locator('[data-testid="trace-tab-details"]').click();
    assert.equal(await detailsName(), ev.name);
    assert.equal(ev.track, found.hits.track[onRank1]);
    await settle();
    await screenshot('two-ranks');
    assertNoErrors();
  });

  test('dark mode', { timeout: 300_000 }, async (t) => {
    if (!env.haveCorpus) return t.skip('no ../shared/corpus');
    await openTrace('resnet50_gpu');
    await setTensorBoardTheme('Dark');
    await waitUntil('dark theme', () => frame().locator('html[data-theme="dark"]').count());
    await settle();
    const median = await frame()
      .locator('[data-testid="trace-canvas"]')
      .evaluate((c) => {
        const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const lum = [];
        for (let i = 0; i < data.length; i += 4 * 31)
          lum.push((data[i] + data[i + 1] + data[i + 2]) / 3);
        lum.sort((a, b) => a - b);
        return lum[Math.floor(lum.length / 2)];
      });
    assert.ok(median < 100, `a dark canvas, median grey ${median}`);
    await screenshot('gpu-dark');
    const key = { run: 'resnet50_gpu', worker: 'worker0', span: '1' };
    const found = await apiReady('search', { ...key, q: 'sgemm', limit: 5 });
    const search = frame().locator('[data-testid="trace-search"]');
    await search.fill('sgemm');
    await search.press('Enter');
    await waitUntil('a kernel', async () => (await selectedRow()) === found.hits.row[0]);
    await settle();
    await screenshot('gpu-dark-kernel');
    await setTensorBoardTheme('Light');
    assertNoErrors();
  });

  test('a big trace: first paint, zoom latency, flat heap', { timeout: 1_500_000 }, async (t) => {
    if (!BIG_TRACE) return t.skip('set KINETOSCOPE_E2E_BIG_TRACE to a big trace file');
    const key = { run: 'big', worker: 'worker0', span: '1' };
    const loadStart = Date.now();
    await apiReady('tracks', key); // loading and indexing, not the page
    const loadSeconds = (Date.now() - loadStart) / 1000;
    const opened = await openTrace('big');
    const cdp = await env.context.newCDPSession(env.page);
    const firstWindowMs = env.windows[0]?.ms ?? null;
    const heap = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      const usage = await cdp.send('Runtime.getHeapUsage');
      return usage.usedSize;
    };
    const heaps = [await heap()];
    const { box } = await viewState();
    await hover(box.x + box.width * 0.37, box.y + 80);
    const zooms = [];
    // 14 zoom steps in (each about 2x: a new level every time), then back out.
    for (let i = 0; i < 28; i++) {
      const asked = env.windows.length;
      const drawn = Number(await tl().getAttribute('data-responses'));
      await pressKey(i < 14 ? 'w' : 's', 120);
      const released = Date.now();
      // from releasing the key to the new window drawn (debounce + request + decode + draw)
      let frameMs = null;
      for (let k = 0; k < 300; k++) {
        const ds = await tl().evaluate((el) => ({ ...el.dataset }));
        if (Number(ds.responses) > drawn) {
          frameMs = Date.now() - released;
          break;
        }
        if (ds.pending === '0' && env.windows.length === asked && Date.now() - released > 400)
          break;
        await sleep(5);
      }
      const settled = await settle(120_000);
      const fresh = env.windows.slice(asked).filter((w) => w.body);
      zooms.push({
        step: i,
        span_us: Number(settled.t1) - Number(settled.t0),
        requests: env.windows.length - asked,
        request_ms: fresh.map((w) => w.ms),
        frame_ms: frameMs,
        items: fresh.map((w) => w.body.item_count),
        draw_ms: Number(settled.drawMs),
      });
      if (i % 7 === 6) heaps.push(await heap());
    }
    heaps.push(await heap());
    const perf = {
      trace: BIG_TRACE,
      server_load_seconds: loadSeconds,
      // from opening TensorBoard's page to the first frame drawn, and to nothing pending
      first_paint_ms: opened.readyMs,
      first_settled_ms: opened.settledMs,
      first_window_ms: firstWindowMs,
      zooms,
      heap_bytes: heaps,
    };
    await writeFile(path.join(OUT, 'perf.json'), JSON.stringify(perf, null, 2));
    await screenshot('big-trace');
    const latencies = zooms.map((z) => z.frame_ms).filter((ms) => ms !== null);
    latencies.sort((a, b) => a - b);
    const p90 = latencies[Math.floor(latencies.length * 0.9)] ?? 0;
    assert.ok(latencies.length >= 8, 'zooming asked for new windows');
    assert.ok(p90 <= 300, `90th percentile zoom-to-frame latency ${p90} ms > 300 ms`);
    const growth = heaps.at(-1) - heaps[0];
    assert.ok(
      growth < 20 * 1024 * 1024,
      `the JS heap grew by ${(growth / 1048576).toFixed(1)} MiB`,
    );
    assertNoErrors();
  });
});
