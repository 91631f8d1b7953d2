// The Trace page's search: the server finds events by name (the first SEARCH_LIMIT by
// time); Enter / Shift+Enter (or the arrows) step through them from the view's start, and
// the search pane lists them with the names that matched.

import { isAbort } from '../../api/client';
import type { SearchResponse } from '../../api/types';
import { h } from '../../components/dom';
import { formatCount, formatTimeOffset } from '../../components/format';
import { formatSpan } from './axis';
import { trackLabel } from './layout';
import { firstHitFrom, searchHits, stepHit, type SearchHit } from './model';
import { paneError } from './page_panel';
import type { TracePageHost } from './page_types';

const SEARCH_LIMIT = 500;
/** The most matched names listed above the matches. */
const NAMES_SHOWN = 12;

export class TraceSearch {
  private query = '';
  private hits: SearchHit[] = [];
  private hitIndex = -1;
  private resp: SearchResponse | null = null;
  private controller: AbortController | null = null;

  constructor(
    private readonly host: TracePageHost,
    private readonly input: HTMLInputElement,
    private readonly count: HTMLElement,
  ) {}

  /** Steps to the next (1) or previous (-1) match, searching first for a new query. */
  async step(dir: 1 | -1): Promise<void> {
    const timeline = this.host.timeline();
    const q = this.input.value.trim();
    if (!timeline || !q) return;
    if (q !== this.query) {
      const found = await this.find(q);
      if (!found) return;
      this.hitIndex = this.hits.length
        ? firstHitFrom(this.hits, timeline.viewport.start) - (dir > 0 ? 1 : -1)
        : -1;
      this.render();
    }
    if (!this.hits.length) {
      this.host.panel.show('search');
      return;
    }
    this.goToHit(stepHit(this.hitIndex, this.hits.length, dir));
  }

  /** A pasted link's search: the text in the box and its matches listed and counted,
   *  the window and the selection left as they are. */
  async restore(q: string): Promise<void> {
    this.input.value = q;
    if (!q.trim() || !this.host.timeline()) return;
    if (await this.find(q.trim())) {
      this.hitIndex = -1;
      this.render();
    }
  }

  /** Forgets the matches (other tracks are loading); the next Enter searches again. */
  reset(): void {
    this.hits = [];
    this.hitIndex = -1;
    this.query = '';
    this.count.textContent = '';
  }

  dispose(): void {
    this.controller?.abort();
  }

  /** Asks the server for the matches of q; false when aborted or failed (said in the pane). */
  private async find(q: string): Promise<boolean> {
    const { ctx, panel } = this.host;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.query = q;
    this.count.textContent = 'searching…';
    try {
      const params = { ...this.host.keyParams(), q, limit: SEARCH_LIMIT };
      const signal = AbortSignal.any([controller.signal, ctx.signal]);
      const resp = await ctx.api.getReady('search', params, signal);
      if (controller.signal.aborted) return false;
      this.resp = resp;
      this.hits = searchHits(resp, this.host.origin(), this.host.multi());
      return true;
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return false;
      this.query = '';
      this.count.textContent = 'search failed';
      panel.fill('search', paneError(error));
      panel.show('search');
      return false;
    }
  }

  /** Selects a match; from the list, the list stays shown (its details are a tab away). */
  private goToHit(index: number, fromList = false): void {
    const hit = this.hits[index];
    const timeline = this.host.timeline();
    if (!hit || !timeline) return;
    this.hitIndex = index;
    this.updateCount();
    const pane = this.host.panel.pane('search');
    for (const el of pane.querySelectorAll('.ks-active')) el.classList.remove('ks-active');
    pane.querySelector(`[data-hit="${index}"]`)?.classList.add('ks-active');
    timeline.select({
      trackId: hit.track,
      worker: hit.worker,
      row: hit.row,
      depth: hit.depth,
      start: hit.ts,
      dur: hit.dur,
      name: hit.name,
    });
    if (fromList) this.host.panel.show('search');
  }

  private updateCount(): void {
    const resp = this.resp;
    const n = this.hits.length;
    if (!resp || n === 0) {
      this.count.textContent = resp ? 'no matches' : '';
      return;
    }
    const more = resp.total > n ? ` (first ${formatCount(n)} of ${formatCount(resp.total)})` : '';
    this.count.textContent = `${this.hitIndex + 1} / ${formatCount(n)}${more}`;
  }

  private render(): void {
    const resp = this.resp;
    if (!resp) return;
    this.updateCount();
    this.host.panel.fill(
      'search',
      h(
        'div',
        {
          class: 'ks-search-results',
          testid: 'trace-search-results',
          dataset: { total: String(resp.total) },
        },
        this.resultsHead(resp),
        this.matchedNames(resp),
        h(
          'ol',
          { class: 'ks-search-hits' },
          this.hits.map((hit, i) => this.hitItem(hit, i)),
        ),
      ),
    );
    this.host.panel.show('search');
  }

  private resultsHead(resp: SearchResponse): HTMLElement {
    const nameCount = resp.names.length;
    return h(
      'p',
      { class: 'ks-range-head' },
      h('strong', null, `${formatCount(resp.total)} events`),
      ` match “${resp.query}” in ${formatCount(nameCount)} name${nameCount === 1 ? '' : 's'}`,
      resp.truncated ? `; the first ${formatCount(this.hits.length)} by time are listed` : '',
      '. Enter / Shift+Enter step through them.',
    );
  }

  private matchedNames(resp: SearchResponse): HTMLElement | null {
    const names = resp.names.slice(0, NAMES_SHOWN);
    if (!names.length) return null;
    return h(
      'div',
      { class: 'ks-search-names' },
      names.map((n) =>
        h(
          'span',
          { class: 'ks-search-name', title: n.name },
          h('span', null, n.name),
          h('b', null, formatCount(n.count)),
        ),
      ),
    );
  }

  private hitItem(hit: SearchHit, i: number): HTMLElement {
    return h(
      'li',
      { dataset: { hit: String(i) }, class: i === this.hitIndex ? 'ks-active' : undefined },
      h(
        'button',
        {
          attrs: { type: 'button' },
          testid: 'trace-search-hit',
          on: { click: () => this.goToHit(i, true) },
        },
        h('span', { class: 'ks-hit-time' }, formatTimeOffset(hit.ts)),
        h('span', { class: 'ks-hit-dur' }, formatSpan(hit.dur)),
        h('span', { class: 'ks-hit-name', title: hit.name }, hit.name),
        h('span', { class: 'ks-hit-track' }, this.trackName(hit.track)),
      ),
    );
  }

  private trackName(id: string): string {
    const t = this.host.timeline()?.trackOf(id);
    return t ? trackLabel(t) : id;
  }
}
