// Real-browser test of the Operator and Kernel views: a real TensorBoard on a temporary
// logdir (the CPU sample, plus the old plugin's resnet50 V100 sample when ../shared/corpus
// exists), Debian's chromium driven by playwright-core, the plugin's iframe checked against
// the plugin's own HTTP API. Run with `npm run e2e` (builds the frontend first).
//
// Same conventions as run.mjs: <repo>/.venv with kinetoscope installed editable and torch;
// chromium from CHROMIUM_PATH or PATH (never downloaded); fresh profile; TensorBoard's
// process group killed at the end; any console error, page error (iframes included) or
// 4xx/5xx of a plugin route fails. Screenshots: test-output/e2e/ops_kernels/NN-<state>.png.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { CORPUS, IFRAME, PLUGIN, REPO, copyGlob, freePort, sleep, waitUntil } from './harness.mjs';

const OUT = path.join(REPO, 'test-output', 'e2e');
// Own folder: run.mjs clears the *.png files of OUT when it starts.
const SHOTS = path.join(OUT, 'ops_kernels');
const P = `p.${PLUGIN}.`;
const VIEWPORT = { width: 1440, height: 1800 };
const WAIT_MS = 60_000;
const shoot = h.screenshotter(SHOTS, { fullPage: true });

// ----- shared state ----------------------------------------------------------------

const env = h.newEnv({
  webview: null,
  haveSample: false,
  haveCorpus: false,
  requests: [],
});

/** A plugin route from the API, waiting while the worker loads (202). */
async function api(route, params = {}) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return waitUntil(`${route} ${JSON.stringify(params)} from the API`, async () => {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    const body = await response.json();
    if (response.status === 200) return body;
    if (response.status === 202) return null;
    throw new Error(`${route} answered ${response.status}: ${JSON.stringify(body)}`);
  });
}

function frame() {
  return h.pluginFrame(env.page);
}

async function screenshot(name) {
  return shoot(env.page, name);
}

function watchErrors(page) {
  h.watchErrors(page, env.errors);
  page.on('request', (request) => {
    const url = new URL(request.url());
    const prefix = `/data/plugin/${PLUGIN}/`;
    if (url.pathname.startsWith(prefix)) {
      env.requests.push({
        route: url.pathname.slice(prefix.length),
        params: Object.fromEntries(url.searchParams),
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
  watchErrors(env.page);
  return env.page;
}

function hashFor(state) {
  const items = [PLUGIN];
  for (const [k, v] of Object.entries(state)) {
    items.push(`${encodeURIComponent(P + k)}=${encodeURIComponent(v)}`);
  }
  return `#${items.join('&')}`;
}

/** Opens TensorBoard with the plugin's state in the hash. */
async function openState(state) {
  await env.page.goto(`${env.base}${hashFor(state)}`, { timeout: WAIT_MS });
}

async function waitView(testid, key = {}, root = frame()) {
  let selector = `[data-testid="${testid}"][data-ready="true"][data-busy="false"]`;
  for (const [k, v] of Object.entries(key)) selector += `[data-${k}="${v}"]`;
  await root.locator(selector).waitFor({ state: 'visible', timeout: WAIT_MS });
}

async function choose(testid, value) {
  await frame().locator(`[data-testid="${testid}"]`).selectOption(value, { timeout: WAIT_MS });
}

/** The table rows in view: each row's attributes and its cells' data-value by column. */
async function tableRows(testid, limit = 12) {
  return frame()
    .locator(`[data-testid="${testid}"]`)
    .evaluate(async (table, max) => {
      const tick = () => new Promise((r) => requestAnimationFrame(() => r()));
      await tick();
      await tick();
      const rows = [];
      for (const row of table.querySelectorAll('.ks-twindow [role="row"]')) {
        const cells = {};
        for (const cell of row.querySelectorAll('[data-col]')) {
          cells[cell.dataset.col] = cell.dataset.value;
        }
        rows.push({ attrs: { ...row.dataset }, cells });
        if (rows.length >= max) break;
      }
      return rows;
    }, limit);
}

async function rowCount(testid) {
  const text = await frame().locator(`[data-testid="${testid}"]`).getAttribute('data-rows');
  return Number(text);
}

function hashState() {
  const hash = new URL(env.page.url()).hash.slice(1);
  const out = {};
  for (const item of hash.split('&')) {
    const [k, v] = item.split('=');
    if (v !== undefined && decodeURIComponent(k).startsWith(P)) {
      out[decodeURIComponent(k).slice(P.length)] = decodeURIComponent(v);
    }
  }
  return out;
}

/** Waits for a request of `route` whose params include `want`, made after `from`. */
async function waitRequest(route, want, from) {
  return waitUntil(`a ${route} request with ${JSON.stringify(want)}`, () =>
    env.requests
      .slice(from)
      .find((r) => r.route === route && Object.entries(want).every(([k, v]) => r.params[k] === v)),
  );
}

/** Clicks an export button and returns the downloaded file's name and text. */
async function download(testid) {
  const [dl] = await Promise.all([
    env.page.waitForEvent('download', { timeout: WAIT_MS }),
    frame().locator(`[data-testid="${testid}"]`).click(),
  ]);
  const file = path.join(env.tmp, `dl-${Date.now()}-${dl.suggestedFilename()}`);
  await dl.saveAs(file);
  return { name: dl.suggestedFilename(), text: await readFile(file, 'utf8') };
}

/** Lines of a CSV text (quoted fields never hold line breaks here). */
function csvLines(text) {
  assert.ok(text.endsWith('\r\n'), 'CSV ends with CRLF');
  return text.slice(0, -2).split('\r\n');
}

async function setTensorBoardTheme(label) {
  await h.setTensorBoardTheme(env.page, label);
}

/** The name a top-N pie shows first: the largest value, ties by name (as topn.ts). */
function topName(rows, key) {
  const sums = new Map();
  for (const r of rows) if (r[key] > 0) sums.set(r.name, (sums.get(r.name) ?? 0) + r[key]);
  return [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? '';
}

function assertOpRowsMatch(shown, rows, device) {
  assert.ok(shown.length > 0, 'the table shows rows');
  const keys = ['calls', 'host_self_us', 'host_total_us'];
  if (device) keys.push('device_self_us', 'device_total_us');
  shown.forEach((row, i) => {
    const want = rows[i];
    assert.equal(row.cells.name, want.name, `row ${i} name`);
    for (const k of keys) assert.equal(Number(row.cells[k]), want[k], `${want.name} ${k}`);
    assert.equal(row.cells.tensor_core_eligible, String(want.tensor_core_eligible));
    assert.equal(row.cells.call_stack, String(want.has_call_stack));
  });
}

// ----- the suite -------------------------------------------------------------------

describe('Operator and Kernel views in TensorBoard', { timeout: 900_000 }, () => {
  before(
    async () => {
      await h.startEnv(env, {
        shots: SHOTS,
        tmpPrefix: 'kinetoscope-e2e-ops-',
        log: path.join(OUT, 'tensorboard-ops_kernels.log'),
        viewport: VIEWPORT,
        waitMs: WAIT_MS,
        acceptDownloads: true,
        args: ['--headless', ...h.BROWSER_ARGS],
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
            await copyGlob(resnet, '.gz', path.join(logdir, 'resnet50_gpu'));
            env.haveCorpus = true;
          }
          assert.ok(
            env.haveSample || env.haveCorpus,
            'neither samples/train_cpu.py nor the corpus',
          );
        },
      });
      await env.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
        origin: env.base.replace(/\/$/, ''),
      });
      await newPage();
    },
    { timeout: 600_000 },
  );

  afterEach((t) => h.noteOutcome(env, t));
  after(
    async () => {
      try {
        env.webview?.close();
      } finally {
        await h.stopEnv(env);
      }
    },
    { timeout: 60_000 },
  );

  test(
    'CPU run: the Operator page shows the API rows, sorts, says why there is no Kernel view',
    { timeout: 240_000 },
    async (t) => {
      if (!env.haveSample) return t.skip('no samples/train_cpu.py');
      const key = { run: 'cnn', worker: 'worker0', span: '1' };
      // The status reported as loading for the first polls: no view route may be called.
      let faked = 0;
      const early = [];
      env.page.on('request', (request) => {
        const route = new URL(request.url()).pathname.split('/').pop();
        if (faked < 4 && ['operators', 'callstacks', 'kernels'].includes(route)) {
          early.push(request.url());
        }
      });
      await env.page.route(`**/data/plugin/${PLUGIN}/status?*`, async (route) => {
        const response = await route.fetch();
        const body = await response.json();
        if (faked < 4) {
          faked += 1;
          await route.fulfill({ response, json: { ...body, state: 'loading', views: [] } });
          return;
        }
        await route.fulfill({ response, json: body });
      });
      await openState({ ...key, view: 'operators' });
      await waitView('operators', { run: 'cnn', span: '1', 'group-by': 'name' });
      assert.ok(faked >= 4, 'status was polled while loading');
      assert.deepEqual(early, [], 'a view route was called before status said ready');
      await env.page.unrouteAll({ behavior: 'ignoreErrors' });

      const ops = await api('operators', { ...key, group_by: 'name' });
      assert.equal(
        ops.kernel_view_absent_reason,
        'this trace has no GPU kernels (CPU-only profile)',
      );
      // The table holds the API's rows, in its order, with its numbers.
      assertOpRowsMatch(await tableRows('op-table'), ops.rows, false);
      assert.equal(await rowCount('op-count'), ops.rows.length);
      // Why there is no Kernel view; the View list has none.
      const note = frame().locator('[data-testid="no-kernel-view"]');
      assert.match(
        await note.innerText(),
        new RegExp(ops.kernel_view_absent_reason.replace(/[()]/g, '\\$&')),
      );
      const views = await frame()
        .locator('[data-testid="view-select"] option')
        .evaluateAll((options) => options.map((o) => o.value));
      assert.ok(views.includes('operators') && !views.includes('kernels'), `views: ${views}`);
      // No device columns for a CPU-only trace.
      assert.equal(
        await frame()
          .getByRole('columnheader', { name: /^Device self/ })
          .count(),
        0,
      );
      // The host pie shows the top operator by host self time.
      const pie = frame().locator('[data-testid="op-host-pie"]');
      assert.equal(await pie.getAttribute('data-top'), topName(ops.rows, 'host_self_us'));
      assert.equal(await frame().locator('[data-testid="op-device-pie"]').count(), 0);
      await screenshot('operators-cnn-light');

      // Sorting by calls: descending, then ascending; kept in the URL.
      const byCalls = ops.rows.slice().sort((a, b) => a.calls - b.calls);
      const header = frame().getByRole('columnheader', { name: 'Calls' });
      await header.click();
      let first = (await tableRows('op-table', 1))[0];
      assert.equal(Number(first.cells.calls), byCalls.at(-1).calls);
      await header.click();
      first = (await tableRows('op-table', 1))[0];
      assert.equal(Number(first.cells.calls), byCalls[0].calls);
      assert.equal(hashState()['operators.sort'], 'calls:asc');

      // Search filters rows (all terms must match).
      await frame().locator('[data-testid="op-search"]').fill('aten conv');
      const want = ops.rows.filter((r) => /aten/i.test(r.name) && /conv/i.test(r.name));
      await waitUntil(
        'the search to filter',
        async () => (await rowCount('op-count')) === want.length,
      );
      assert.ok(want.length > 0 && want.length < ops.rows.length);
      assert.equal(hashState()['operators.search'], 'aten conv');
      await frame().locator('[data-testid="op-search"]').fill('');
      await waitUntil(
        'the search to clear',
        async () => (await rowCount('op-count')) === ops.rows.length,
      );
      assertNoErrors();
    },
  );

  test(
    'CPU run: grouping by shape, CSV export, a call stack with path:line, a link reopens it',
    { timeout: 240_000 },
    async (t) => {
      if (!env.haveSample) return t.skip('no samples/train_cpu.py');
      const key = { run: 'cnn', worker: 'worker0', span: '1' };
      const byName = await api('operators', { ...key, group_by: 'name' });
      const byShape = await api('operators', { ...key, group_by: 'shape' });
      assert.notEqual(byShape.rows.length, byName.rows.length);

      const from = env.requests.length;
      await choose('op-group-by', 'shape');
      await waitRequest('operators', { ...key, group_by: 'shape' }, from);
      await waitView('operators', { 'group-by': 'shape' });
      assert.equal(await rowCount('op-count'), byShape.rows.length);
      assert.equal(hashState()['operators.group_by'], 'shape');
      // Sorted by calls ascending (kept from the previous test through the URL).
      const shown = await tableRows('op-table', 5);
      assert.ok(
        shown.every((r) => 'input_shape' in r.cells),
        'an input shape column',
      );
      const sorted = byShape.rows.slice().sort((a, b) => a.calls - b.calls);
      assert.equal(Number(shown[0].cells.calls), sorted[0].calls);

      // CSV of the table as shown: grouping, search and sort applied.
      await frame().locator('[data-testid="op-search"]').fill('convolution');
      const filtered = byShape.rows.filter((r) => /convolution/i.test(r.name));
      await waitUntil('the search', async () => (await rowCount('op-count')) === filtered.length);
      const csv = await download('op-export-csv');
      assert.match(csv.name, /^operators-cnn-worker0-1-shape\.csv$/);
      const lines = csvLines(csv.text);
      assert.equal(
        lines[0],
        'Name,Input Shape,Calls,Host Self Duration (us),Host Self Avg (us),Host Total Duration (us),Host Total Avg (us),Tensor Cores Eligible,Has Call Stack',
      );
      assert.equal(lines.length, filtered.length + 1, 'one line per shown row');
      const minCalls = Math.min(...filtered.map((r) => r.calls));
      assert.equal(Number(lines[1].split(',').at(-7)), minCalls, 'sorted by calls, ascending');

      // The call stacks of a shape row (python_function stacks of with_stack=True).
      const row = filtered.find((r) => r.has_call_stack);
      assert.ok(row, 'a convolution row with a call stack');
      const shapeJson = JSON.stringify(row.input_shape);
      const tableRow = frame().locator(
        `[data-testid="op-table"] [data-op="${row.name}"][data-shape='${shapeJson}']`,
      );
      const before = env.requests.length;
      await tableRow.locator('[data-testid="op-stack-button"]').click();
      const panel = frame().locator('[data-testid="callstack-panel"][data-state="ready"]');
      await panel.waitFor({ state: 'visible' });
      await waitRequest('callstacks', { name: row.name, input_shape: shapeJson }, before);
      const stacks = await api('callstacks', { ...key, name: row.name, input_shape: shapeJson });
      assert.equal(stacks.source, 'python_function');
      assert.equal(await panel.locator('[data-testid="callstack"]').count(), stacks.stacks.length);
      const frameWithFile = stacks.stacks[0].frames.find((f) => f.file && f.line);
      const location = `${frameWithFile.file}:${frameWithFile.line}`;
      const item = panel
        .locator(`[data-testid="stack-frame"][data-location="${location}"]`)
        .first();
      assert.equal(await item.locator('[data-testid="frame-location"]').innerText(), location);
      // Outside VS Code: no "open" link, a copy button that copies path:line.
      assert.equal(await panel.locator('[data-testid="frame-open"]').count(), 0);
      await item.locator('[data-testid="frame-copy"]').click();
      await waitUntil(
        'the copy button to report',
        async () =>
          (await item.locator('[data-testid="frame-copy"]').getAttribute('data-copied')) === 'true',
      );
      const copied = await frame()
        .locator('body')
        .evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, location);
      assert.equal(hashState()['operators.stack'], row.name);
      assert.equal(hashState()['operators.stack_shape'], JSON.stringify(row.input_shape));
      await screenshot('operators-cnn-shape-callstack-light');

      // A link with this state reopens it: grouping, search, sort and the call stack.
      const url = env.page.url();
      await newPage();
      await env.page.goto(url, { timeout: WAIT_MS });
      await waitView('operators', { 'group-by': 'shape' });
      await frame()
        .locator(`[data-testid="callstack-panel"][data-state="ready"][data-op="${row.name}"]`)
        .waitFor({ state: 'visible' });
      assert.equal(await frame().locator('[data-testid="op-group-by"]').inputValue(), 'shape');
      assert.equal(await frame().locator('[data-testid="op-search"]').inputValue(), 'convolution');
      assert.equal(await rowCount('op-count'), filtered.length);
      assert.equal(
        await frame()
          .locator('[data-testid="op-table"] [data-selected="true"]')
          .getAttribute('data-op'),
        row.name,
      );
      assert.equal(
        await frame().getByRole('columnheader', { name: /Calls/ }).getAttribute('aria-sort'),
        'ascending',
      );
      // Back to name grouping: the request changes and the call stack closes.
      const from2 = env.requests.length;
      await choose('op-group-by', 'name');
      await waitRequest('operators', { ...key, group_by: 'name' }, from2);
      await waitView('operators', { 'group-by': 'name' });
      assert.equal(
        await rowCount('op-count'),
        byName.rows.filter((r) => /convolution/i.test(r.name)).length,
      );
      assert.equal(
        await frame().locator('[data-testid="callstack-panel"]').getAttribute('data-state'),
        'closed',
      );
      assert.equal(hashState()['operators.stack'], undefined);
      assert.equal(hashState()['operators.group_by'], undefined, 'the default is left out');
      assertNoErrors();
    },
  );

  test(
    'GPU run: Operator device times, a Call stack arg frame, VS Code navigation',
    { timeout: 300_000 },
    async (t) => {
      if (!env.haveCorpus) return t.skip('no ../shared/corpus');
      await newPage();
      const key = { run: 'resnet50_gpu', worker: 'worker0', span: '1' };
      await openState({ ...key, view: 'operators' });
      await waitView('operators', { run: 'resnet50_gpu' });
      const ops = await api('operators', { ...key, group_by: 'name' });
      assert.equal(ops.kernel_view_absent_reason, null);
      assertOpRowsMatch(await tableRows('op-table'), ops.rows, true);
      assert.equal(await frame().locator('[data-testid="no-kernel-view"]').count(), 0);
      const devicePie = frame().locator('[data-testid="op-device-pie"]');
      assert.equal(await devicePie.getAttribute('data-top'), topName(ops.rows, 'device_self_us'));
      // The device pie's selector switches to device total time.
      await choose('op-device-pie-metric', 'device_total_us');
      const byTotal = topName(ops.rows, 'device_total_us');
      await waitUntil(
        'the device pie to switch',
        async () => (await devicePie.getAttribute('data-top')) === byTotal,
      );
      assert.equal(hashState()['operators.device_pie'], 'device_total_us');

      // A Call stack arg (2021 trace): the first frame of the first stack.
      const row = ops.rows.find((r) => r.has_call_stack);
      await frame()
        .locator(`[data-testid="op-table"] [data-op="${row.name}"] [data-testid="op-stack-button"]`)
        .click();
      const panel = frame().locator('[data-testid="callstack-panel"][data-state="ready"]');
      await panel.waitFor({ state: 'visible' });
      const stacks = await api('callstacks', { ...key, name: row.name });
      assert.equal(stacks.source, 'call_stack_arg');
      const top = stacks.stacks[0].frames[0];
      const location = `${top.file}:${top.line}`;
      assert.equal(
        await panel
          .locator('[data-testid="callstack"]')
          .first()
          .locator('[data-testid="frame-location"]')
          .first()
          .innerText(),
        location,
      );
      await screenshot('operators-resnet50-callstack-light');

      // Inside VS Code: TensorBoard framed by a webview page that listens for messages as
      // VS Code's does (tensorBoardSession.ts: sender origin must be TensorBoard's, data
      // must have filename and line). The stand-in is served from another port of
      // 127.0.0.1 (cross-origin, same site, like VS Code's own framing as far as storage
      // goes); p.kinetoscope.editor=vscode stands in for its vscode-webview:// origin.
      const hash = hashFor({
        ...key,
        view: 'operators',
        editor: 'vscode',
        'operators.stack': row.name,
      });
      const tbUrl = `${env.base}${hash}`;
      const html = `<!doctype html><html><body style="margin:0">
<script>
  window.received = [];
  window.addEventListener('message', (event) => {
    if (!${JSON.stringify(env.base)}.startsWith(event.origin) || !event.data || !event.data.filename || !event.data.line) return;
    window.received.push({ filename: event.data.filename, line: event.data.line });
  });
</script>
<iframe id="tb" src=${JSON.stringify(tbUrl)} style="border:0;width:1400px;height:1700px"></iframe>
</body></html>`;
      env.webview = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html);
      });
      const webviewPort = await freePort();
      await new Promise((resolve) => env.webview.listen(webviewPort, '127.0.0.1', resolve));
      await env.page.goto(`http://127.0.0.1:${webviewPort}/webview.html`, { timeout: WAIT_MS });
      const inner = env.page.frameLocator('#tb').frameLocator(IFRAME);
      await waitView('operators', { editor: 'vscode' }, inner);
      const vsPanel = inner.locator('[data-testid="callstack-panel"][data-state="ready"]');
      await vsPanel.waitFor({ state: 'visible' });
      const open = vsPanel
        .locator('[data-testid="callstack"]')
        .first()
        .locator('[data-testid="frame-open"]')
        .first();
      assert.equal(await open.innerText(), location);
      await open.click();
      const received = await waitUntil('the webview page to get the message', async () => {
        const got = await env.page.evaluate(() => window.received);
        return got.length ? got : null;
      });
      // VS Code selects new Position(line, 0): 0-based, so the 1-based line minus one.
      assert.deepEqual(received, [{ filename: top.file, line: top.line - 1 }]);
      await screenshot('operators-in-vscode-webview-light');
      await new Promise((resolve) => env.webview.close(resolve));
      env.webview = null;
      assertNoErrors();
    },
  );

  test(
    'GPU run: the Kernel page shows the API rows; grouping, filters, sort, CSV, anchor',
    { timeout: 300_000 },
    async (t) => {
      if (!env.haveCorpus) return t.skip('no ../shared/corpus');
      await newPage();
      const key = { run: 'resnet50_gpu', worker: 'worker0', span: '1' };
      // The Overview's tensor-core recommendation links to the anchor.
      await openState({ ...key, view: 'overview' });
      await frame()
        .locator('[data-testid="overview"][data-ready="true"]')
        .waitFor({ state: 'visible', timeout: WAIT_MS });
      const overview = await api('overview', key);
      const rec = overview.recommendations.find((r) => r.link?.view === 'kernels');
      if (rec) {
        await frame().locator(`[data-testid="recommendation-link-${rec.id}"]`).click();
        await waitView('kernels');
        await frame()
          .locator(`[data-anchor="${rec.link.anchor}"].ks-flash`)
          .waitFor({ state: 'visible', timeout: 10_000 });
      } else {
        await choose('view-select', 'kernels');
        await waitView('kernels');
      }
      assert.equal(await frame().locator('[data-anchor="tensor-cores"]').count(), 1);

      const kernels = await api('kernels', { ...key, group_by: 'name' });
      const shown = await tableRows('kernel-table');
      assert.ok(shown.length > 0);
      shown.forEach((r, i) => {
        const want = kernels.rows[i];
        assert.equal(r.cells.name, want.name, `row ${i}`);
        for (const k of ['calls', 'total_us', 'mean_us', 'min_us', 'max_us']) {
          assert.equal(Number(r.cells[k]), want[k], `${k} of row ${i}`);
        }
        assert.equal(
          r.cells.blocks_per_sm,
          want.blocks_per_sm === null ? '' : String(want.blocks_per_sm),
        );
        assert.equal(
          r.cells.occupancy_pct,
          want.occupancy_pct === null ? '' : String(want.occupancy_pct),
        );
        assert.equal(r.cells.registers_per_thread, String(want.registers_per_thread ?? ''));
        assert.equal(r.cells.grid, want.grid ? JSON.stringify(want.grid) : '');
        // null (the taxonomy cannot tell) is shown as Unknown, with an empty data value.
        assert.equal(
          r.cells.tensor_cores_used,
          want.tensor_cores_used === null ? '' : String(want.tensor_cores_used),
        );
        assert.equal(r.cells.op_tensor_core_eligible, String(want.op_tensor_core_eligible));
      });
      assert.equal(await rowCount('kernel-count'), kernels.rows.length);
      const tc = frame().locator('[data-testid="kernel-tc-pie"]');
      const slices = kernels.tensor_core_unknown_time_us > 0 ? '3' : '2';
      assert.equal(await tc.getAttribute('data-slices'), kernels.total_us > 0 ? slices : '0');
      assert.equal(
        await frame().locator('[data-testid="kernel-top-pie"]').getAttribute('data-top'),
        topName(kernels.rows, 'total_us'),
      );
      await screenshot('kernels-resnet50-light');

      // Sorting by mean duration.
      await frame().getByRole('columnheader', { name: 'Mean', exact: true }).click();
      const maxMean = Math.max(...kernels.rows.map((r) => r.mean_us));
      assert.equal(Number((await tableRows('kernel-table', 1))[0].cells.mean_us), maxMean);
      assert.equal(hashState()['kernels.sort'], 'mean_us:desc');

      // Grouping by kernel + op: the request says so and the rows change.
      let from = env.requests.length;
      await choose('kernel-group-by', 'op');
      await waitRequest('kernels', { group_by: 'op' }, from);
      await waitView('kernels', { 'group-by': 'op' });
      const byOp = await api('kernels', { ...key, group_by: 'op' });
      assert.notEqual(byOp.rows.length, kernels.rows.length);
      assert.equal(await rowCount('kernel-count'), byOp.rows.length);
      assert.ok((await tableRows('kernel-table', 3)).every((r) => 'op_name' in r.cells));

      // Device and stream filters are route parameters.
      from = env.requests.length;
      await choose('kernel-stream', String(kernels.streams[0]));
      await waitRequest('kernels', { group_by: 'op', stream: String(kernels.streams[0]) }, from);
      await waitView('kernels');
      from = env.requests.length;
      await choose('kernel-device', String(kernels.devices[0]));
      await waitRequest(
        'kernels',
        { group_by: 'op', device: String(kernels.devices[0]), stream: String(kernels.streams[0]) },
        from,
      );
      await waitView('kernels');
      const filteredApi = await api('kernels', {
        ...key,
        group_by: 'op',
        device: String(kernels.devices[0]),
        stream: String(kernels.streams[0]),
      });
      assert.equal(await rowCount('kernel-count'), filteredApi.rows.length);
      const state = hashState();
      assert.equal(state['kernels.device'], String(kernels.devices[0]));
      assert.equal(state['kernels.stream'], String(kernels.streams[0]));

      // Search and CSV of what is shown.
      await frame().locator('[data-testid="kernel-search"]').fill('cudnn');
      const wantRows = filteredApi.rows.filter(
        (r) => /cudnn/i.test(r.name) || /cudnn/i.test(r.op_name ?? ''),
      );
      await waitUntil(
        'the kernel search',
        async () => (await rowCount('kernel-count')) === wantRows.length,
      );
      const csv = await download('kernel-export-csv');
      const lines = csvLines(csv.text);
      assert.ok(
        lines[0].startsWith('Name,Operator,Device,Stream,Calls,Total Duration (us)'),
        lines[0],
      );
      assert.equal(lines.length, wantRows.length + 1);
      assert.match(csv.name, /^kernels-resnet50_gpu-worker0-1-op-gpu\d+-stream\d+\.csv$/);
      await screenshot('kernels-resnet50-op-filtered-light');
      assertNoErrors();
    },
  );

  test('dark theme: both pages', { timeout: 240_000 }, async () => {
    await newPage();
    const gpu = env.haveCorpus;
    const key = gpu
      ? { run: 'resnet50_gpu', worker: 'worker0', span: '1' }
      : { run: 'cnn', worker: 'worker0', span: '1' };
    await openState({ ...key, view: 'operators' });
    await waitView('operators');
    await setTensorBoardTheme('Dark');
    const ops = await api('operators', { ...key, group_by: 'name' });
    const row = ops.rows.find((r) => r.has_call_stack);
    if (row) {
      await frame()
        .locator(`[data-testid="op-table"] [data-op="${row.name}"] [data-testid="op-stack-button"]`)
        .first()
        .click();
      await frame()
        .locator('[data-testid="callstack-panel"][data-state="ready"]')
        .waitFor({ state: 'visible' });
    }
    await sleep(500); // charts re-render after the theme change
    await screenshot(`operators-${key.run}-dark`);
    if (gpu) {
      await choose('view-select', 'kernels');
      await waitView('kernels');
      await sleep(500);
      await screenshot('kernels-resnet50-dark');
    }
    await setTensorBoardTheme('Light');
    assertNoErrors();
  });
});
