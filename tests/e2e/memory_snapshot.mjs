// Real-browser test of the Memory snapshot view (run-level): a real TensorBoard on a
// temporary logdir, Debian's chromium driven by playwright-core, the page checked against
// the plugin's own `memory_snapshot` route and against known answers.
//
// Logdir: "h100" (the real H100 trace and snapshot with an OOM, tests/data/h100/
// memory_snapshot), "built" (tests/snapshot_builders.py's known snapshot beside a small
// trace, and a cut pickle), "only_snapshot" (the known snapshot alone: a run without
// workers). Run with `node --test tests/e2e/memory_snapshot.mjs` after `npm run build`.
// Screenshots go to test-output/e2e/memory_snapshot/.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PLUGIN, PYTHON, REPO } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e', 'memory_snapshot');
const H100 = path.join(REPO, 'tests', 'data', 'h100', 'memory_snapshot');
const P = `p.${PLUGIN}.`;
const WAIT_MS = 90_000;

const env = h.newEnv({});
const shoot = h.screenshotter(OUT, { fullPage: true });

async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: await response.json() };
}

/** The route's answer, waiting while it answers 202. */
function apiSnapshots(run) {
  return h.waitUntil(
    `memory_snapshot of ${run}`,
    async () => {
      const { status, body } = await api('memory_snapshot', { run });
      if (status === 200) return body;
      if (status === 202) return null;
      throw new Error(`memory_snapshot answered ${status}: ${JSON.stringify(body)}`);
    },
    WAIT_MS,
    500,
  );
}

function frame() {
  return h.pluginFrame(env.page);
}

async function openSnapshots(run) {
  await env.page.goto(`${env.base}#${PLUGIN}&${P}run=${run}&${P}view=memory_snapshot`, {
    timeout: WAIT_MS,
  });
  await frame()
    .locator(`[data-testid="memory-snapshot"][data-ready="true"][data-run="${run}"]`)
    .waitFor({ state: 'visible', timeout: WAIT_MS });
}

/** data-* of every element matching `selector` inside the page. */
function readData(selector) {
  return frame()
    .locator(selector)
    .evaluateAll((els) => els.map((el) => ({ ...el.dataset, text: el.textContent })));
}

function writeKnownSnapshot(file) {
  const code = [
    'import sys',
    `sys.path.insert(0, ${JSON.stringify(path.join(REPO, 'tests'))})`,
    'from snapshot_builders import known_snapshot',
    'known_snapshot().write(__import__("pathlib").Path(sys.argv[1]))',
  ].join('\n');
  execFileSync(PYTHON, ['-c', code, file]);
}

describe('the Memory snapshot view in TensorBoard', { timeout: 600_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: OUT,
        tmpPrefix: 'kinetoscope-e2e-snapshot-',
        log: path.join(OUT, 'tensorboard.log'),
        viewport: { width: 1440, height: 1800 },
        waitMs: WAIT_MS,
        populate: async (logdir) => {
          const real = path.join(logdir, 'h100');
          await mkdir(real);
          for (const name of ['gpu0.1795404686336.pt.trace.json.gz', 'snapshot.pickle']) {
            await copyFile(path.join(H100, name), path.join(real, name));
          }
          const built = path.join(logdir, 'built');
          await mkdir(built);
          await copyFile(
            path.join(H100, 'gpu0.1795404686336.pt.trace.json.gz'),
            path.join(built, 'gpu0.1.pt.trace.json.gz'),
          );
          writeKnownSnapshot(path.join(built, 'known.pickle'));
          await writeFile(
            path.join(built, 'cut.pkl'),
            Buffer.from('\x80\x04\x95 segments', 'latin1'),
          );
          const only = path.join(logdir, 'only_snapshot');
          await mkdir(only);
          writeKnownSnapshot(path.join(only, 'oom.pickle'));
        },
      });
      env.page = await env.context.newPage();
      h.watchErrors(env.page, env.errors);
    },
    { timeout: 300_000 },
  );

  after(() => h.stopEnv(env), { timeout: 60_000 });

  test('the real H100 snapshot: numbers, stacks, OOM and alignment as the route says', async () => {
    const view = await apiSnapshots('h100');
    await openSnapshots('h100');
    const options = await frame()
      .locator('[data-testid="view-select"] option')
      .evaluateAll((els) => els.map((o) => o.value));
    assert.ok(options.includes('memory_snapshot'), String(options));
    const device = view.snapshots[0].devices[0];
    const stacks = await readData('[data-testid="snapshot-stacks-0"] li');
    assert.deepEqual(
      stacks.map((s) => Number(s.bytes)),
      device.top_stacks_at_peak.map((s) => s.bytes),
    );
    const nodes = await readData('[data-testid="snapshot-icicle-0"] .ks-snap-icicle-node');
    assert.deepEqual(
      nodes.map((n) => [n.name, Number(n.bytes), Number(n.depth)]),
      device.icicle.map((n) => [n.name, n.bytes, n.depth]),
    );
    const oom = await readData('[data-testid="snapshot-oom-0-0"] td[data-value]');
    assert.deepEqual(
      oom.map((c) => Number(c.value)),
      [device.ooms[0].requested_bytes, device.ooms[0].device_free],
    );
    assert.match(
      await frame().locator('[data-testid="snapshot-alignment"]').innerText(),
      /Aligned with gpu0's trace/,
    );
    // Each frame of a stack at the peak opens its file at its line in the editor (VS Code
    // by default): the links name frames of that stack, as the route gives them.
    const at = device.top_stacks_at_peak.findIndex((s) => s.frames.length > 0);
    const hrefs = await frame()
      .locator(`[data-testid="snapshot-stack-${at}"] [data-testid="snapshot-frame-link"]`)
      .evaluateAll((els) => els.map((a) => a.getAttribute('href')));
    const targets = device.top_stacks_at_peak[at].frames
      .filter((f) => f.filename && f.filename.startsWith('/'))
      .map((f) => `vscode://file${encodeURI(f.filename)}:${f.line ?? 1}`);
    assert.ok(hrefs.length > 0, `no editor link on stack ${at}`);
    for (const href of hrefs) assert.ok(targets.includes(href), `${href} not in ${targets}`);
    await frame().locator('[data-testid="snapshot-chart-0"] canvas').first().waitFor();
    await shoot(env.page, 'h100');
    h.assertNoErrors(env.errors);
  });

  test('a built snapshot shows its known answers; a cut file says why', async () => {
    await openSnapshots('built');
    const files = await readData('[data-testid="snapshot-file"]');
    assert.deepEqual(files.map((f) => f.file).sort(), ['cut.pkl', 'known.pickle']);
    assert.match(
      await frame().locator('[data-testid="snapshot-file-error"]').innerText(),
      /damaged or truncated/,
    );
    const stacks = await readData('[data-testid="snapshot-stacks-0"] li');
    assert.deepEqual(
      stacks.map((s) => Number(s.bytes)),
      [400, 300, 132],
    );
    assert.match(stacks[0].text, /alloc_c \(model\.py:10\) \[fx mm_1\]/);
    const nodes = await readData('[data-testid="snapshot-icicle-0"] .ks-snap-icicle-node');
    assert.deepEqual(
      nodes.map((n) => [n.name, Number(n.bytes)]),
      [
        ['train', 700],
        ['forward', 400],
        ['alloc_c', 400],
        ['alloc_d', 300],
        ['(no stack recorded)', 132],
      ],
    );
    assert.match(
      await frame().locator('[data-testid="snapshot-alignment"]').innerText(),
      /Not aligned with gpu0's trace/,
    );
    assert.match(await frame().locator('[data-testid="snapshot-peak-0"]').innerText(), /832 B/);
    assert.match(
      await frame().locator('[data-testid="snapshot-reserved-0"]').innerText(),
      /9\.00 KiB/,
    );
    assert.match(
      await frame().locator('[data-testid="snapshot-peak-1"]').innerText(),
      /no allocation history/,
    );
    await shoot(env.page, 'built');
    h.assertNoErrors(env.errors);
  });

  test('the Memory tab has a Snapshot part; the run-level page links to it', async () => {
    const view = await apiSnapshots('h100');
    await openSnapshots('h100');
    const link = frame().locator('[data-testid="snapshot-memory-link"]');
    assert.match(
      await link.getAttribute('href'),
      /view=memory&.*memory\.part=snapshot|memory\.part=snapshot.*view=memory/,
    );
    await link.click();
    const part = frame().locator('[data-testid="memory-part-snapshot"]');
    await part
      .locator('[data-testid="memory-snapshot"][data-ready="true"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await frame().locator('[data-testid="memory-part-trace"]').isHidden(), true);
    assert.match(await frame().locator('[data-testid="view-select"]').inputValue(), /^memory$/);
    assert.match(
      await frame().locator('[data-testid="memory-tab-snapshot"]').innerText(),
      /Snapshot \(1 file\)/,
    );
    const device = view.snapshots[0].devices[0];
    const stacks = await readData(
      '[data-testid="memory-part-snapshot"] [data-testid="snapshot-stacks-0"] li',
    );
    assert.deepEqual(
      stacks.map((s) => Number(s.bytes)),
      device.top_stacks_at_peak.map((s) => s.bytes),
    );
    await part.locator('[data-testid="snapshot-chart-0"] canvas').first().waitFor();
    assert.equal(await part.locator('[data-testid="snapshot-memory-link"]').count(), 0);
    await shoot(env.page, 'memory_tab_snapshot');
    // Back to the trace's own memory: its curve, and the part in the URL cleared.
    await frame().locator('[data-testid="memory-tab-trace"]').click();
    await frame()
      .locator('[data-testid="memory-part-trace"] [data-testid="memory"]')
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await part.isHidden(), true);
    assert.doesNotMatch(env.page.url(), /memory\.part=/);
    // The part is kept in the URL: a reload opens the Snapshot part again.
    await frame().locator('[data-testid="memory-tab-snapshot"]').click();
    assert.match(env.page.url(), /memory\.part=snapshot/);
    await env.page.reload({ timeout: WAIT_MS });
    await frame()
      .locator(
        '[data-testid="memory-part-snapshot"] [data-testid="memory-snapshot"][data-ready="true"]',
      )
      .waitFor({ state: 'visible', timeout: WAIT_MS });
    h.assertNoErrors(env.errors);
  });

  test('a run of snapshots only', async () => {
    await openSnapshots('only_snapshot');
    assert.equal(await frame().locator('[data-testid="snapshot-memory-link"]').count(), 0);
    assert.match(
      await frame().locator('[data-testid="snapshot-alignment"]').innerText(),
      /No trace in this run/,
    );
    await shoot(env.page, 'only_snapshot');
    h.assertNoErrors(env.errors);
  });
});
