// Real-browser test of trace health in the UI: a real TensorBoard on a logdir holding a
// copy of the corpus H100 BERT trace with five `"ts": 0` events added (errors) and the
// corpus MTIA inference trace (warnings only: overlapping slices, events outside the
// profiling window), Debian's chromium driven by playwright-core. The Overview's "Trace
// health" section is checked against the `health` route's JSON, an example's link opens
// the trace view at it, where the flagged events are outlined and the details panel names
// the check, and the side bar marks the opened worker. Skipped without
// ../shared/corpus. Run with `node --test tests/e2e/health.mjs`.
// Screenshots (1280 px wide): test-output/e2e/health/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';

import * as h from './harness.mjs';
import { CORPUS, PLUGIN, REPO, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
const SHOTS = path.join(OUT, 'health');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 60_000;
const H100_TRACE = path.join(
  CORPUS,
  'tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz',
);
const MTIA_TRACE = path.join(
  CORPUS,
  'hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz',
);
// A long worker name, as real ranks have: the side bar's mark must not be cut off at 1280 px.
const DAMAGED = {
  run: 'damaged',
  worker: 'rank-0.Jul_15_10_52_41.gpu-node-017.cluster',
  span: '1',
};
const MTIA = { run: 'mtia', worker: 'worker0', span: '1' };
const ZEROS = 5;
const shoot = h.screenshotter(SHOTS, { fullPage: true });
const env = h.newEnv();

const api = (route, params) => h.routeJson(env, route, params);
const frame = () => h.pluginFrame(env.page);

async function writeDamaged(logdir) {
  const doc = JSON.parse(gunzipSync(await readFile(H100_TRACE)).toString('utf8'));
  for (let i = 0; i < ZEROS; i += 1) {
    doc.traceEvents.push({
      ph: 'X',
      cat: 'cpu_op',
      name: `zero${i}`,
      pid: 1,
      tid: 1,
      ts: 0,
      dur: 0,
    });
  }
  const dir = path.join(logdir, DAMAGED.run);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `${DAMAGED.worker}.1.pt.trace.json`), JSON.stringify(doc));
}

/** Opens the Overview of a worker-span and waits for its health section to settle. */
async function openHealth(key) {
  await env.page.goto(`${env.base}${h.stateHash({ ...key, view: 'overview' })}`);
  const section = frame().locator('[data-testid="overview-health"]');
  await section.waitFor({ state: 'visible', timeout: WAIT_MS });
  await waitUntil('the health section to load', async () => {
    const state = await section.getAttribute('data-state');
    return state !== 'loading' ? state : null;
  });
  return section;
}

/** Each shown check's count, by id. */
async function shownCounts() {
  return frame()
    .locator('[data-testid^="health-check-"]')
    .evaluateAll((items) =>
      Object.fromEntries(
        items.map((el) => [
          el.dataset.testid.replace('health-check-', ''),
          Number(el.dataset.count),
        ]),
      ),
    );
}

function foundInRoute(view) {
  return Object.fromEntries(view.checks.filter((c) => c.count).map((c) => [c.id, c.count]));
}

describe('Trace health in TensorBoard', { timeout: 900_000, skip: !existsSync(H100_TRACE) }, () => {
  before(async () => {
    await h.startEnv(env, {
      shots: SHOTS,
      tmpPrefix: 'kinetoscope-e2e-health-',
      log: path.join(OUT, 'tensorboard-health.log'),
      viewport: { width: 1280, height: 1000 },
      waitMs: WAIT_MS,
      populate: async (logdir) => {
        await writeDamaged(logdir);
        await h.copyTrace(
          MTIA_TRACE,
          path.join(logdir, MTIA.run),
          `${MTIA.worker}.1.pt.trace.json.gz`,
        );
      },
    });
    env.page = await env.context.newPage();
    h.watchErrors(env.page, env.errors);
  });

  after(async () => {
    await h.stopEnv(env);
  });

  test('the health mark is asked for once the Overview has its answer, not beside it', async () => {
    // Asked beside it, the server computed both at once (the Overview's own checks make
    // the health answer): the first view came later. This is the page's first open.
    const seen = [];
    const route = (url) => /\/data\/plugin\/[^/]+\/(overview|health)\?/.exec(url)?.[1];
    const onRequest = (request) => {
      const name = route(request.url());
      if (name) seen.push(`ask ${name}`);
    };
    const onResponse = (response) => {
      const name = route(response.url());
      if (name) seen.push(`${response.status()} ${name}`);
    };
    env.page.on('request', onRequest);
    env.page.on('response', onResponse);
    try {
      await openHealth(DAMAGED);
    } finally {
      env.page.off('request', onRequest);
      env.page.off('response', onResponse);
    }
    const answered = seen.indexOf('200 overview');
    const asked = seen.indexOf('ask health');
    assert.ok(answered >= 0 && asked > answered, seen.join(', '));
  });

  test('a trace with errors: the section names them with the route’s counts', async () => {
    const route = await api('health', DAMAGED);
    assert.equal(route.status, 'errors');
    const section = await openHealth(DAMAGED);
    assert.equal(await section.getAttribute('data-state'), 'ready');
    assert.equal(await section.getAttribute('data-status'), 'errors');
    const shown = await shownCounts();
    assert.deepEqual(shown, foundInRoute(route));
    assert.equal(shown.zero_timestamps, ZEROS);
    const headline = await frame().locator('[data-testid="health-headline"]').textContent();
    assert.match(headline, /1 check with errors; 5 events left out/);
    await shoot(env.page, 'damaged-overview');
  });

  test('the side bar marks the opened worker and its run, the mark first', async () => {
    await openHealth(DAMAGED);
    const select = frame().locator('[data-testid="worker-select"]');
    const option = select.locator(`option[value="${DAMAGED.worker}"]`);
    await waitUntil('the worker mark', async () =>
      (await option.getAttribute('data-health')) === 'errors' ? true : null,
    );
    // The mark comes before the long name, so the closed select shows it at 1280 px; the
    // select's tooltip holds the whole text.
    const text = await option.textContent();
    assert.equal(text, `✕ ${DAMAGED.worker} (rank 0) · errors`);
    // A closed select does not overflow (its scrollWidth is its clientWidth): the chosen
    // option's text is measured in the select's own font against the select's width.
    const cut = await select.evaluate((el) => {
      const probe = document.createElement('span');
      probe.style.font = getComputedStyle(el).font;
      probe.style.whiteSpace = 'pre';
      probe.style.position = 'absolute';
      probe.textContent = el.options[el.selectedIndex].textContent;
      document.body.append(probe);
      const width = probe.getBoundingClientRect().width;
      probe.remove();
      return width > el.clientWidth;
    });
    assert.ok(cut, 'the name is longer than the side bar shows: the test would prove nothing');
    assert.equal(await select.getAttribute('title'), text);
    const run = frame().locator('[data-testid="run-select"] option[value="damaged"]');
    assert.equal(await run.getAttribute('data-health'), 'errors');
    assert.equal(await run.textContent(), '✕ damaged · errors');
    await shoot(env.page, 'damaged-side-bar-marks');
  });

  test('an example links into the trace view at its time', async () => {
    await openHealth(MTIA);
    const route = await api('health', MTIA);
    const overlap = route.checks.find((c) => c.id === 'overlapping_events');
    const link = frame()
      .locator('[data-testid="health-check-overlapping_events"] [data-testid="health-trace-link"]')
      .first();
    const href = await link.getAttribute('href');
    assert.match(href, /view=trace/);
    const t0 = Number(new URLSearchParams(href.split('#')[1].replaceAll(P, '')).get('t0'));
    assert.ok(t0 <= overlap.examples[0].ts_us, `${t0} after the example's start`);
    assert.equal(
      new URLSearchParams(href.split('#')[1].replaceAll(P, '')).get('sel'),
      String(overlap.examples[0].row),
    );
    await link.click();
    // The example is selected (its details open) and on screen: inside the window, its
    // lane's label in the visible part of the track list.
    const timeline = frame().locator('[data-testid="trace-timeline"]');
    await waitUntil(
      'the example selected',
      async () =>
        (await timeline.getAttribute('data-selected-row')) === String(overlap.examples[0].row),
    );
    await frame().locator('[data-testid="trace-details-health"]').waitFor({ timeout: WAIT_MS });
    const shown = await timeline.evaluate((el) => ({ ...el.dataset }));
    const example = overlap.examples[0];
    assert.ok(
      Number(shown.t0) <= example.ts_us &&
        example.ts_us + (example.dur_us ?? 0) <= Number(shown.t1),
      `${JSON.stringify(example)} outside ${shown.t0}..${shown.t1}`,
    );
    assert.ok(Number(shown.t1) - Number(shown.t0) >= 40, 'a window of at least 40 µs');
    const { track } = await api('event', { ...MTIA, row: example.row });
    const label = frame().locator(`[data-testid="trace-track-label"][data-track="${track}"]`);
    const box = await frame().locator('.ks-tl-scroll').boundingBox();
    const at = await label.boundingBox();
    assert.ok(at && at.y >= box.y - 1 && at.y < box.y + box.height, `lane ${track} off screen`);
    await shoot(env.page, 'mtia-trace-from-health');
  });

  test('flagged events are outlined in the trace view and named in its details', async () => {
    await openHealth(MTIA);
    const route = await api('health', MTIA);
    const example = route.checks.find((c) => c.id === 'overlapping_events').examples[0];
    await frame()
      .locator('[data-testid="health-check-overlapping_events"] [data-testid="health-trace-link"]')
      .first()
      .click();
    const timeline = frame().locator('[data-testid="trace-timeline"]');
    await timeline.waitFor({ state: 'visible', timeout: WAIT_MS });
    const ds = await waitUntil('the timeline to settle', async () => {
      const d = await timeline.evaluate((el) => ({ ...el.dataset }));
      return d.pending === '0' && Number(d.responses) > 0 ? d : null;
    });
    const [t0, t1, width] = [Number(ds.t0), Number(ds.t1), Number(ds.width)];
    // The `trace` route flags the example (bit 16) in the window the link opened.
    const win = await api('trace', { ...MTIA, t0, t1, width });
    let found = null;
    for (const track of win.tracks) {
      const ev = track.events;
      const i = ev ? ev.row.indexOf(example.row) : -1;
      if (i >= 0) found = { track: track.id, flags: ev.flags[i], depth: ev.depth[i], i, ev };
    }
    assert.ok(found, `row ${example.row} is not an exact event of the window`);
    assert.ok(found.flags & 16, `row ${example.row} has flags ${found.flags}, no health bit`);
    const flagged = win.tracks
      .flatMap((t) => (t.events ? t.events.flags : []))
      .filter((f) => f & 16);
    // Its lane may be below the fold (labels exist only near the view): scroll down until
    // its label exists, unfold its rows, and let the canvas redraw.
    const labelLocator = frame().locator(
      `[data-testid="trace-track-label"][data-track="${found.track}"]`,
    );
    const scroller = frame().locator('.ks-tl-scroll');
    for (let i = 0; i < 200 && (await labelLocator.count()) === 0; i += 1) {
      await scroller.evaluate((el) => {
        el.scrollTop += el.clientHeight / 2;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await labelLocator.scrollIntoViewIfNeeded();
    if (Number(await labelLocator.getAttribute('data-rows')) <= found.depth) {
      await labelLocator.locator('.ks-tl-fold').click();
    }
    await new Promise((resolve) => setTimeout(resolve, 800));
    // The canvas draws the mark: pixels of the flagged red (#d50000) are on it.
    const red = await frame()
      .locator('[data-testid="trace-canvas"]')
      .evaluate((c) => {
        const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < data.length; i += 4) {
          if (data[i] > 190 && data[i + 1] < 40 && data[i + 2] < 40) n += 1;
        }
        return n;
      });
    assert.ok(red > 20, `${red} red pixels for ${flagged.length} flagged events`);
    // Clicking the example opens its details, which name the check.
    const box = await frame().locator('[data-testid="trace-canvas"]').boundingBox();
    const label = await labelLocator.boundingBox();
    const start = found.ev.start[found.i];
    const mid =
      Math.max(start, t0) + (Math.min(start + found.ev.dur[found.i], t1) - Math.max(start, t0)) / 2;
    await env.page.mouse.click(
      box.x + ((mid - t0) / (t1 - t0)) * width,
      label.y + 3 + found.depth * 18 + 9,
    );
    const badge = frame().locator('[data-testid="trace-details-health"]');
    await badge.waitFor({ state: 'visible', timeout: WAIT_MS });
    const details = await api('event', { ...MTIA, row: example.row });
    assert.ok(details.health.includes('overlapping_events'));
    assert.equal(await badge.textContent(), `flagged: ${details.health.join(', ')}`);
    await shoot(env.page, 'mtia-trace-flagged');
  });

  test('a trace with warnings only', async () => {
    const route = await api('health', MTIA);
    assert.equal(route.status, 'warnings');
    const section = await openHealth(MTIA);
    assert.equal(await section.getAttribute('data-status'), 'warnings');
    assert.deepEqual(await shownCounts(), foundInRoute(route));
    await shoot(env.page, 'mtia-overview');
    h.assertNoErrors(env.errors);
  });
});
