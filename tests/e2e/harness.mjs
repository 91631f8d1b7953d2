// Shared machinery of the real-browser tests (run.mjs, memory.mjs, distributed.mjs,
// ops_kernels.mjs, trace.mjs, modules.mjs): a real TensorBoard on a temporary logdir, Debian's chromium
// driven by playwright-core, browser errors collected across the plugin's iframe.
//
// Needs: <repo>/.venv with kinetoscope installed editable (pip install -e .) and torch;
// a chromium binary (CHROMIUM_PATH, else chromium / chromium-browser / google-chrome on
// PATH). ../shared/corpus next to the repo is used when present.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CORPUS = path.resolve(REPO, '..', 'shared', 'corpus');
export const VENV_BIN = path.join(REPO, '.venv', 'bin');
export const PYTHON = process.env.KINETOSCOPE_PYTHON ?? path.join(VENV_BIN, 'python');
export const TENSORBOARD =
  process.env.KINETOSCOPE_TENSORBOARD ?? path.join(VENV_BIN, 'tensorboard');
export const PLUGIN = 'kinetoscope';
export const IFRAME = `iframe[src*="plugin_entry.html?name=${PLUGIN}"]`;
/** The CPU sample: writes the runs "cnn", "mlp" (and "ddp_gloo" without --no-ddp). */
export const SAMPLE = path.join(REPO, 'samples', 'train_cpu.py');
// playwright-core adds --headless itself (headless: true below).
export const BROWSER_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const BUILT = path.join(REPO, 'tb_plugin', 'static', 'dist', 'index.js');

/**
 * What a suite shares between its hooks and tests.
 * @typedef {object} Env
 * @property {string} tmp the temporary folder (logdir, caches, chromium profile)
 * @property {string} logdir TensorBoard's logdir inside `tmp`
 * @property {string} base TensorBoard's URL, with a trailing slash
 * @property {import('node:child_process').ChildProcess | null} tb TensorBoard (own group)
 * @property {import('playwright-core').BrowserContext | null} context
 * @property {import('playwright-core').Page | null} page
 * @property {string[]} errors browser errors not yet asserted away
 * @property {string} shots the screenshots' folder
 * @property {boolean} failed a test of the suite failed (`noteOutcome`)
 */

/**
 * A suite's Env before `startEnv`, with the suite's own fields added.
 * @template {object} T
 * @param {T} [extra]
 * @returns {Env & T}
 */
export function newEnv(extra) {
  return {
    tmp: '',
    logdir: '',
    base: '',
    tb: null,
    context: null,
    page: null,
    errors: [],
    shots: '',
    failed: false,
    ...extra,
  };
}

// ----- helpers ---------------------------------------------------------------------

/** @returns {string} the chromium to drive */
export function findChromium() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
      const file = path.join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {
        // not here
      }
    }
  }
  throw new Error('no chromium found: set CHROMIUM_PATH or put chromium on PATH');
}

/** @returns {Promise<number>} a TCP port free on 127.0.0.1 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(address.port));
    });
  });
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `fn` until it returns a truthy value, which is returned.
 * @template T
 * @param {string} what for the timeout message
 * @param {() => Promise<T> | T} fn
 * @param {number} [timeoutMs]
 * @param {number} [everyMs]
 * @returns {Promise<T>}
 */
export async function waitUntil(what, fn, timeoutMs = 60_000, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ''}`);
}

/**
 * Copies the files of `dir` whose names end in `suffix` into `dest`.
 * @param {string} dir
 * @param {string} suffix
 * @param {string} dest
 * @returns {Promise<string[]>} the names copied, sorted
 */
export async function copyGlob(dir, suffix, dest) {
  await mkdir(dest, { recursive: true });
  const names = (await readdir(dir)).filter((n) => n.endsWith(suffix)).sort();
  for (const name of names) await copyFile(path.join(dir, name), path.join(dest, name));
  return names;
}

/**
 * Copies one trace file into the run folder `dest` (made if missing) as `name`.
 * @param {string} file
 * @param {string} dest
 * @param {string} name
 */
export async function copyTrace(file, dest, name) {
  await mkdir(dest, { recursive: true });
  await copyFile(file, path.join(dest, name));
}

/**
 * Kills a detached child's whole process group; SIGKILL after a grace period.
 * @param {import('node:child_process').ChildProcess | null | undefined} child
 * @param {number} [graceMs]
 */
export async function killGroup(child, graceMs = 5000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const pid = /** @type {number} */ (child.pid);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return;
  }
  const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await Promise.race([exited, sleep(2000)]);
  }
}

/**
 * Runs samples/train_cpu.py into `logdir`; asserts it succeeded.
 * @param {string} logdir
 * @param {string[]} args its options besides --logdir
 */
export function runSample(logdir, args) {
  const result = spawnSync(PYTHON, [SAMPLE, '--logdir', logdir, ...args], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(
    result.status,
    0,
    `train_cpu.py failed (${result.status ?? result.signal}):\n${result.stderr?.slice(-3000)}`,
  );
}

// ----- the browser page ------------------------------------------------------------

/**
 * Collects console errors, page errors and 4xx/5xx answers of the plugin's routes (the
 * iframe's included) into `errors`.
 * @param {import('playwright-core').Page} page
 * @param {string[]} errors
 */
export function watchErrors(page, errors) {
  page.on('console', (message) => {
    if (message.type() === 'error') {
      const where = message.location()?.url ?? '';
      errors.push(`console error: ${message.text()} ${where}`.trim());
    }
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400 && response.url().includes(`/data/plugin/${PLUGIN}/`)) {
      errors.push(`HTTP ${response.status()} for ${response.url()}`);
    }
  });
}

/**
 * Asserts no browser error was collected since the last call; forgets them.
 * @param {string[]} errors
 */
export function assertNoErrors(errors) {
  const seen = errors.splice(0);
  assert.deepEqual(seen, [], `browser errors:\n${seen.join('\n')}`);
}

/**
 * The plugin's iframe in TensorBoard's page.
 * @param {import('playwright-core').Page} page
 */
export function pluginFrame(page) {
  return page.frameLocator(IFRAME);
}

/**
 * The JSON a route answers once it is not 202 (by default, polled every 0.5 s for up to 5
 * minutes, 60 s a request).
 * @param {{base: string}} env
 * @param {string} route
 * @param {Record<string, string | number>} [params]
 * @param {{fetchMs?: number, waitMs?: number, everyMs?: number}} [bounds]
 */
export async function routeJson(
  env,
  route,
  params = {},
  { fetchMs = 60_000, waitMs = 300_000, everyMs = 500 } = {},
) {
  const url = new URL(`/data/plugin/${PLUGIN}/${route}`, env.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  return waitUntil(
    `${route} from the API`,
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(fetchMs) });
      if (response.status === 202) return null;
      assert.equal(response.status, 200, `${route} answered ${response.status}`);
      return response.json();
    },
    waitMs,
    everyMs,
  );
}

/**
 * The URL hash of a page state (`view`, `run`, `worker`, ... → `#kinetoscope&p.kinetoscope.k=v`).
 * @param {Record<string, string>} state
 */
export function stateHash(state) {
  const items = [PLUGIN, ...Object.entries(state).map(([k, v]) => `p.${PLUGIN}.${k}=${v}`)];
  return `#${items.map((i) => i.split('=').map(encodeURIComponent).join('=')).join('&')}`;
}

/**
 * The page's p.kinetoscope.* state from its URL hash (the inverse of stateHash).
 * @param {import('playwright-core').Page} page
 * @returns {Record<string, string>}
 */
export function readStateHash(page) {
  const prefix = `p.${PLUGIN}.`;
  /** @type {Record<string, string>} */
  const out = {};
  for (const item of new URL(page.url()).hash.slice(1).split('&')) {
    const [k, v] = item.split('=');
    const key = decodeURIComponent(k ?? '');
    if (v !== undefined && key.startsWith(prefix)) {
      out[key.slice(prefix.length)] = decodeURIComponent(v);
    }
  }
  return out;
}

/**
 * A screenshot taker numbering its files NN-<name>.png in `dir`.
 * @param {string} dir
 * @param {{fullPage?: boolean}} [options]
 * @returns {(page: import('playwright-core').Page, name: string) => Promise<string>}
 */
export function screenshotter(dir, options = {}) {
  let shots = 0;
  return async (page, name) => {
    shots += 1;
    const file = path.join(dir, `${String(shots).padStart(2, '0')}-${name}.png`);
    await screenshotOnce(page, file, options);
    return file;
  };
}

/**
 * Takes one screenshot. Headless Chromium on a loaded 2-core machine has been seen to
 * never hand over a frame (90 s after "fonts loaded"); a page that still answers
 * script is then shot again at the viewport's size. A page that does not answer fails.
 * @param {import('playwright-core').Page} page
 * @param {string} file
 * @param {{fullPage?: boolean}} options
 */
async function screenshotOnce(page, file, options) {
  try {
    await page.screenshot({ path: file, timeout: 30_000, ...options });
  } catch (error) {
    if (!String(error).includes('Timeout')) throw error;
    const answers = await Promise.race([
      page.evaluate(() => document.readyState),
      new Promise((resolve) => setTimeout(() => resolve(undefined), 10_000)),
    ]);
    if (answers === undefined) throw error;
    await page.screenshot({ path: file, timeout: 60_000, ...options, fullPage: false });
  }
}

/**
 * Picks Light / Dark / Browser default in TensorBoard's own theme menu (its header).
 * @param {import('playwright-core').Page} page
 * @param {string} label
 */
export async function setTensorBoardTheme(page, label) {
  await page.getByRole('button', { name: 'Menu for changing light or dark theme' }).click();
  await page.getByRole('menuitem', { name: label, exact: true }).click();
}

// ----- TensorBoard and chromium ----------------------------------------------------

// A TensorBoard that exits at start (its port taken between `freePort` and its bind) is
// started again on another port; one that is slow gets minutes, not a failure, and one
// that is later than that fails with its log (not started again).
const TENSORBOARD_START_MS = 240_000;
const TENSORBOARD_STARTS = 3;

/**
 * Starts TensorBoard on `env.logdir` and waits until it lists the plugin; sets `env.tb` and
 * `env.base`. Its output goes to `log` (appended over the starts).
 * @param {Env} env
 * @param {string} log
 */
async function startTensorBoard(env, log) {
  const failures = [];
  for (let start = 1; start <= TENSORBOARD_STARTS; start++) {
    const port = await freePort();
    env.base = `http://127.0.0.1:${port}/`;
    env.tb = spawnTensorBoard(
      env,
      port,
      createWriteStream(log, { flags: start === 1 ? 'w' : 'a' }),
    );
    const state = await waitUntil(
      'TensorBoard to list the kinetoscope plugin or exit',
      () => tensorBoardState(env),
      TENSORBOARD_START_MS,
      500,
    ).catch((error) => `late: ${error}`);
    if (state === 'listed') return;
    await killGroup(env.tb);
    const load = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    failures.push(`start ${start} on port ${port}: ${state}; load average ${load}`);
    // Only an exit is started again: a slow start would be as slow again, and three of
    // them outlast the suites' `before` hooks, whose timeout would hide this error.
    if (state.startsWith('late')) break;
  }
  const tail = readFileSync(log, 'utf8').slice(-3000);
  throw new Error(`TensorBoard did not start:\n${failures.join('\n')}\nits log:\n${tail}`);
}

/**
 * @param {Env} env
 * @param {number} port
 * @param {import('node:fs').WriteStream} logStream
 */
function spawnTensorBoard(env, port, logStream) {
  const tb = spawn(
    TENSORBOARD,
    ['--logdir', env.logdir, '--host', '127.0.0.1', '--port', String(port)],
    {
      cwd: env.tmp,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        KINETOSCOPE_CACHE_DIR: path.join(env.tmp, 'cache'),
        KINETOSCOPE_RESCAN_SECONDS: '1',
      },
    },
  );
  tb.stdout.pipe(logStream);
  tb.stderr.pipe(logStream);
  process.once('exit', () => {
    try {
      process.kill(-(/** @type {number} */ (tb.pid)), 'SIGKILL');
    } catch {
      // gone
    }
  });
  return tb;
}

/**
 * 'listed' once TensorBoard lists the plugin, 'exited …' if its process ended, else null.
 * @param {Env} env
 * @returns {Promise<string | null>}
 */
async function tensorBoardState(env) {
  const tb = /** @type {import('node:child_process').ChildProcess} */ (env.tb);
  if (tb.exitCode !== null || tb.signalCode !== null) {
    return `exited ${tb.exitCode ?? tb.signalCode}`;
  }
  const r = await fetch(new URL('data/plugins_listing', env.base), {
    signal: AbortSignal.timeout(15_000),
  });
  return r.ok && PLUGIN in (await r.json()) ? 'listed' : null;
}

/**
 * The suite's `before`: empties the screenshots folder, makes a logdir (`populate` fills
 * it), starts TensorBoard on it and waits for it to list the plugin, checks it serves the
 * build, launches chromium. Fills `env`; the suite opens its first page itself.
 * @param {Env} env
 * @param {object} options
 * @param {string} options.shots folder of the screenshots (its *.png are removed)
 * @param {string} options.tmpPrefix prefix of the temporary folder
 * @param {(logdir: string) => Promise<void>} options.populate writes the logdir's runs
 * @param {string} options.log TensorBoard's log file
 * @param {{width: number, height: number}} options.viewport
 * @param {number} options.waitMs the browser context's default timeout
 * @param {boolean} [options.acceptDownloads]
 * @param {boolean} [options.checkServed] assert TensorBoard serves the built index.js
 * @param {string[]} [options.args] chromium's flags (BROWSER_ARGS unless given)
 */
export async function startEnv(env, options) {
  const { shots, tmpPrefix, populate, log, viewport, waitMs } = options;
  await mkdir(shots, { recursive: true });
  for (const name of await readdir(shots)) {
    if (name.endsWith('.png')) await rm(path.join(shots, name));
  }
  assert.ok(existsSync(TENSORBOARD), `no TensorBoard at ${TENSORBOARD}: create .venv`);
  assert.ok(existsSync(BUILT), 'no built frontend: run `npm run build`');

  env.shots = shots;
  env.tmp = await mkdtemp(path.join(os.tmpdir(), tmpPrefix));
  env.logdir = path.join(env.tmp, 'logdir');
  await mkdir(env.logdir, { recursive: true });
  await populate(env.logdir);

  await startTensorBoard(env, log);
  if (options.checkServed ?? true) {
    const served = await fetch(new URL(`data/plugin/${PLUGIN}/static/index.js`, env.base));
    assert.equal(
      await served.text(),
      readFileSync(BUILT, 'utf8'),
      'TensorBoard serves another index.js than the build: pip install -e . in .venv',
    );
  }

  env.context = await chromium.launchPersistentContext(
    await mkdtemp(path.join(env.tmp, 'chromium-')),
    {
      executablePath: findChromium(),
      headless: true,
      args: options.args ?? BROWSER_ARGS,
      viewport,
      colorScheme: 'light',
      ...(options.acceptDownloads ? { acceptDownloads: true } : {}),
      timeout: 60_000,
    },
  );
  env.context.setDefaultTimeout(waitMs);
  for (const page of env.context.pages()) await page.close();
}

/**
 * The suite's `afterEach`: remembers a failed test, so that `stopEnv` keeps the logdir.
 * Traces recorded by the suite (torch runs) differ from run to run; a failure on one of
 * them can only be studied on that very trace.
 * @param {Env} env
 * @param {import('node:test').TestContext} t
 */
export function noteOutcome(env, t) {
  if (!t.passed) env.failed = true;
}

/**
 * The suite's `after`: closes chromium, kills TensorBoard's process group, removes the
 * temporary folder; after a failed test (`noteOutcome`) the logdir is first copied to
 * `logdir-of-failure` beside the screenshots.
 * @param {Env} env
 */
export async function stopEnv(env) {
  try {
    await env.context?.close();
  } finally {
    await killGroup(env.tb);
    if (env.failed && env.logdir && env.shots) {
      const kept = path.join(env.shots, 'logdir-of-failure');
      await rm(kept, { recursive: true, force: true });
      await cp(env.logdir, kept, { recursive: true });
    }
    if (env.tmp) await rm(env.tmp, { recursive: true, force: true });
  }
}

/**
 * How many colours a canvas shows, sampled every 97th pixel: an empty or blank canvas
 * shows a few.
 * @param {import('playwright-core').Locator} canvas
 * @returns {Promise<number>}
 */
export function canvasColourCount(canvas) {
  return canvas.evaluate((c) => {
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4 * 97)
      colours.add(`${data[i]},${data[i + 1]},${data[i + 2]}`);
    return colours.size;
  });
}
