// The Compile page's timeline: per rank (lane), each frame compile on the top row and its
// backward compile below, as boxes placed by time (first compiles, recompiles and failures
// in their own colours); the profiler steps that compiled shaded behind them; a time axis
// in seconds from the first compile. Plain positioned boxes: a few hundred compiles at most.

import { h } from '../../components/dom';
import { ticks, tickLabel, type TimelineModel } from './model';

const ROW_PX = 22;
const LANE_GAP_PX = 10;
const LABEL_PX = 96;

function pct(x: number, span: number): string {
  return `${((100 * x) / span).toFixed(4)}%`;
}

function laneRows(model: TimelineModel, lane: number): HTMLElement {
  const { span } = model;
  const row = h('div', { class: 'ks-cmp-lane', testid: `compile-lane-${lane}` });
  row.style.height = `${2 * ROW_PX}px`;
  for (const band of model.bands.filter((b) => b.lane === lane)) {
    const el = h(
      'div',
      { class: 'ks-cmp-band', title: band.title, testid: 'compile-step-band' },
      h('span', null, band.label),
    );
    el.style.left = pct(band.start, span);
    el.style.width = pct(Math.max(band.end - band.start, 0), span);
    row.appendChild(el);
  }
  for (const box of model.boxes.filter((b) => b.lane === lane)) {
    const el = h(
      'div',
      {
        class: `ks-cmp-box ks-cmp-${box.kind}`,
        title: box.title,
        testid: 'compile-box',
        dataset: { compile: box.compileId, kind: box.kind },
      },
      box.label,
    );
    el.style.left = pct(box.start, span);
    // at least 2 px, so a compile of milliseconds beside one of 30 s is still seen
    el.style.width = `max(2px, ${pct(box.end - box.start, span)})`;
    el.style.top = `${box.row * ROW_PX}px`;
    row.appendChild(el);
  }
  return row;
}

function axis(model: TimelineModel): HTMLElement {
  const el = h('div', { class: 'ks-cmp-axis' });
  for (const t of ticks(model.span)) {
    const tick = h('span', { class: 'ks-cmp-tick' }, tickLabel(t));
    tick.style.left = pct(t, model.span);
    el.appendChild(tick);
  }
  return el;
}

export function compileTimeline(model: TimelineModel): HTMLElement {
  const labels = h(
    'div',
    { class: 'ks-cmp-labels' },
    ...model.lanes.map((lane) => {
      const el = h('div', { class: 'ks-cmp-lane-label', title: lane }, lane);
      el.style.height = `${2 * ROW_PX}px`;
      el.style.marginBottom = `${LANE_GAP_PX}px`;
      return el;
    }),
  );
  labels.style.width = `${LABEL_PX}px`;
  const plot = h(
    'div',
    { class: 'ks-cmp-plot' },
    ...model.lanes.map((_, lane) => {
      const rows = laneRows(model, lane);
      rows.style.marginBottom = `${LANE_GAP_PX}px`;
      return rows;
    }),
    axis(model),
  );
  const legend = h(
    'div',
    { class: 'ks-cmp-legend ks-small ks-muted' },
    ...(['first', 'recompile', 'failed', 'backward'] as const).map((kind) =>
      h(
        'span',
        null,
        h('i', { class: `ks-cmp-swatch ks-cmp-${kind}` }),
        {
          first: 'first compile of a frame',
          recompile: 'recompile',
          failed: 'failed',
          backward: 'backward compile',
        }[kind],
      ),
    ),
    h('span', null, h('i', { class: 'ks-cmp-swatch ks-cmp-band' }), 'profiler step'),
  );
  return h(
    'div',
    { class: 'ks-cmp-timeline', testid: 'compile-timeline' },
    h('div', { class: 'ks-cmp-rows' }, labels, plot),
    legend,
  );
}
