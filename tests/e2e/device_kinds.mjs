// Real-browser test of device kinds in the Trace view (issue 37): a real TensorBoard on a
// logdir holding two built traces in Kineto's shapes, an Intel XPU one (deviceProperties
// as libkineto's XPU plugin writes them, the default "GPU 0" process label, xpu_runtime
// and xpu_driver calls sharing the kernels' correlation ids, ac2g flows) and one of an
// accelerator the trace does not name (glow_runtime launches, no properties). Debian's
// chromium driven by playwright-core opens each one's Trace view: the stream tracks are
// labelled "XPU 0 stream 3" and "accelerator 0 stream 3" (never "GPU"), the timeline
// draws their kernels, and a kernel's details name its runtime call as its one launcher.
// The Overview names the devices by their kind too (issue 43): HTA's corpus MTIA trace
// (when ../shared/corpus is there) and the XPU trace show "1 MTIA" / "1 XPU" in the
// Device tile, "MTIA summary", "Why is the MTIA idle?", "MTIA utilization", and no "GPU".
// Run with `node --test tests/e2e/device_kinds.mjs`.
// Screenshots (1280 px wide): test-output/e2e/device_kinds/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e', 'device_kinds');
const WAIT_MS = 60_000;
const CPU = 100;
const STREAM = 3;
const shoot = h.screenshotter(OUT);
const env = h.newEnv();
const frame = () => h.pluginFrame(env.page);

const XPU_PROPERTIES = {
  id: 0,
  name: 'Intel(R) Data Center GPU Max 1550',
  totalGlobalMem: 68719476736,
  maxComputeUnits: 448,
  maxWorkGroupSize: 1024,
  maxClockFrequency: 1600,
  maxMemAllocSize: 68719476736,
  localMemSize: 131072,
  vendor: 'Intel(R) Corporation',
  driverVersion: '1.3.29735',
};

/** One 1000 µs step; aten::mm launches two kernels on device 0 (100 µs and 50 µs). */
function builtTrace(properties, runtimeCat, driverCat) {
  const events = [
    { ph: 'M', name: 'process_name', pid: 0, tid: 0, args: { name: 'python' } },
    { ph: 'M', name: 'process_labels', pid: 0, tid: 0, args: { labels: 'GPU 0' } },
    {
      ph: 'X',
      cat: 'user_annotation',
      name: 'ProfilerStep#1',
      pid: CPU,
      tid: CPU,
      ts: 0,
      dur: 1000,
      args: { 'External id': 1 },
    },
    {
      ph: 'X',
      cat: 'cpu_op',
      name: 'aten::mm',
      pid: CPU,
      tid: CPU,
      ts: 10,
      dur: 200,
      args: { 'External id': 2 },
    },
  ];
  [
    [300, 100],
    [500, 50],
  ].forEach(([at, dur], i) => {
    const correlation = 1000 + i;
    const call = { ph: 'X', pid: CPU, tid: CPU, args: { correlation } };
    if (driverCat)
      events.push({ ...call, cat: driverCat, name: `drv${i}`, ts: 25 + 50 * i, dur: 5 });
    events.push({ ...call, cat: runtimeCat, name: `launch${i}`, ts: 20 + 50 * i, dur: 20 });
    events.push({
      ph: 'X',
      cat: 'kernel',
      name: `kern${i}`,
      pid: 0,
      tid: STREAM,
      ts: at,
      dur,
      args: { 'External id': 2, correlation, device: 0, stream: STREAM },
    });
    events.push({
      ph: 's',
      cat: 'ac2g',
      name: 'ac2g',
      id: correlation,
      pid: CPU,
      tid: CPU,
      ts: 20 + 50 * i,
    });
    events.push({
      ph: 'f',
      bp: 'e',
      cat: 'ac2g',
      name: 'ac2g',
      id: correlation,
      pid: 0,
      tid: STREAM,
      ts: at,
    });
  });
  return { schemaVersion: 1, deviceProperties: properties, traceEvents: events };
}

const RUNS = {
  xpu: { trace: builtTrace([XPU_PROPERTIES], 'xpu_runtime', 'xpu_driver'), device: 'XPU 0' },
  accel: { trace: builtTrace([], 'glow_runtime', null), device: 'accelerator 0' },
};

const MTIA_TRACE = path.join(
  CORPUS,
  'hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz',
);

/** A route's JSON once it is computed (the harness waits out 202 answers). */
const apiReady = (route, params) => h.routeJson(env, route, params);

async function openTrace(run) {
  const key = { run, worker: 'worker0', span: '1' };
  await waitUntil(
    `${run} to load`,
    async () => (await h.routeJson(env, 'status', key)).state === 'ready',
    300_000,
    250,
  );
  const hash =
    `#${PLUGIN}&p.${PLUGIN}.run=${run}&p.${PLUGIN}.worker=worker0` +
    `&p.${PLUGIN}.span=1&p.${PLUGIN}.view=trace`;
  if (env.page) await env.page.close();
  env.page = await env.context.newPage();
  h.watchErrors(env.page, env.errors);
  await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
  await frame()
    .locator(`[data-testid="trace"][data-ready="true"][data-run="${run}"]`)
    .waitFor({ state: 'visible', timeout: 300_000 });
  const timeline = frame().locator('[data-testid="trace-timeline"]');
  await waitUntil(
    'the timeline to draw',
    async () => {
      const ds = await timeline.evaluate((el) => ({ ...el.dataset }));
      return ds.pending === '0' && Number(ds.responses) > 0 ? ds : null;
    },
    WAIT_MS,
    50,
  );
  return key;
}

describe('device kinds in the Trace view', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-devkinds-e2e-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: { width: 1280, height: 900 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          for (const [run, { trace }] of Object.entries(RUNS)) {
            await mkdir(path.join(logdir, run), { recursive: true });
            const file = path.join(logdir, run, 'worker0.1.pt.trace.json');
            await writeFile(file, JSON.stringify(trace));
          }
          if (existsSync(MTIA_TRACE)) {
            await mkdir(path.join(logdir, 'mtia'), { recursive: true });
            await copyFile(MTIA_TRACE, path.join(logdir, 'mtia', 'worker0.1.pt.trace.json.gz'));
          }
        },
      });
    },
    { timeout: 600_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  for (const [run, { device }] of Object.entries(RUNS)) {
    test(`${run}: the stream track is "${device} stream ${STREAM}"`, async () => {
      const key = await openTrace(run);
      const tracks = await apiReady('tracks', key);
      const stream = tracks.tracks.find((t) => t.label === `${device} stream ${STREAM}`);
      assert.ok(stream, `no "${device} stream ${STREAM}" in ${tracks.tracks.map((t) => t.label)}`);
      assert.equal(stream.kind, 'gpu');
      // The browser shows that label for that track, and no track is called a GPU.
      const label = frame().locator(`[data-testid="trace-track-label"][data-track="${stream.id}"]`);
      await label.waitFor({ state: 'visible' });
      assert.match(await label.innerText(), new RegExp(`${device} stream ${STREAM}`));
      const shown = await frame().locator('[data-testid="trace-track-label"]').allInnerTexts();
      assert.ok(!shown.some((text) => /\bGPU \d/.test(text)), `a GPU label in ${shown}`);
      // Its process is named by its kind too, not by libkineto's default "GPU 0" label.
      const groups = await frame().locator('[data-testid="trace-group-label"]').allInnerTexts();
      assert.ok(
        groups.some((text) => text.includes(`${device} python (0)`)),
        `no "${device} python (0)" group in ${groups}`,
      );
      assert.ok(!groups.some((text) => /\bGPU \d/.test(text)), `a GPU group in ${groups}`);
      // The timeline drew the track's two kernels (the window the page fetched has them).
      const window = await apiReady('trace', { ...key, tracks: stream.id });
      const drawn = window.tracks.find((t) => t.id === stream.id);
      assert.equal(drawn.events.row.length, 2);
      // A kernel's one launcher is its runtime call (XPU's driver call shares its id).
      const kernel = await apiReady('event', { ...key, row: drawn.events.row[0] });
      const launchers = kernel.flows.filter((f) => f.relation === 'launcher').map((f) => f.name);
      assert.deepEqual(launchers, ['launch0']);
      await shoot(env.page, `${run}-trace`);
      h.assertNoErrors(env.errors);
    });
  }

  const OVERVIEWS = { mtia: 'MTIA', xpu: 'XPU' };
  for (const [run, word] of Object.entries(OVERVIEWS)) {
    test(`${run}: the Overview calls the device "${word}", never "GPU"`, async (t) => {
      if (run === 'mtia' && !existsSync(MTIA_TRACE)) return t.skip('no ../shared/corpus');
      const key = { run, worker: 'worker0', span: '1' };
      await waitUntil(
        `${run} to load`,
        async () => (await h.routeJson(env, 'status', key)).state === 'ready',
        300_000,
        250,
      );
      const ov = await apiReady('overview', key);
      assert.equal(ov.device_word, word);
      const hash =
        `#${PLUGIN}&p.${PLUGIN}.run=${run}&p.${PLUGIN}.worker=worker0` +
        `&p.${PLUGIN}.span=1&p.${PLUGIN}.view=overview`;
      if (env.page) await env.page.close();
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
      await env.page.goto(`${env.base}${hash}`, { timeout: WAIT_MS });
      const tiles = frame().locator('[data-testid="overview-summary"]');
      await tiles.waitFor({ state: 'visible', timeout: 300_000 });
      const idle = frame().locator('[data-testid="overview-gpu-idle"]');
      await waitUntil('the idle section to load', async () => {
        const state = await idle.getAttribute('data-state');
        return state && state !== 'loading' ? state : null;
      });
      const count = ov.devices.length;
      assert.match(
        await tiles.innerText(),
        new RegExp(`\\b${count} ${word}${count === 1 ? '' : 's'}\\b`),
      );
      const titles = await frame().locator('.ks-section-title').allInnerTexts();
      assert.ok(titles.includes(`${word} summary`), `no "${word} summary" in ${titles}`);
      assert.ok(titles.includes(`Why is the ${word} idle?`), `no idle title in ${titles}`);
      const cards = await frame().locator('[data-testid="overview-gpu"]').innerText();
      assert.match(cards, new RegExp(`${word} utilization`));
      // No label of the page calls the device a GPU: tiles, titles, cards, idle section,
      // recommendations (model names such as "Intel(R) Data Center GPU Max" aside).
      const idleText = await idle.innerText();
      const recs = await frame().locator('[data-testid="overview-recommendations"]').innerText();
      for (const text of [await tiles.innerText(), titles.join('\n'), cards, idleText, recs]) {
        const words = text.replace(/Data Center GPU Max \d+/g, '');
        assert.ok(!/\bGPUs?\b/.test(words), `"GPU" in: ${words.slice(0, 400)}`);
      }
      await shoot(env.page, `${run}-overview`);
      h.assertNoErrors(env.errors);
    });
  }
});
