// How runs, workers and spans are named in the UI (the side bar, the Compare control and
// the views that list workers): one wording everywhere.

import type { RunInfo, SpanInfo, WorkerInfo } from '../api/types';
import { formatTimestamp } from './format';

export function runLabel(run: RunInfo): string {
  return run.name === '.' ? '. (logdir)' : run.name;
}

export function workerLabel(worker: WorkerInfo): string {
  return worker.rank === null ? worker.name : `${worker.name} (rank ${worker.rank})`;
}

/** Epoch milliseconds before 1973 are not real profiler timestamps (e.g. "worker.1.pt..."). */
const PLAUSIBLE_MS = 1e11;

export function spanLabel(span: SpanInfo): string {
  if (span.timestamp === null || span.timestamp < PLAUSIBLE_MS) return span.name;
  return `${span.name} · ${formatTimestamp(span.timestamp)}`;
}
