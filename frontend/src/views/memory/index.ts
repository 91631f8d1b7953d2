// The Memory page: a device's allocated and reserved memory over time (from the trace's
// own [memory] events), the peak with the op and stack running at it, and the tables of
// allocations and operator statistics for the range shown. Dragging across the chart
// zooms: the server answers the range again (curve downsampled to the chart's pixel
// width, keeping the extremes), so the browser never holds the whole curve. The device
// and range live in TensorBoard's URL (p.kinetoscope.memory.*). This module asks for the
// first answer; page.ts is the page from then on. When the run folder holds allocator
// snapshots, the page has a second part, "Snapshot" (snapshot_part.ts).

import { ApiError, isStillLoading, ViewNotReady, type StillLoading } from '../../api/client';
import type { MemoryResponse } from '../../api/types';
import { h } from '../../components/dom';
import { HashParamStore } from '../../components/hash_params';
import { ensureStyle } from '../../components/view_style';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import css from './memory.css';
import { chooseDevice, parseRange, type TimeRange } from './model';
import { KEY_DEVICE, KEY_END, KEY_START, MemoryPage, URL_KEYS } from './page';
import { withSnapshotPart } from './snapshot_part';

// ----- the first request ------------------------------------------------------------

async function firstResponse(
  ctx: ViewContext,
  device: string | undefined,
  range: TimeRange | null,
): Promise<MemoryResponse> {
  const params = {
    device,
    start_us: range?.start_us,
    end_us: range?.end_us,
  };
  let result: MemoryResponse | StillLoading;
  try {
    result = await ctx.api.get('memory', { ...ctx.key, ...params }, ctx.signal);
  } catch (error) {
    // A link naming a device or range this trace does not have: start over without them.
    if (!(error instanceof ApiError) || error.status !== 400 || (!device && !range)) throw error;
    result = await ctx.api.get('memory', ctx.key, ctx.signal);
  }
  if (isStillLoading(result)) throw new ViewNotReady();
  return result;
}

function renderMemory(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  ensureStyle('memory', css);
  return withSnapshotPart(container, ctx, (el) => renderTraceMemory(el, ctx));
}

async function renderTraceMemory(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  const wanted = new HashParamStore(URL_KEYS).read();
  const wantedRange = parseRange(wanted[KEY_START], wanted[KEY_END]);
  let mem = await firstResponse(ctx, wanted[KEY_DEVICE], wantedRange);
  const device = chooseDevice(mem.devices, wanted[KEY_DEVICE], mem.default_device);
  if (device === null) {
    container.appendChild(
      h(
        'div',
        { class: 'ks-panel', testid: 'memory-empty' },
        h('h3', null, 'No memory events'),
        h(
          'p',
          null,
          'This trace has no [memory] events. Profile with profile_memory=True to record them.',
        ),
      ),
    );
    return { dispose: () => container.replaceChildren() };
  }
  // The range is kept only when the server took it.
  const range = mem.start_us !== null || mem.end_us !== null ? wantedRange : null;
  if (mem.device !== device && mem.devices.length > 1)
    mem = await firstResponse(ctx, device, range);
  const page = new MemoryPage(ctx, mem, { device, range });
  container.appendChild(page.el);
  await page.start();
  return {
    dispose: () => page.dispose(),
    scrollTo: (anchor) => page.scrollTo(anchor),
  };
}

export const memoryView: ViewDef = {
  id: 'memory',
  label: 'Memory',
  order: 50,
  render: renderMemory,
};
