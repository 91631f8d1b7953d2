// The Distributed page's panels around its sections: the loading and error panels, the
// job header, the notices (unreadable ranks, warnings) and the summary tiles.

import type { DistributedLoading, DistributedResponse } from '../../api/types';
import { h, type Children } from '../../components/dom';
import { formatDuration, formatPercent } from '../../components/format';
import { tile } from '../page_kit';
import { allWarnings, brokenRanks, jobSummary, rankProgress } from './model';
import { plural } from './text';

/** The progress panel while the server summarizes ranks (`seconds` since the first ask). */
export function loadingPanel(
  run: string,
  progress: DistributedLoading | null,
  seconds: number,
): HTMLElement {
  const p = rankProgress(progress?.ranks_done ?? 0, progress?.ranks_total ?? 0);
  const fill = h('div', { class: 'ks-progress-bar' });
  const bar = h('div', { class: 'ks-progress', role: 'progressbar' }, fill);
  if (p.percent !== null) {
    fill.style.width = `${p.percent}%`;
    bar.setAttribute('aria-valuenow', String(Math.round(p.percent)));
  } else {
    bar.classList.add('ks-progress-indeterminate');
  }
  const detail = progress ? p.text : 'Asking the server…';
  return h(
    'div',
    {
      class: 'ks-panel ks-loading',
      testid: 'distributed-loading',
      dataset: { ranksDone: String(p.done), ranksTotal: String(p.total) },
    },
    h('h3', null, `Analysing every rank of ${run}…`),
    bar,
    h('p', { class: 'ks-muted' }, seconds >= 1 ? `${detail} · ${Math.floor(seconds)} s` : detail),
    h(
      'p',
      { class: 'ks-muted ks-small' },
      'Each rank’s trace is summarized once in the background and cached; large jobs take a while the first time.',
    ),
  );
}

export function errorPanel(message: string, retry: () => void): HTMLElement {
  return h(
    'div',
    { class: 'ks-panel ks-error', testid: 'distributed-error', role: 'alert' },
    h('h3', null, 'Could not analyse this run as a distributed job'),
    h('p', { class: 'ks-error-message' }, message),
    h(
      'button',
      {
        class: 'ks-link-button ks-dist-retry',
        attrs: { type: 'button' },
        on: { click: retry },
      },
      'Retry',
    ),
  );
}

export function jobHeader(view: DistributedResponse): HTMLElement {
  const unreadable = view.errors.length ? ` (+${view.errors.length} unreadable)` : '';
  return h(
    'header',
    { class: 'ks-view-head' },
    h('h2', null, 'Distributed'),
    h(
      'p',
      { class: 'ks-muted' },
      `${view.run} · span ${view.span} · ${plural(view.ranks.length, 'rank')}${unreadable}`,
    ),
  );
}

function rankErrors(view: DistributedResponse): HTMLElement | null {
  const broken = brokenRanks(view.errors);
  if (!broken.length) return null;
  const rest = view.ranks.length
    ? `the other ${plural(view.ranks.length, 'rank')} are shown`
    : 'no rank is left to show';
  return h(
    'div',
    { class: 'ks-notice ks-dist-errors', testid: 'rank-errors', role: 'alert' },
    h('strong', null, `${plural(broken.length, 'rank')} could not be read; ${rest}.`),
    h(
      'ul',
      null,
      broken.map((b) =>
        h(
          'li',
          {
            class: 'ks-dist-error-item',
            testid: `rank-error-${b.worker}`,
            dataset: { worker: b.worker },
          },
          h('strong', null, `${b.worker} (span ${b.span})`),
          ': ',
          h('span', { class: 'ks-dist-error-message', testid: 'rank-error-message' }, b.message),
          b.fields.length
            ? h(
                'div',
                { class: 'ks-dist-error-fields' },
                b.fields.map(([k, v]) => h('span', null, `${k}: ${v}`)),
              )
            : null,
        ),
      ),
    ),
  );
}

/** Ranks that could not be read, and the job's warnings. */
export function jobNotices(view: DistributedResponse): Children {
  const out: HTMLElement[] = [];
  const errors = rankErrors(view);
  if (errors) out.push(errors);
  const warnings = allWarnings(view);
  if (warnings.length) {
    out.push(
      h(
        'div',
        { class: 'ks-notice ks-notice-warn', testid: 'distributed-warnings', role: 'note' },
        h('strong', null, plural(warnings.length, 'warning')),
        h(
          'ul',
          null,
          warnings.map((w) => h('li', null, w)),
        ),
      ),
    );
  }
  return out;
}

function worldSizeText(s: ReturnType<typeof jobSummary>): string {
  if (s.worldSize === null) return 'world size not recorded';
  if (s.missingRanks) return `world size ${s.worldSize}: ${s.missingRanks} missing`;
  if (s.worldSize < s.ranksFound) return `more than the recorded world size (${s.worldSize})`;
  return `world size ${s.worldSize}`;
}

export function jobTiles(view: DistributedResponse): HTMLElement {
  const s = jobSummary(view);
  return h(
    'div',
    { class: 'ks-tiles', testid: 'distributed-summary' },
    tile('Ranks found', s.ranksText, worldSizeText(s), 'tile-ranks'),
    tile(
      'Backend',
      s.backend,
      s.processGroups ? plural(s.processGroups, 'process group') : 'no process groups recorded',
      'tile-backend',
    ),
    tile('Devices', s.mode, s.broken ? `${plural(s.broken, 'rank')} unreadable` : undefined),
    tile('Median rank time', formatDuration(s.medianStepTime), `over ${plural(s.steps, 'step')}`),
    tile('Communication', formatPercent(s.communicationShare), 'not overlapped, of the step time'),
    tile('Synchronizing', formatPercent(s.waitShare), 'of the collectives’ time, waiting'),
  );
}
