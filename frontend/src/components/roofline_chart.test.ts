// The roofline chart drawn by ECharts itself (its server-side SVG renderer, with the
// components the page registers): each legend marker has the colour of what it names.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SVGRenderer } from 'echarts/renderers';

import type { RooflineFields } from '../api/types';
import { echarts } from './echarts_setup';
import { rooflineOption } from './roofline_chart';
import { rooflineData } from './roofline_model';
import { H100_ROOF, rooflineRow } from './roofline_fixture';
import { LIGHT } from './theme';

echarts.use([SVGRenderer]);

const H100 = H100_ROOF;
const row = (name: string, over: Partial<RooflineFields>) =>
  rooflineRow(name, { flops: 1, bytes: 1, ...over });

function svg(rows: (RooflineFields & { name: string })[]): string {
  const data = rooflineData(rows, [H100], () => 10);
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 900, height: 400 });
  chart.setOption(rooflineOption(data, LIGHT) as never);
  const out = chart.renderToSVGString();
  chart.dispose();
  return out;
}

/** Per legend label, the fill of the round marker drawn just before it (a legend item is
 *  its line, its symbol, then its text). */
function legendMarkers(out: string): Map<string, string> {
  const found = new Map<string, string>();
  const parts = out.split(/(<text[^>]*>[^<]*<\/text>)/);
  for (let i = 1; i < parts.length; i += 2) {
    const label = /<text[^>]*>([^<]*)<\/text>/.exec(parts[i] ?? '')?.[1] ?? '';
    const circles = [...(parts[i - 1] ?? '').matchAll(/<path d="[^"]*A[^"]*"[^>]*fill="([^"]+)"/g)];
    const fill = circles.at(-1)?.[1];
    if (fill) found.set(label, fill.toLowerCase());
  }
  return found;
}

describe('the roofline chart', () => {
  it('draws each legend marker in its series colour', () => {
    const out = svg([
      row('mm', { tflops: 600, gbps: 1, intensity: 400, dtype: 'bf16', bound: 'compute' }),
      row('add', { tflops: 0.5, gbps: 1000, intensity: 0.2, dtype: 'fp32', bound: 'memory' }),
    ]);
    const legend = legendMarkers(out);
    const want: [RegExp, string][] = [
      [/^bf16 roof/, '#2e7d32'],
      [/^fp32 roof/, '#6a1b9a'],
      [/^compute bound$/, '#1e88e5'],
      [/^memory bound$/, '#e65100'],
    ];
    for (const [name, colour] of want) {
      const label = [...legend.keys()].find((l) => name.test(l));
      assert.ok(label, `${name} in ${[...legend.keys()].join(' | ')}`);
      assert.equal(legend.get(label), colour, label);
    }
  });

  it('names the memory roof drawn for dots of no known data type', () => {
    const out = svg([row('moe', { tflops: 20, gbps: 900, intensity: 30, bound: 'memory' })]);
    assert.ok(out.includes('memory roof (data type unknown: no compute roof)'));
  });
});
