#!/usr/bin/env node
// What a user waits for first: from a cold TensorBoard start on LOGDIR (an empty cache) to
// the plugin's Overview answered (its route's first 200) and drawn in Chromium.
//
//     node bench/first_view.mjs LOGDIR [--runs N] [--python .venv/bin/python] [--requests]
//                                      [--trace]
//
// Chromium starts beside TensorBoard (a user's browser is open already) and opens
// TensorBoard's page as soon as it answers, as a user following the printed URL would;
// the plugin's frontend then asks for the run, its worker and span, and the Overview.
// Per run prints, in seconds from TensorBoard's start: `listening` (its first HTTP
// answer), `overview_200` (the Overview route answered with data), `drawn` (the Overview
// marked ready in the page, by the page's clock; `drawn_seen`: when this script saw it), and `G` (gzip -dc of the run's trace, best of 3) with the
// ratios; `cpu_s`: the CPU seconds (user + system) TensorBoard's process and the browser's
// processes had used at `overview_200` and at `drawn` (Linux /proc; null elsewhere): on a
// shared machine, what to compare before and after a change, beside the wall times;
// `--requests` prints each answer of TensorBoard's data routes as it comes (to stderr);
// `--trace` records a Chrome trace of the page and adds `browser_trace`: from the
// Overview's answer to its paint, the seconds and the CPU seconds of the renderer's main
// thread (_browser_trace.mjs; tracing costs the browser some CPU of its own).
// Nothing is written into the repo; a temporary folder holds the cache and the browser
// profile.

import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { traceBrowser } from './_browser_trace.mjs';
import {
  BROWSER_ARGS,
  IFRAME,
  PLUGIN,
  REPO,
  findChromium,
  freePort,
  killGroup,
  sleep,
} from '../tests/e2e/harness.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '1' },
    python: { type: 'string', default: path.join(REPO, '.venv', 'bin', 'python') },
    requests: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
  },
});
if (positionals.length !== 1) {
  console.error('usage: node bench/first_view.mjs LOGDIR [--runs N] [--python PYTHON] [--trace]');
  process.exit(2);
}
const LOGDIR = path.resolve(positionals[0]);

/** @param {string} dir @returns {Promise<string[]>} the trace files under dir */
async function traces(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && /\.pt\.trace\.json(\.gz)?$/.test(entry.name)) {
      found.push(path.join(entry.parentPath ?? entry.path, entry.name));
    }
  }
  return found.sort();
}

/** @param {string} file @returns {number | null} gzip -dc seconds, best of 3 */
function gzipSeconds(file) {
  if (!file.endsWith('.gz')) return null;
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = spawnSync('sh', ['-c', `gzip -dc "${file}" > /dev/null`]);
    if (r.status !== 0) return null;
    best = Math.min(best, (performance.now() - t) / 1000);
  }
  return best;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** @param {number} pid @returns {{ ppid: number, cpu: number } | null} its CPU seconds so far
 *  (user + system, its reaped children's included) and its parent */
function procCpu(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's ")": state, ppid, ..., utime (14th), stime, cutime, cstime.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return { ppid: Number(fields[1]), cpu: ticks / TICKS };
  } catch {
    return null; // ended meanwhile
  }
}

/** @param {number | undefined} tensorboardPid
 *  @returns {{ tensorboard: number, browser: number } | null} CPU seconds so far of
 *  TensorBoard's process tree and of the other processes this one started (the browser) */
function cpuSeconds(tensorboardPid) {
  if (tensorboardPid === undefined || process.platform !== 'linux') return null;
  /** @type {Map<number, { ppid: number, cpu: number }>} */
  const procs = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const found = procCpu(Number(name));
    if (found) procs.set(Number(name), found);
  }
  /** @param {number} pid @param {number} root */
  const under = (pid, root) => {
    for (let at = pid; at > 1; at = procs.get(at)?.ppid ?? 0) if (at === root) return true;
    return false;
  };
  let tensorboard = 0;
  let browser = 0;
  for (const [pid, { cpu }] of procs) {
    if (under(pid, tensorboardPid)) tensorboard += cpu;
    else if (pid !== process.pid && under(pid, process.pid)) browser += cpu;
  }
  return { tensorboard: +tensorboard.toFixed(2), browser: +browser.toFixed(2) };
}

async function oneRun() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'kinetoscope-first-view-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/`;
  const bin = path.dirname(path.resolve(values.python)); // TensorBoard starts in a temporary cwd
  const t0 = performance.now();
  const epoch0 = Date.now(); // t0 on the clock the page reads (`drawn`)
  const since = () => (performance.now() - t0) / 1000;
  const tb = spawn(
    path.join(bin, 'tensorboard'),
    ['--logdir', LOGDIR, '--host', '127.0.0.1', '--port', String(port)],
    {
      cwd: tmp,
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore'],
      env: { ...process.env, KINETOSCOPE_CACHE_DIR: path.join(tmp, 'cache') },
    },
  );
  const browser = chromium.launchPersistentContext(path.join(tmp, 'chromium'), {
    executablePath: findChromium(),
    headless: true,
    args: BROWSER_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  /** @type {Record<string, number | null>} */
  const times = { listening: null, overview_200: null, drawn: null, drawn_seen: null };
  /** @type {Record<string, ReturnType<typeof cpuSeconds>>} */
  const cpu = { overview_200: null, drawn: null };
  let context;
  let browserTrace = null;
  try {
    while (times.listening === null) {
      try {
        await fetch(base, { signal: AbortSignal.timeout(1000) });
        times.listening = since();
      } catch {
        await sleep(50);
      }
    }
    context = await browser;
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('response', (response) => {
      const url = response.url();
      if (values.requests && url.includes(`/data/`)) {
        const route = url.slice(url.indexOf('/data/') + 6).split('&')[0];
        console.error(`${since().toFixed(2)} ${response.status()} ${route}`);
      }
      if (times.overview_200 === null && response.status() === 200) {
        if (url.includes(`/data/plugin/${PLUGIN}/overview?`)) {
          times.overview_200 = since();
          cpu.overview_200 = cpuSeconds(tb.pid);
        }
      }
    });
    const tracing = values.trace ? await traceBrowser(page, PLUGIN) : null;
    await page.goto(`${base}#${PLUGIN}`);
    const frame = await (await page.waitForSelector(IFRAME, { timeout: 600_000 })).contentFrame();
    if (frame === null) throw new Error('the plugin frame has no document');
    // The page's own clock when it marked the Overview ready, read at every animation
    // frame: a locator's waitFor polls with a backoff that reaches 500 ms (Playwright's
    // 0, 20, 50, 100, 100, 500), so what it saw lagged the mark by 0 to 0.5 s.
    const marked = await frame.waitForFunction(
      () =>
        document.querySelector('[data-testid="overview"][data-ready="true"]') !== null &&
        Date.now(),
      undefined,
      { polling: 'raf', timeout: 600_000 },
    );
    times.drawn = (Number(await marked.jsonValue()) - epoch0) / 1000;
    times.drawn_seen = since();
    cpu.drawn = cpuSeconds(tb.pid);
    browserTrace = (await tracing?.stop()) ?? null;
  } finally {
    await (context ?? (await browser)).close();
    await killGroup(tb);
    await rm(tmp, { recursive: true, force: true });
  }
  return { times, cpu, browserTrace };
}

const files = await traces(LOGDIR);
const G = files.length === 1 ? gzipSeconds(files[0]) : null;
const size = files.length === 1 ? (await stat(files[0])).size : null;
for (let i = 0; i < Number(values.runs); i++) {
  const { times, cpu, browserTrace } = await oneRun();
  const ratio = (/** @type {number | null} */ t) => (t !== null && G ? +(t / G).toFixed(2) : null);
  console.log(
    JSON.stringify({
      run: i + 1,
      ...Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v && +v.toFixed(2)])),
      G: G && +G.toFixed(2),
      gz_bytes: size,
      overview_200_over_G: ratio(times.overview_200),
      drawn_over_G: ratio(times.drawn),
      cpu_s: cpu,
      ...(values.trace ? { browser_trace: browserTrace } : {}),
    }),
  );
}
