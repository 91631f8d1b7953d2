// The Diff page's state in the URL. The target (the other side) is
// p.kinetoscope.target_{run,worker,span}: the shell's "Compare with…" control writes it and
// offers the page while it is set; the base is the shell's own run/worker/span. The page's
// own keys (p.kinetoscope.diff.*): the operators' grouping, and per table its status
// filter, search and sort.

import type { HashParams, HashUpdate } from '../../components/hash_params';
import {
  formatSort,
  parseSort,
  pick,
  unlessDefault,
  type SortSpec,
} from '../../components/url_values';
import { STATUSES, type StatusFilter } from './model';

export const TARGET_KEYS = ['target_run', 'target_worker', 'target_span'] as const;

export interface Target {
  run: string;
  worker: string;
  /** Missing: the worker's first span. */
  span?: string;
}

/** The target named by the URL, or null when none is chosen. */
export function readTarget(p: HashParams): Target | null {
  const run = p.target_run;
  const worker = p.target_worker;
  if (!run || !worker) return null;
  return p.target_span ? { run, worker, span: p.target_span } : { run, worker };
}

/** The URL keys of a target; null removes them. */
export function targetUpdate(target: Target | null): HashUpdate {
  return {
    target_run: target?.run,
    target_worker: target?.worker,
    target_span: target?.span,
  };
}

/** The value of "no target" in a list of targets. */
export const NO_TARGET = '';

/** A target as the value of an option in a list of targets. */
export function targetOption(t: Target): string {
  return JSON.stringify([t.run, t.worker, t.span ?? '']);
}

/** The target an option's value stands for, or null for "no target". */
export function targetFromOption(value: string): Target | null {
  if (value === NO_TARGET) return null;
  const parsed: unknown = JSON.parse(value);
  if (!Array.isArray(parsed) || parsed.length !== 3) return null;
  const [run, worker, span] = parsed.map(String) as [string, string, string];
  return span ? { run, worker, span } : { run, worker };
}

export const GROUP_BYS = ['name', 'shape'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];

/** One table's look: which rows (status, search) and their order. */
export interface TableState {
  status: StatusFilter;
  search: string;
  sort: SortSpec | undefined;
}

export interface State {
  groupBy: GroupBy;
  operators: TableState;
  kernels: TableState;
}

export type TableName = 'operators' | 'kernels';

const key = (table: TableName, what: string): string => `diff.${table}.${what}`;

export const STATE_KEYS = [
  'diff.group_by',
  ...(['operators', 'kernels'] as const).flatMap((t) =>
    ['status', 'search', 'sort'].map((w) => key(t, w)),
  ),
];

function readTable(p: HashParams, table: TableName, sortKeys: readonly string[]): TableState {
  return {
    status: pick(p[key(table, 'status')], STATUSES, 'all'),
    search: p[key(table, 'search')] ?? '',
    sort: parseSort(p[key(table, 'sort')], sortKeys),
  };
}

export function readState(
  p: HashParams,
  sortKeys: { operators: readonly string[]; kernels: readonly string[] },
): State {
  return {
    groupBy: pick(p['diff.group_by'], GROUP_BYS, 'name'),
    operators: readTable(p, 'operators', sortKeys.operators),
    kernels: readTable(p, 'kernels', sortKeys.kernels),
  };
}

export function stateUpdate(s: State): HashUpdate {
  const update: HashUpdate = { 'diff.group_by': unlessDefault(s.groupBy, 'name') };
  for (const table of ['operators', 'kernels'] as const) {
    const t = s[table];
    update[key(table, 'status')] = unlessDefault(t.status, 'all');
    update[key(table, 'search')] = t.search.trim() || undefined;
    update[key(table, 'sort')] = formatSort(t.sort);
  }
  return update;
}
