// Polling a worker-span's `status` until its trace is loaded or failed.

import type { ApiClient } from '../api/client';
import { sleep } from '../api/poll';
import type { SpanKey, StatusResponse } from '../api/types';
import { preloadCharts } from '../components/chart';

// A status answer is cheap; the last poll's wait is added to the user's first one.
export const STATUS_POLL_MS = 200;

/** The span's status once `ready` or `error` (null when aborted); `onLoading` hears each
 *  "still loading" answer with the seconds waited so far. ECharts is fetched meanwhile:
 *  the first view draws charts. */
export async function settledStatus(
  api: ApiClient,
  key: SpanKey,
  signal: AbortSignal,
  onLoading: (status: StatusResponse, seconds: number) => void,
): Promise<StatusResponse | null> {
  const started = Date.now();
  preloadCharts();
  for (;;) {
    const status = await api.get('status', key, signal);
    if (signal.aborted) return null;
    if (status.state === 'ready' || status.state === 'error') return status;
    onLoading(status, (Date.now() - started) / 1000);
    await sleep(STATUS_POLL_MS, signal);
  }
}
