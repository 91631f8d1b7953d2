// Pure helpers of the trace page: request parameters, call-stack frames, link labels,
// argument values, search navigation. Unit-tested in model.test.ts.

import type { EventLink, SearchResponse, SpansScope } from '../../api/types';

/** The workers and span of a trace-view request (the routes' `spans` scope). */
export type KeyParams = SpansScope;

/** Parameters naming the workers of a request: one worker keeps the file's times. */
export function workerParams(
  run: string,
  span: string,
  workers: readonly string[],
  single: string,
): KeyParams {
  if (workers.length === 0 || (workers.length === 1 && workers[0] === single)) {
    return { run, span, worker: workers[0] ?? single };
  }
  return { run, span, workers: workers.join(',') };
}

/** Parameters for one event's own route: its worker, in the time base of the page. */
export function eventParams(
  run: string,
  span: string,
  multi: boolean,
  worker: string | null,
  single: string,
): KeyParams {
  if (!multi || worker === null) return { run, span, worker: worker ?? single };
  return { run, span, workers: worker };
}

export interface StackFrame {
  /** "path:line" when the frame names a file and line, else the frame text. */
  location: string;
  /** The function, when the frame names one. */
  func: string | null;
  /** The frame text as in the trace. */
  raw: string;
}

/** "torch/nn/modules/module.py(1743): _call_impl" → {location "…module.py:1743", func "_call_impl"}. */
export function parseFrame(text: string): StackFrame {
  const m = /^(.*?)\((\d+)\):\s*(.*)$/.exec(text.trim());
  if (m) {
    const [, path = '', line = '', func = ''] = m;
    return { location: `${path}:${line}`, func: func || null, raw: text };
  }
  return { location: text.trim(), func: null, raw: text };
}

const RELATIONS: Record<string, string> = {
  gpu_activity: 'GPU kernel',
  launcher: 'Launched by',
  cpu_op: 'CPU op',
  backward: 'Backward op',
  forward: 'Forward op',
  flow_out: 'Flow to',
  flow_in: 'Flow from',
};

/** A button label for a link: "GPU kernel", "Launched by", ... */
export function relationLabel(link: Pick<EventLink, 'relation' | 'category'>): string {
  if (link.relation === 'gpu_activity') {
    const cat = link.category.toLowerCase();
    if (cat.includes('memcpy')) return 'GPU memcpy';
    if (cat.includes('memset')) return 'GPU memset';
  }
  return RELATIONS[link.relation] ?? link.relation.replace(/_/g, ' ');
}

/** Order of link groups in the details panel. */
export function relationRank(relation: string): number {
  const order = [
    'gpu_activity',
    'launcher',
    'cpu_op',
    'backward',
    'forward',
    'flow_out',
    'flow_in',
  ];
  const i = order.indexOf(relation);
  return i < 0 ? order.length : i;
}

/** An argument value as text: strings as they are, the rest as compact JSON. */
export function formatArg(value: unknown, maxLength = 2000): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value === undefined) text = '';
  else {
    try {
      const json = JSON.stringify(value) as string | undefined; // undefined for functions
      text = json ?? typeof value;
    } catch {
      text = '(not serialisable)';
    }
  }
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

/** Input shapes as one line each: "[2, 3]", "scalar" for [] . */
export function shapeLines(shapes: readonly unknown[] | null): string[] {
  if (!shapes) return [];
  return shapes.map((s) => {
    if (Array.isArray(s)) return s.length === 0 ? 'scalar / none' : `[${s.map(String).join(', ')}]`;
    return formatArg(s);
  });
}

/** Args shown in their own sections are left out of the args table. */
export const ARGS_SHOWN_ELSEWHERE = new Set(['Call stack', 'Input Dims', 'Input dims']);

export interface SearchHit {
  row: number;
  /** Relative µs. */
  ts: number;
  dur: number;
  track: string;
  depth: number;
  name: string;
  worker: string | null;
}

/** The hits of a search response, relative to `origin`; worker from the `worker:` prefix. */
export function searchHits(resp: SearchResponse, origin: number, multi: boolean): SearchHit[] {
  const h = resp.hits;
  const out: SearchHit[] = [];
  for (let i = 0; i < h.row.length; i++) {
    const track = h.track[i] ?? '';
    const at = track.lastIndexOf(':');
    out.push({
      row: h.row[i] ?? -1,
      ts: (h.ts[i] ?? 0) - origin,
      dur: h.dur[i] ?? 0,
      track,
      depth: h.depth[i] ?? 0,
      name: resp.names[h.name[i] ?? -1]?.name ?? '',
      worker: multi && at > 0 ? track.slice(0, at) : null,
    });
  }
  return out;
}

/** Index of the first hit at or after t (wrapping to 0). */
export function firstHitFrom(hits: readonly SearchHit[], t: number): number {
  const i = hits.findIndex((hit) => hit.ts >= t);
  return i < 0 ? 0 : i;
}

/** The next (or previous) hit index, wrapping around. */
export function stepHit(index: number, count: number, dir: 1 | -1): number {
  if (count <= 0) return -1;
  if (index < 0) return dir > 0 ? 0 : count - 1;
  return (((index + dir) % count) + count) % count;
}

/** A viewport window from URL keys t0/t1 (absolute µs) when it overlaps the trace. */
export function windowFromKeys(
  keys: Record<string, string>,
  origin: number,
  end: number,
): { start: number; end: number } | null {
  const t0 = Number(keys.t0);
  const t1 = Number(keys.t1);
  if (!Number.isFinite(t0) || !Number.isFinite(t1) || !(t1 > t0)) return null;
  if (t1 <= origin || t0 >= end) return null;
  return { start: t0 - origin, end: t1 - origin };
}
