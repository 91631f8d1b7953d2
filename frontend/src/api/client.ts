// One typed fetch for every route of /data/plugin/kinetoscope/: `api.get(endpoint, params)`,
// typed by the Endpoints map. Errors become ApiError with TensorBoard's error message; 202
// (still loading) is a distinct result, never an error, and `untilReady` polls through it.

import type {
  CallStacksParams,
  CallStacksResponse,
  DiffParams,
  DiffView,
  DistributedLoading,
  DistributedResponse,
  EventResponse,
  FlameGraphParams,
  FlameGraphView,
  FlowsResponse,
  GpuIdleView,
  HealthView,
  KernelsParams,
  KernelsResponse,
  MemoryCurveParams,
  MemoryCurveResponse,
  MemoryEventsParams,
  MemoryEventsResponse,
  MemoryParams,
  MemoryResponse,
  MemorySnapshotResponse,
  ModulesView,
  OperatorGroupBy,
  OperatorsResponse,
  OverviewResponse,
  RangeSummaryResponse,
  RunsResponse,
  SearchResponse,
  SpanKey,
  SpansResponse,
  StatusResponse,
  TracksResponse,
  TrendLoading,
  TrendParams,
  TrendView,
  WindowResponse,
  WorkersResponse,
} from './types';
import { sleep } from './poll';

export class ApiError extends Error {
  readonly status: number;
  readonly route: string;

  constructor(route: string, status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.route = route;
    this.status = status;
  }
}

/** Thrown by a view whose route answered 202: the shell goes back to polling `status`. */
export class ViewNotReady extends Error {
  constructor() {
    super('the trace is still loading');
    this.name = 'ViewNotReady';
  }
}

export type Params = Record<string, string | number | undefined>;

/** Builds `<base><route>?a=b` with the parameters sorted for stable URLs. */
export function buildUrl(base: string, route: string, params: Params = {}): string {
  const url = new URL(route, base);
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** Pulls the message out of TensorBoard's `{"error": {"message": ...}}` body. */
export function errorMessage(body: unknown, fallback: string): string {
  if (typeof body === 'object' && body !== null && 'error' in body) {
    const err = body.error;
    if (typeof err === 'string') return err;
    if (typeof err === 'object' && err !== null && 'message' in err) {
      const message = err.message;
      if (typeof message === 'string' && message) return message;
    }
  }
  return fallback;
}

/** A trace-view route's parameters: run, span and `worker` (file times) or `workers`. */
type TraceViewParams = Params;

/** The other side of a diff (`target_span` missing: the worker's first span). */
export interface DiffTarget {
  target_run: string;
  target_worker: string;
  target_span?: string;
}

/** One route: what it takes, what it answers, and what its 202 body is (never: no 202). */
interface Route<P, R, L = never> {
  params: P;
  response: R;
  loading: L;
}

/** Endpoint name -> its parameters and answers (docs/http_api.md). */
export interface Endpoints {
  runs: Route<Record<string, never>, RunsResponse>;
  workers: Route<{ run: string }, WorkersResponse>;
  spans: Route<{ run: string; worker: string }, SpansResponse>;
  status: Route<SpanKey, StatusResponse>;
  overview: Route<SpanKey, OverviewResponse, StatusResponse>;
  operators: Route<SpanKey & { group_by: OperatorGroupBy }, OperatorsResponse, StatusResponse>;
  callstacks: Route<SpanKey & CallStacksParams, CallStacksResponse, StatusResponse>;
  kernels: Route<SpanKey & KernelsParams, KernelsResponse, StatusResponse>;
  modules: Route<SpanKey, ModulesView, StatusResponse>;
  flamegraph: Route<SpanKey & FlameGraphParams, FlameGraphView, StatusResponse>;
  gpu_idle: Route<SpanKey, GpuIdleView, StatusResponse>;
  health: Route<SpanKey, HealthView, StatusResponse>;
  memory: Route<SpanKey & MemoryParams, MemoryResponse, StatusResponse>;
  memory_curve: Route<SpanKey & MemoryCurveParams, MemoryCurveResponse, StatusResponse>;
  memory_events: Route<SpanKey & MemoryEventsParams, MemoryEventsResponse, StatusResponse>;
  /** Two worker-spans: the key is the base, `target_*` the target; 202 while either loads. */
  diff: Route<SpanKey & DiffTarget & DiffParams, DiffView, StatusResponse>;
  /** Run-level: every worker of the run is one rank; `span` defaults to "1". */
  distributed: Route<{ run: string; span?: string }, DistributedResponse, DistributedLoading>;
  /** Run-level: the run folder's memory snapshots, aligned with the first worker's `span`. */
  memory_snapshot: Route<
    { run: string; span?: string },
    MemorySnapshotResponse,
    DistributedLoading
  >;
  /** Logdir-level: every run's traces summarised (202 with the files done). */
  trend: Route<TrendParams, TrendView, TrendLoading>;
  tracks: Route<TraceViewParams, TracksResponse, StatusResponse>;
  trace: Route<TraceViewParams, WindowResponse, StatusResponse>;
  event: Route<TraceViewParams, EventResponse, StatusResponse>;
  flows: Route<TraceViewParams, FlowsResponse, StatusResponse>;
  search: Route<TraceViewParams, SearchResponse, StatusResponse>;
  range_summary: Route<TraceViewParams, RangeSummaryResponse, StatusResponse>;
}

export type Endpoint = keyof Endpoints;

/** A route answered 202: the server is still loading; `status` is its 202 body. */
export interface StillLoading<L = StatusResponse> {
  loading: true;
  status: L;
}

/** What `get` resolves to: the data, or StillLoading for a route that can answer 202. */
export type Answer<E extends Endpoint> =
  | Endpoints[E]['response']
  | ([Endpoints[E]['loading']] extends [never] ? never : StillLoading<Endpoints[E]['loading']>);

export class ApiClient {
  /** Absolute URL ending in "/", e.g. http://host/data/plugin/kinetoscope/ */
  readonly base: string;

  constructor(base: string) {
    this.base = base.endsWith('/') ? base : `${base}/`;
  }

  url(route: string, params?: Params): string {
    return buildUrl(this.base, route, params);
  }

  /** One route of the plugin: its data, or StillLoading when it answers 202. */
  async get<E extends Endpoint>(
    endpoint: E,
    params: Endpoints[E]['params'],
    signal?: AbortSignal,
  ): Promise<Answer<E>> {
    const init: RequestInit = { headers: { Accept: 'application/json' } };
    if (signal) init.signal = signal;
    const response = await fetch(this.url(endpoint, { ...params }), init);
    const text = await response.text();
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        body = text;
      }
    }
    if (!response.ok) {
      const fallback = `${endpoint}: HTTP ${response.status} ${response.statusText}`.trim();
      throw new ApiError(endpoint, response.status, errorMessage(body, fallback));
    }
    if (response.status === 202) return { loading: true, status: body } as Answer<E>;
    return body as Answer<E>;
  }

  /** `get`, asked again while the route answers 202 (see untilReady): the data. */
  getReady<E extends Endpoint>(
    endpoint: E,
    params: Endpoints[E]['params'],
    signal: AbortSignal,
    onWaiting?: (progress: Endpoints[E]['loading']) => void,
  ): Promise<Endpoints[E]['response']> {
    type Polled = Endpoints[E]['response'] | StillLoading<Endpoints[E]['loading']>;
    return untilReady(
      () => this.get(endpoint, params, signal) as Promise<Polled>,
      signal,
      onWaiting,
    );
  }
}

/**
 * Asks `fetchOnce` again every `intervalMs` while it answers 202 (StillLoading), telling
 * `onWaiting` each 202 body; resolves with the data. Aborts with `signal`.
 */
export async function untilReady<T, L>(
  fetchOnce: () => Promise<T | StillLoading<L>>,
  signal: AbortSignal,
  onWaiting?: (progress: L) => void,
  intervalMs = POLL_MS,
): Promise<T> {
  for (;;) {
    const result = await fetchOnce();
    if (!isStillLoading(result)) return result;
    onWaiting?.(result.status);
    await sleep(intervalMs, signal);
  }
}

/** How often a 202 is asked again. */
export const POLL_MS = 500;

export function isStillLoading<L>(value: unknown): value is StillLoading<L> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Partial<StillLoading<L>>).loading === true
  );
}

/** The message of anything thrown. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}
