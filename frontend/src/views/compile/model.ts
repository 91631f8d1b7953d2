// Pure helpers of the Compile page: the compile timeline's lanes and boxes (each rank's
// forward and backward compiles over time, kind by kind), the steps that compiled as
// bands, axis ticks, and the labels of stages, caches and places. Unit-tested in
// model.test.ts.

import type {
  Compile,
  CompileCache,
  CompileResponse,
  CompileStages,
  SourceLine,
} from '../../api/types';
import { formatDuration } from '../../components/format';

export type BoxKind = 'first' | 'recompile' | 'failed' | 'backward';

export interface TimelineBox {
  lane: number;
  /** 0: the forward (frame) compile; 1: the backward compile. */
  row: 0 | 1;
  /** Seconds from the timeline's start. */
  start: number;
  end: number;
  kind: BoxKind;
  compileId: string;
  label: string;
  title: string;
}

export interface StepBand {
  lane: number;
  start: number;
  end: number;
  label: string;
  title: string;
}

export interface TimelineModel {
  lanes: string[];
  boxes: TimelineBox[];
  bands: StepBand[];
  /** Epoch µs of the axis' 0. */
  originUs: number;
  /** Seconds the axis spans. */
  span: number;
}

/** A lane per rank; where logs state no rank, per worker (its trace), else per log. */
export function laneKey(c: Pick<Compile, 'rank' | 'log' | 'worker'>): string {
  if (c.rank !== null) return `rank ${c.rank}`;
  return c.worker ?? c.log.split('/').pop() ?? c.log;
}

export function boxKind(c: Compile): BoxKind {
  if (c.status === 'failed') return 'failed';
  return c.reason !== null || isRecompileId(c.compile_id) ? 'recompile' : 'first';
}

/** "0/2": frame 0's third compile, a recompile; "3/0" is a frame's first. */
export function isRecompileId(id: string): boolean {
  const tail = id.split('/').pop() ?? '';
  const n = Number(tail.split('_')[0]);
  return id.includes('/') && Number.isInteger(n) && n > 0;
}

export function timelineModel(view: CompileResponse): TimelineModel | null {
  const timed = view.compiles.filter((c) => c.start_us !== null && c.dur_us !== null);
  if (timed.length === 0) return null;
  const ends = timed.map((c) => (c.start_us ?? 0) + (c.dur_us ?? 0));
  for (const c of timed) {
    const b = c.backward;
    if (b?.start_us != null && b.dur_us != null) ends.push(b.start_us + b.dur_us);
  }
  const originUs = Math.min(...timed.map((c) => c.start_us ?? 0));
  const lanes = [...new Set(view.compiles.map(laneKey))];
  const at = (us: number): number => (us - originUs) / 1e6;
  const boxes: TimelineBox[] = [];
  for (const c of timed) {
    const lane = lanes.indexOf(laneKey(c));
    const start = c.start_us ?? 0;
    const where = placeText(c.frame, c.file, c.line);
    const title = `${c.compile_id} ${where}: ${formatDuration(c.dur_us)}${c.reason ? ` — ${c.reason}` : ''}`;
    boxes.push({
      lane,
      row: 0,
      start: at(start),
      end: at(start + (c.dur_us ?? 0)),
      kind: boxKind(c),
      compileId: c.compile_id,
      label: c.compile_id,
      title,
    });
    const b = c.backward;
    if (b?.start_us != null && b.dur_us != null) {
      boxes.push({
        lane,
        row: 1,
        start: at(b.start_us),
        end: at(b.start_us + b.dur_us),
        kind: 'backward',
        compileId: c.compile_id,
        label: `${c.compile_id} bwd`,
        title: `${c.compile_id} backward: ${formatDuration(b.dur_us)}`,
      });
    }
  }
  const bands = view.steps.map((s) => ({
    lane: lanes.indexOf(laneOfWorker(view, s.worker)),
    start: at(s.start_us),
    end: at(s.start_us + s.step_us),
    label: s.step === null ? s.name : `step ${s.step}`,
    title: s.text,
  }));
  const span = Math.max(...ends.map(at), ...bands.map((b) => b.end), 1e-6);
  return { lanes, boxes, bands, originUs, span };
}

/** The lane of the compiles placed on a worker's trace. */
function laneOfWorker(view: CompileResponse, worker: string): string {
  const c = view.compiles.find((x) => x.worker === worker);
  return c ? laneKey(c) : '';
}

/** Round ticks over [0, span] seconds: about `count` of them, at 1-2-5 steps. */
export function ticks(span: number, count = 6): number[] {
  if (!(span > 0)) return [0];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let t = 0; t <= span + step * 1e-9; t += step) out.push(Number(t.toFixed(9)));
  return out;
}

export function tickLabel(seconds: number): string {
  return seconds === 0 ? '0' : formatDuration(seconds * 1e6);
}

/** "model.py:5" (the file's name and the line), "?" when the log names no file. */
export function fileLine(file: string | null, line: number | null): string {
  const base = file ? (file.split(/[\\/]/).pop() ?? file) : null;
  return base && line !== null ? `${base}:${line}` : (base ?? '?');
}

/** "forward (model.py:5)" */
export function placeText(frame: string | null, file: string | null, line: number | null): string {
  return `${frame ?? '?'} (${fileLine(file, line)})`;
}

export function sourceText(s: SourceLine | null): string {
  return s ? placeText(s.name, s.file, s.line) : '—';
}

export const STAGE_LABELS: Readonly<Record<keyof CompileStages, string>> = {
  dynamo_us: 'Dynamo',
  aot_autograd_us: 'AOTAutograd',
  inductor_us: 'Inductor',
  code_gen_us: 'Code gen',
};

/** Each known stage's share of the stages' sum, in page order (null stages left out). */
export function stageParts(
  stages: CompileStages,
): { key: keyof CompileStages; label: string; us: number; share: number }[] {
  const keys = Object.keys(STAGE_LABELS) as (keyof CompileStages)[];
  const known = keys
    .map((key) => ({ key, us: stages[key] }))
    .filter((s): s is { key: keyof CompileStages; us: number } => s.us !== null);
  const total = known.reduce((sum, s) => sum + s.us, 0);
  return known.map((s) => ({
    ...s,
    label: STAGE_LABELS[s.key],
    share: total > 0 ? s.us / total : 0,
  }));
}

/** "hit (FX 2, AOT 1)", "miss (FX 1)", "—" */
export function cacheText(cache: CompileCache): string {
  if (cache.state === null) return '—';
  const parts: string[] = [];
  const fx = cache.state === 'miss' ? cache.inductor_misses : cache.inductor_hits;
  const aot = cache.state === 'miss' ? cache.aot_misses : cache.aot_hits;
  if (fx) parts.push(`FX ${fx}`);
  if (aot) parts.push(`AOT ${aot}`);
  return parts.length ? `${cache.state} (${parts.join(', ')})` : cache.state;
}

/** The counts the page's tiles show. */
export function totals(view: CompileResponse): {
  compiles: number;
  recompiles: number;
  breaks: number;
  failures: number;
} {
  return {
    compiles: view.compiles.length,
    recompiles: view.recompiles.length,
    breaks: view.graph_breaks.length,
    failures: view.failures.length,
  };
}
