// The snapshot chart drawn by ECharts itself (its server-side SVG renderer, with the
// components the page registers): the peak and OOM lines are labelled by name, not by
// their x value, on either side of their lines; the trace's window is shaded and the
// chart opens on it; bytes are ticked in round binary steps.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SVGRenderer } from 'echarts/renderers';

import type { SnapshotDevice } from '../../api/types';
import { echarts } from '../../components/echarts_setup';
import { LIGHT } from '../../components/theme';
import { timelineOption } from './chart';

echarts.use([SVGRenderer]);

const DEVICE = {
  device: 0,
  peak_allocated_bytes: 3 * 1024 * 1024,
  peak_time_us: 1_000_230,
  ooms: [{ time_us: 1_000_370, stream: 0, requested_bytes: 1, device_free: 0, frames: [] }],
  timeline: {
    t_us: [1_000_000, 1_000_230, 1_000_370],
    active_bytes: [0, 3 * 1024 * 1024, 1024],
    reserved_bytes: [4 * 1024 * 1024, 4 * 1024 * 1024, 4 * 1024 * 1024],
    points: 3,
    downsampled: false,
    streams: [],
  },
} as unknown as SnapshotDevice;

function svg(window: [number, number] | null, device: SnapshotDevice = DEVICE): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 800, height: 400 });
  const origin = { us: 1_000_000, label: 'ms from the first history entry' };
  chart.setOption(timelineOption(device, origin, window)(LIGHT) as never);
  const out = chart.renderToSVGString();
  chart.dispose();
  return out;
}

describe('the snapshot timeline chart', () => {
  it('labels the peak and OOM lines by name', () => {
    const text = [...svg(null).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.ok(text.includes('peak 3.00 MiB'), text.join(' | '));
    assert.ok(text.includes('OOM'), text.join(' | '));
    // The lines sit at 0.23 ms and 0.37 ms (not axis ticks): no label shows those numbers.
    assert.ok(!text.includes('0.23') && !text.includes('0.37'), text.join(' | '));
  });

  it('shades the trace window when the snapshot is aligned', () => {
    const text = [...svg([0.1, 0.3]).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.ok(text.includes('trace'), text.join(' | '));
  });

  it('ticks bytes in round binary steps', () => {
    const text = [...svg(null).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    for (const label of ['0 B', '1 MiB', '2 MiB', '3 MiB', '4 MiB']) {
      assert.ok(text.includes(label), `${label} not in ${text.join(' | ')}`);
    }
  });

  it('writes the peak and an OOM right after it on either side of their lines', () => {
    const close = {
      ...DEVICE,
      ooms: [{ time_us: 1_000_240, stream: 0, requested_bytes: 1, device_free: 0, frames: [] }],
    } as unknown as SnapshotDevice;
    const out = svg(null, close);
    const x = (name: string): number => {
      const m = new RegExp(`matrix\\(0,-1,1,0,([\\d.]+),[\\d.]+\\)"[^>]*>${name}`).exec(out);
      assert.ok(m?.[1], `${name} is not written along its line`);
      return Number(m[1]);
    };
    // Vertical text 12 px high: left of the peak's line, right of the OOM's, not on top.
    assert.ok(x('OOM') - x('peak 3.00 MiB') >= 14, `${x('peak 3.00 MiB')} vs ${x('OOM')}`);
  });

  it('opens on the trace window when the history starts long before it', () => {
    const long = {
      ...DEVICE,
      peak_time_us: 9_000_000,
      ooms: [],
      timeline: { ...DEVICE.timeline, t_us: [1_000_000, 8_600_000, 11_000_000] },
    } as unknown as SnapshotDevice;
    const ticks = [...svg([8000, 8900], long).matchAll(/<text[^>]*>([\d,.]+)<\/text>/g)]
      .map((m) => Number((m[1] ?? '').replace(/,/g, '')))
      .filter((v) => v >= 1000);
    // The trace's 900 ms with 300 ms either side, not the 8.3 s of history.
    assert.ok(ticks.length >= 3, ticks.join(' '));
    assert.ok(Math.min(...ticks) >= 7600 && Math.max(...ticks) <= 9300, ticks.join(' '));
  });
});
