// The Trace page's event details: the selected event fetched by its row (a few kept), shown
// in the details pane, and jumps to linked events (which select them on the timeline).

import { isAbort } from '../../api/client';
import type { EventResponse } from '../../api/types';
import { renderEventDetails, type JumpTarget } from './details';
import { trackLabel } from './layout';
import { eventParams } from './model';
import { paneError, paneNote } from './page_panel';
import type { TracePageHost } from './page_types';
import type { SelectedEvent } from './timeline';

const CACHED_EVENTS = 50;

export class EventPane {
  private readonly cache = new Map<string, EventResponse>();
  private controller: AbortController | null = null;

  constructor(private readonly host: TracePageHost) {}

  /** Shows an event's details, or the empty note when nothing is selected. */
  async show(sel: SelectedEvent | null): Promise<void> {
    const { panel, ctx } = this.host;
    this.controller?.abort();
    if (!sel) {
      panel.clearDetails();
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    panel.show('details');
    panel.fill('details', paneNote(`Loading ${sel.name}…`, 'trace-details-loading'));
    try {
      const signal = AbortSignal.any([controller.signal, ctx.signal]);
      const ev = await this.fetch(sel.worker, sel.row, signal);
      if (controller.signal.aborted) return;
      panel.scrollToTop();
      panel.fill('details', this.details(ev, sel.worker));
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      panel.fill('details', paneError(error, 'trace-details-error'));
    }
  }

  /** Selects an event known by its row: its details give its track, depth and time;
   *  `reveal` false keeps the window as it is. */
  async jump(target: JumpTarget, reveal = true): Promise<void> {
    const timeline = this.host.timeline();
    if (!timeline) return;
    try {
      const ev = await this.fetch(target.worker, target.row, this.host.ctx.signal);
      const track = ev.track ?? target.track;
      if (!track || this.host.timeline() !== timeline) return;
      timeline.select(
        {
          trackId: track,
          worker: target.worker,
          row: ev.row,
          depth: ev.depth ?? 0,
          start: ev.ts - this.host.origin(),
          dur: ev.dur,
          name: ev.name,
        },
        reveal,
      );
    } catch (error) {
      if (!isAbort(error)) this.host.panel.fill('details', paneError(error));
    }
  }

  /** Forgets the shown event and the kept ones (other tracks are loading). */
  reset(): void {
    this.controller?.abort();
    this.cache.clear();
  }

  dispose(): void {
    this.controller?.abort();
  }

  private details(ev: EventResponse, worker: string | null): HTMLElement {
    const origin = this.host.origin();
    return renderEventDetails(ev, {
      origin,
      worker,
      trackLabel: (id) => {
        const t = id ? this.host.timeline()?.trackOf(id) : undefined;
        return t ? `${t.process ? `${t.process} › ` : ''}${trackLabel(t)}` : (id ?? '—');
      },
      jump: (target) => void this.jump(target),
      zoom: () => this.host.timeline()?.zoomTo(ev.ts - origin, ev.dur),
    });
  }

  private async fetch(
    worker: string | null,
    row: number,
    signal: AbortSignal,
  ): Promise<EventResponse> {
    const key = `${worker ?? ''}\u0000${row}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const { run, span, worker: single } = this.host.ctx.key;
    const params = {
      ...eventParams(run, span, this.host.multi(), worker, single),
      row,
    };
    const ev = await this.host.ctx.api.getReady('event', params, signal);
    if (this.cache.size > CACHED_EVENTS) this.cache.clear();
    this.cache.set(key, ev);
    return ev;
  }
}
