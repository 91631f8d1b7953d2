// Pure selection logic of the shell: which run/worker/span/view to show given the
// listing and what the URL or the user asked for.

import type { RunInfo, SpanInfo, WorkerInfo } from '../api/types';

export { runLabel, spanLabel, workerLabel } from '../components/labels';

export interface Selection {
  run: string;
  worker: string;
  span: string;
}

/**
 * The selection to show: each wanted name if the listing has it, else the first run, the
 * first worker of the run and the first span of the worker. null when nothing is listed.
 */
export function reconcile(runs: readonly RunInfo[], wanted: Partial<Selection>): Selection | null {
  const run = runs.find((r) => r.name === wanted.run) ?? runs.find((r) => r.workers.length > 0);
  if (!run) return null;
  const worker =
    run.workers.find((w) => w.name === wanted.worker) ?? run.workers.find((w) => w.spans.length);
  // A run without traces (a folder of memory snapshots) has only its run-level views.
  if (!worker) return run.views?.length ? { run: run.name, worker: '', span: '1' } : null;
  const span = worker.spans.find((s) => s.name === wanted.span) ?? worker.spans[0];
  if (!span) return null;
  return { run: run.name, worker: worker.name, span: span.name };
}

export function findRun(runs: readonly RunInfo[], name: string): RunInfo | undefined {
  return runs.find((r) => r.name === name);
}

export function findWorker(runs: readonly RunInfo[], sel: Selection): WorkerInfo | undefined {
  return findRun(runs, sel.run)?.workers.find((w) => w.name === sel.worker);
}

export function findSpan(runs: readonly RunInfo[], sel: Selection): SpanInfo | undefined {
  return findWorker(runs, sel)?.spans.find((s) => s.name === sel.span);
}

export function sameSelection(a: Selection | null, b: Selection | null): boolean {
  if (a === null || b === null) return a === b;
  return a.run === b.run && a.worker === b.worker && a.span === b.span;
}

/** Views whose route answers on every trace, saying why it has nothing to show: a link
 * to one opens it even where the trace does not offer it (the Modules view of a trace
 * without module calls says so, instead of a silent Overview). */
export const ANSWERS_ANY_TRACE: readonly string[] = ['modules'];

/** The view to show: the wanted one if offered and known (or known and answering on any
 * trace), else the first known offered. */
export function chooseView(
  offered: readonly string[],
  known: readonly string[],
  wanted: string | undefined,
): string | undefined {
  const usable = offered.filter((v) => known.includes(v));
  if (wanted !== undefined && usable.includes(wanted)) return wanted;
  if (wanted !== undefined && known.includes(wanted) && ANSWERS_ANY_TRACE.includes(wanted)) {
    return wanted;
  }
  return usable[0];
}

export interface Progress {
  /** 0..100, or null when the total is unknown. */
  percent: number | null;
  /** True once every byte is read and the server is analysing. */
  analysing: boolean;
}

export function loadProgress(bytesDone: number, bytesTotal: number): Progress {
  if (!(bytesTotal > 0)) return { percent: null, analysing: false };
  const percent = Math.max(0, Math.min(100, (bytesDone / bytesTotal) * 100));
  return { percent, analysing: bytesDone >= bytesTotal };
}
