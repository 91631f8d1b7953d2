// The browser's side of first_view.mjs --trace: a Chrome trace of the page (DevTools'
// timeline events) from before it opens until the Overview is painted, and what the
// renderer's main thread did from the Overview's answer to that paint. Thread CPU time
// (the trace's `tdur`) is counted, not wall time: on a shared machine it is the number
// that does not grow with the other work.

/** Marked in the page by the script below: the Overview ready, shown, and painted. */
const PAINTED = 'kinetoscope-first-view:painted';
// RunTask, the main thread's top-level tasks, is in the disabled-by-default category.
const CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'blink.user_timing',
  'loading',
].join(',');

/** Runs in every frame before its scripts: marks `mark` once the plugin's Overview is
 *  ready and shown, after the next two frames (the one that paints it has then ended).
 *  @param {string} mark */
function markPainted(mark) {
  if (!location.href.includes('plugin_entry.html')) return;
  let seen = false;
  const check = () => {
    const page = document.querySelector('[data-testid="overview"][data-ready="true"]');
    if (seen || !page || page.clientWidth === 0) return;
    seen = true;
    requestAnimationFrame(() => requestAnimationFrame(() => performance.mark(mark)));
  };
  const watch = { subtree: true, attributes: true, childList: true };
  new MutationObserver(check).observe(document, watch);
}

/**
 * Starts tracing `page` (before it opens); `stop()` ends it once the Overview is painted.
 * @param {import('playwright-core').Page} page
 * @param {string} plugin the plugin's name in its routes
 */
export async function traceBrowser(page, plugin) {
  await page.addInitScript(markPainted, PAINTED);
  const cdp = await page.context().newCDPSession(page);
  /** @type {any[]} */
  const events = [];
  cdp.on('Tracing.dataCollected', (batch) => events.push(...batch.value));
  await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
  return {
    /** @returns {Promise<ReturnType<typeof summarize>>} */
    async stop() {
      await page
        .frameLocator(`iframe[src*="plugin_entry.html?name=${plugin}"]`)
        .locator('body')
        .evaluate(
          (_, mark) =>
            new Promise((resolve) => {
              const poll = () =>
                performance.getEntriesByName(mark).length ? resolve(null) : setTimeout(poll, 20);
              poll();
            }),
          PAINTED,
        );
      const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
      await cdp.send('Tracing.end');
      await done;
      return summarize(events, plugin);
    },
  };
}

/**
 * @param {any[]} events the trace's events
 * @param {string} plugin
 * @returns {{ answer_to_painted_s: number, main_thread_cpu_s: number } | null}
 */
function summarize(events, plugin) {
  const painted = events.find((e) => e.name === PAINTED);
  const sent = events.find(
    (e) =>
      e.name === 'ResourceSendRequest' &&
      String(e.args?.data?.url).includes(`/${plugin}/overview?`),
  );
  const id = sent?.args.data.requestId;
  const answered = events.find((e) => e.name === 'ResourceFinish' && e.args?.data?.requestId === id);
  if (!painted || !answered) return null;
  // The plugin's iframe is of TensorBoard's origin: it runs on the page's main thread.
  const main = events.find(
    (e) => e.ph === 'M' && e.pid === painted.pid && e.args?.name === 'CrRendererMain',
  );
  let cpuUs = 0;
  for (const e of events) {
    if (e.ph !== 'X' || e.name !== 'RunTask' || e.pid !== painted.pid || e.tid !== main?.tid)
      continue;
    if (e.ts >= answered.ts && e.ts < painted.ts) cpuUs += e.tdur ?? 0;
  }
  return {
    answer_to_painted_s: +((painted.ts - answered.ts) / 1e6).toFixed(3),
    main_thread_cpu_s: +(cpuUs / 1e6).toFixed(3),
  };
}
