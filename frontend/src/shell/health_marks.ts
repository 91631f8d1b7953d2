// The side bar's health mark beside each worker whose trace has been opened: ok, warnings
// or errors, from the `health` route (asked once per worker-span, after it loads; the
// route is cached with the trace). A worker not opened yet has no mark: its trace is not
// read just to mark it.

import { isAbort, type ApiClient } from '../api/client';
import type { HealthView } from '../api/types';
import type { Selection } from './selection';

type HealthStatus = HealthView['status'];

const MARK: Record<HealthStatus, string> = {
  ok: '✓ ok',
  warnings: '! warnings',
  errors: '✕ errors',
};

function keyOf(sel: Selection): string {
  return JSON.stringify([sel.run, sel.worker, sel.span]);
}

export class HealthMarks {
  private readonly known = new Map<string, HealthStatus>();

  /** `changed` runs when a worker's health becomes known (to draw the marks again). */
  constructor(private readonly changed: () => void) {}

  /** Asks the route for this worker-span's health, once. */
  async fetch(api: ApiClient, sel: Selection, signal: AbortSignal): Promise<void> {
    if (this.known.has(keyOf(sel))) return;
    try {
      const view = await api.getReady('health', { ...sel }, signal);
      this.known.set(keyOf(sel), view.status);
      this.changed();
    } catch (error) {
      if (!isAbort(error)) console.warn('kinetoscope: trace health unavailable', error);
    }
  }

  /** Adds the known marks to the Workers selector's options of the selection's run and
   *  span (a failed worker keeps its own note); `data-health` holds the status. */
  label(select: HTMLSelectElement, sel: Selection | null): void {
    if (!sel) return;
    for (const option of Array.from(select.options)) {
      const status = this.known.get(keyOf({ ...sel, worker: option.value }));
      if (!status || option.text.includes(' — ')) continue;
      option.text = `${option.text} · ${MARK[status]}`;
      option.dataset.health = status;
    }
  }
}
