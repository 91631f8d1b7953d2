// The Trace page's area summary: the events of a selected time range and tracks, summed up
// per name by the server, in the range pane.

import { isAbort } from '../../api/client';
import type { VirtualTable } from '../../components/table';
import { formatSpan } from './axis';
import { renderRangeSummary } from './details';
import { paneError, paneNote } from './page_panel';
import type { TracePageHost } from './page_types';
import type { AreaSelection } from './timeline';

/** The most names the server sums up (the largest). */
const RANGE_NAMES_LIMIT = 2000;

export class RangePane {
  private controller: AbortController | null = null;
  private table: VirtualTable<unknown> | null = null;

  constructor(private readonly host: TracePageHost) {}

  async show(area: AreaSelection | null): Promise<void> {
    const { panel, ctx } = this.host;
    this.controller?.abort();
    if (!area) return;
    const origin = this.host.origin();
    const controller = new AbortController();
    this.controller = controller;
    panel.show('range');
    panel.fill('range', paneNote(`Summing up ${formatSpan(area.t1 - area.t0)}…`));
    if (area.trackIds.length === 0) {
      panel.fill('range', paneNote('The selection covers no event tracks.'));
      return;
    }
    try {
      const params = {
        ...this.host.keyParams(),
        t0: area.t0 + origin,
        t1: area.t1 + origin,
        tracks: area.trackIds.join(','),
        limit: RANGE_NAMES_LIMIT,
      };
      const signal = AbortSignal.any([controller.signal, ctx.signal]);
      const resp = await ctx.api.getReady('range_summary', params, signal);
      if (controller.signal.aborted) return;
      this.table?.destroy();
      const { element, table } = renderRangeSummary(resp, area.trackIds.length);
      this.table = table as unknown as VirtualTable<unknown>;
      panel.fill('range', element);
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      panel.fill('range', paneError(error));
    }
  }

  /** Stops a summing up and drops the shown table (other tracks are loading). */
  reset(): void {
    this.controller?.abort();
    this.table?.destroy();
    this.table = null;
  }

  dispose(): void {
    this.reset();
  }
}
