// Real-browser test of a Perfetto protobuf trace: a real TensorBoard on a logdir holding a
// real H100 trace (tests/data/h100/attention) as run "json" and its protobuf form
// (written by tests/perfetto_writer.py, as libkineto_activities_<pid>.pb.gz) as run
// "protobuf"; Debian's chromium driven by playwright-core. The Trace view of the protobuf
// run draws the same tracks, with the same labels, as the JSON run's, and its canvas is
// not empty; the Overview shows the same step time. Run with `node --test tests/e2e/perfetto.mjs`.
// Screenshots (1280 px wide): test-output/e2e/perfetto/NN-<state>.png.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PYTHON, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e', 'perfetto');
const WAIT_MS = 60_000;
const SOURCE = path.join(REPO, 'tests', 'data', 'h100', 'attention');
const WORKER_JSON = 'gpu0';
const WORKER_PB = 'libkineto_activities_4242';
const shoot = h.screenshotter(OUT);
const env = h.newEnv();

const api = (route, params) => h.routeJson(env, route, params);
const frame = () => h.pluginFrame(env.page);

async function populate(logdir) {
  const json = path.join(logdir, 'json');
  const pb = path.join(logdir, 'protobuf');
  await mkdir(json, { recursive: true });
  await mkdir(pb, { recursive: true });
  const name = (await readdir(SOURCE)).find((n) => n.endsWith('.pt.trace.json.gz'));
  await copyFile(path.join(SOURCE, name), path.join(json, name));
  const written = spawnSync(
    PYTHON,
    [
      '-c',
      'import sys; sys.path.insert(0, sys.argv[1]); ' +
        'from perfetto_writer import write_perfetto_file; write_perfetto_file(*sys.argv[2:])',
      path.join(REPO, 'tests'),
      path.join(json, name),
      path.join(pb, `${WORKER_PB}.pb.gz`),
    ],
    { encoding: 'utf8' },
  );
  assert.equal(written.status, 0, written.stderr);
}

/** Opens a run's Trace view; the track labels drawn, in order. */
async function traceLabels(run, worker) {
  await env.page.goto(`${env.base}${h.stateHash({ run, worker, span: '1', view: 'trace' })}`, {
    timeout: WAIT_MS,
  });
  await frame()
    .locator(`[data-testid="trace"][data-ready="true"][data-run="${run}"]`)
    .waitFor({ state: 'visible', timeout: 300_000 });
  const labels = frame().locator('[data-testid="trace-track-label"]');
  await labels.first().waitFor({ state: 'visible', timeout: WAIT_MS });
  return labels.evaluateAll((els) => els.map((el) => el.textContent.trim()));
}

describe('a Perfetto protobuf trace in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-perfetto-e2e-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: { width: 1280, height: 900 },
        waitMs: WAIT_MS,
        populate,
      });
      env.page = await env.context.newPage();
    },
    { timeout: 600_000 },
  );
  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('its Trace view draws the JSON form’s tracks', { timeout: 600_000 }, async () => {
    const workers = await api('workers', { run: 'protobuf' });
    assert.deepEqual(
      workers.workers.map((w) => w.name ?? w),
      [WORKER_PB],
    );
    const tracksJson = await api('tracks', { run: 'json', worker: WORKER_JSON, span: '1' });
    const tracksPb = await api('tracks', { run: 'protobuf', worker: WORKER_PB, span: '1' });
    const shape = (t) => t.tracks.map((tr) => [tr.kind, tr.label]);
    assert.deepEqual(shape(tracksPb), shape(tracksJson));
    const fromJson = await traceLabels('json', WORKER_JSON);
    const fromPb = await traceLabels('protobuf', WORKER_PB);
    assert.ok(fromPb.length >= 3, `only ${fromPb.length} track labels`);
    assert.deepEqual(fromPb, fromJson);
    const colours = await h.canvasColourCount(frame().locator('[data-testid="trace-canvas"]'));
    assert.ok(colours > 20, `the canvas looks empty (${colours} colours)`);
    await shoot(env.page, 'protobuf-trace');
  });

  test('its Overview gives the JSON form’s step time', { timeout: 300_000 }, async () => {
    const a = await api('overview', { run: 'json', worker: WORKER_JSON, span: '1' });
    const b = await api('overview', { run: 'protobuf', worker: WORKER_PB, span: '1' });
    assert.deepEqual(b.average_breakdown_us, a.average_breakdown_us);
    await env.page.goto(
      `${env.base}${h.stateHash({ run: 'protobuf', worker: WORKER_PB, span: '1', view: 'overview' })}`,
      { timeout: WAIT_MS },
    );
    await frame().getByText('Step time breakdown', { exact: false }).first().waitFor({
      timeout: 120_000,
    });
    await shoot(env.page, 'protobuf-overview');
  });
});
