// The Overview page: GPU summary, step-time breakdown (charts + table), recommendations,
// why the GPU is idle (idle.ts, from the `gpu_idle` route) and trace health (health.ts).

import { isStillLoading, ViewNotReady } from '../../api/client';
import type { OverviewResponse, Recommendation } from '../../api/types';
import { scrollToAnchor } from '../../components/anchor';
import { CATEGORY_LABEL } from '../../components/categories';
import { h, type Children } from '../../components/dom';
import { formatCount, formatDuration, formatPercent, plural } from '../../components/format';
import { recommendationCard as card } from '../../components/recommendation';
import { viewHead } from '../page_kit';
import type { ViewContext, ViewDef, ViewHandle } from '../types';
import { Breakdown } from './breakdown';
import { CompileStepsSection } from './compile_steps';
import { GainsSection } from './gains';
import { HealthSection } from './health';
import { IdleSection } from './idle';
import {
  deviceCount,
  deviceFields,
  deviceWord,
  evidenceParts,
  severityRank,
  topCategory,
} from './model';

function section(anchor: string, title: string, ...children: Children[]): HTMLElement {
  return h(
    'section',
    { class: 'ks-section', dataset: { anchor }, testid: `overview-${anchor}` },
    h('h3', { class: 'ks-section-title' }, title),
    ...children,
  );
}

function tile(label: string, value: string, detail?: string): HTMLElement {
  return h(
    'div',
    { class: 'ks-tile' },
    h('div', { class: 'ks-tile-label' }, label),
    h('div', { class: 'ks-tile-value' }, value),
    detail ? h('div', { class: 'ks-tile-detail' }, detail) : null,
  );
}

function summaryTiles(ov: OverviewResponse): HTMLElement {
  const top = topCategory(ov);
  const word = deviceWord(ov);
  return h(
    'div',
    { class: 'ks-tiles', testid: 'overview-summary' },
    tile(
      'Average step time',
      formatDuration(ov.average_step_us),
      `over ${plural(ov.step_count, 'step')}`,
    ),
    tile(
      'Steps',
      formatCount(ov.step_count),
      ov.steps_source === 'profiler_steps'
        ? 'ProfilerStep ranges'
        : ov.steps_source.replace(/_/g, ' '),
    ),
    top
      ? tile(
          'Largest share',
          CATEGORY_LABEL[top.category],
          `${formatPercent(top.percent)} of step time`,
        )
      : null,
    tile(
      'Device',
      ov.device_type === 'CPU' ? 'CPU only' : deviceCount(ov.devices.length, word),
      ov.device_type === 'CPU'
        ? 'no GPU activity in this trace'
        : (ov.devices[0]?.name ?? undefined),
    ),
  );
}

function deviceSection(ov: OverviewResponse): HTMLElement {
  const word = deviceWord(ov);
  if (ov.device_type === 'CPU' || ov.devices.length === 0) {
    return section(
      'gpu',
      `${word} summary`,
      h('p', { class: 'ks-muted ks-note', testid: 'no-gpu' }, 'No GPU in this trace.'),
    );
  }
  const cards = ov.devices.map((device) =>
    h(
      'div',
      { class: 'ks-card ks-device', testid: `gpu-${device.id}` },
      h(
        'div',
        { class: 'ks-device-head' },
        h('span', { class: 'ks-device-id' }, device.short_label),
        h('span', { class: 'ks-device-name' }, device.name ?? 'name not in the trace'),
      ),
      h(
        'dl',
        { class: 'ks-fields' },
        deviceFields(device, word).map(([label, value]) => [
          h('dt', null, label),
          h('dd', { class: value === '—' ? 'ks-muted' : undefined }, value),
        ]),
      ),
    ),
  );
  return section('gpu', `${word} summary`, h('div', { class: 'ks-devices' }, cards));
}

function recommendationCard(rec: Recommendation, ctx: ViewContext): HTMLElement {
  const link = rec.link;
  let linkEl: HTMLElement | null = null;
  if (link && ctx.views.includes(link.view)) {
    const label = ctx.viewLabel(link.view);
    const anchorText = link.anchor ? ` › ${link.anchor.replace(/_/g, ' ')}` : '';
    linkEl = h(
      'button',
      {
        class: 'ks-link-button',
        testid: `recommendation-link-${rec.id}`,
        attrs: { type: 'button' },
        on: { click: () => ctx.navigate(link.view, link.anchor ?? undefined) },
      },
      `Show in ${label}${anchorText}`,
    );
  }
  const docs = rec.docs_url
    ? h(
        'a',
        {
          class: 'ks-external',
          attrs: { href: rec.docs_url, target: '_blank', rel: 'noopener noreferrer' },
        },
        'Documentation ↗',
      )
    : null;
  return card(rec, evidenceParts(rec.evidence), linkEl, docs);
}

function recommendationSection(ov: OverviewResponse, ctx: ViewContext): HTMLElement {
  const recs = ov.recommendations
    .slice()
    .sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  return section(
    'recommendations',
    'Recommendations',
    recs.length
      ? h(
          'div',
          { class: 'ks-recs' },
          recs.map((r) => recommendationCard(r, ctx)),
        )
      : h(
          'p',
          { class: 'ks-muted ks-note' },
          'No recommendations: nothing stood out in this trace.',
        ),
  );
}

function partialNotice(ctx: ViewContext): HTMLElement | null {
  if (!ctx.status.partial) return null;
  return h(
    'div',
    { class: 'ks-notice ks-notice-warn', testid: 'partial-trace', role: 'note' },
    h('strong', null, 'This trace file was cut short; what could be read is shown.'),
    ctx.status.warnings.length
      ? h(
          'ul',
          null,
          ctx.status.warnings.map((w) => h('li', null, w)),
        )
      : null,
  );
}

async function renderOverview(container: HTMLElement, ctx: ViewContext): Promise<ViewHandle> {
  const result = await ctx.api.get('overview', ctx.key, ctx.signal);
  if (isStillLoading(result)) throw new ViewNotReady();
  const ov = result;

  const breakdown = new Breakdown(ov);
  const idle = new IdleSection(ctx, deviceWord(ov));
  const health = new HealthSection(ctx);
  const compile = new CompileStepsSection(ctx);
  const gains = new GainsSection(ctx);
  const page = h(
    'div',
    {
      class: 'ks-view ks-overview',
      testid: 'overview',
      dataset: { run: ctx.key.run, worker: ctx.key.worker, span: ctx.key.span },
    },
    viewHead('Overview', ctx.key, `${formatCount(ctx.status.event_count)} events`),
    partialNotice(ctx),
    summaryTiles(ov),
    health.element,
    recommendationSection(ov, ctx),
    gains.element,
    deviceSection(ov),
    compile.element,
    breakdown.element,
    idle.element,
  );
  container.appendChild(page);

  // The page is returned to be shown with its numbers; its charts are drawn once it is
  // (at their size, after that first paint). The sections with requests of their own
  // (the idle analysis, health, compile steps, gains) start once the charts are drawn:
  // their computing (the server's) does not share the cores with that first draw.
  void breakdown
    .start(ctx.themes, ctx.signal)
    .catch((error: unknown) => breakdown.chartsFailed(error))
    .finally(() => {
      if (ctx.signal.aborted) return;
      void idle.start();
      void health.start();
      void compile.start();
      void gains.start();
      page.dataset.ready = 'true';
    });

  return {
    dispose(): void {
      breakdown.dispose();
      idle.dispose();
      health.dispose();
      compile.dispose();
      gains.dispose();
      page.remove();
    },
    scrollTo: (anchor: string) => scrollToAnchor(page, anchor),
  };
}

export const overviewView: ViewDef = {
  id: 'overview',
  label: 'Overview',
  order: 10,
  render: renderOverview,
};
