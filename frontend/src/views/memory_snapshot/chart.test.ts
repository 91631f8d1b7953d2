// The snapshot chart drawn by ECharts itself (its server-side SVG renderer, with the
// components the page registers): the peak and OOM lines are labelled by name, not by
// their x value, and the trace's window is shaded.

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

function svg(window: [number, number] | null): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 800, height: 400 });
  const origin = { us: 1_000_000, label: 'ms from the first history entry' };
  chart.setOption(timelineOption(DEVICE, origin, window)(LIGHT) as never);
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
});
