// One fetch helper for every route of /data/plugin/kinetoscope/. Errors become ApiError
// with TensorBoard's error message; 202 (still loading) is a distinct result, never an error.

import type {
  CallStacksParams,
  CallStacksResponse,
  DistributedLoading,
  DistributedResponse,
  KernelsParams,
  KernelsResponse,
  MemoryCurveParams,
  MemoryCurveResponse,
  MemoryEventsParams,
  MemoryEventsResponse,
  MemoryParams,
  MemoryResponse,
  OperatorGroupBy,
  OperatorsResponse,
  OverviewResponse,
  RunsResponse,
  SpanKey,
  SpansResponse,
  StatusResponse,
  WorkersResponse,
} from './types';

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

/** A view route answered 202: the worker-span is still loading. */
export interface StillLoading {
  loading: true;
  status: StatusResponse;
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

export class ApiClient {
  /** Absolute URL ending in "/", e.g. http://host/data/plugin/kinetoscope/ */
  readonly base: string;

  constructor(base: string) {
    this.base = base.endsWith('/') ? base : `${base}/`;
  }

  url(route: string, params?: Params): string {
    return buildUrl(this.base, route, params);
  }

  private async request(
    route: string,
    params: Params,
    signal?: AbortSignal,
  ): Promise<{ status: number; body: unknown }> {
    const init: RequestInit = { headers: { Accept: 'application/json' } };
    if (signal) init.signal = signal;
    const response = await fetch(this.url(route, params), init);
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
      const fallback = `${route}: HTTP ${response.status} ${response.statusText}`.trim();
      throw new ApiError(route, response.status, errorMessage(body, fallback));
    }
    return { status: response.status, body };
  }

  async getJson<T>(route: string, params: Params = {}, signal?: AbortSignal): Promise<T> {
    const { body } = await this.request(route, params, signal);
    return body as T;
  }

  /** A view route: the data, or StillLoading when the server answers 202. */
  async getView<T>(
    route: string,
    key: SpanKey,
    signal?: AbortSignal,
    params: Params = {},
  ): Promise<T | StillLoading> {
    const { status, body } = await this.request(route, { ...params, ...key }, signal);
    if (status === 202) return { loading: true, status: body as StatusResponse };
    return body as T;
  }

  runs(signal?: AbortSignal): Promise<RunsResponse> {
    return this.getJson<RunsResponse>('runs', {}, signal);
  }

  workers(run: string, signal?: AbortSignal): Promise<WorkersResponse> {
    return this.getJson<WorkersResponse>('workers', { run }, signal);
  }

  spans(run: string, worker: string, signal?: AbortSignal): Promise<SpansResponse> {
    return this.getJson<SpansResponse>('spans', { run, worker }, signal);
  }

  status(key: SpanKey, signal?: AbortSignal): Promise<StatusResponse> {
    return this.getJson<StatusResponse>('status', { ...key }, signal);
  }

  /**
   * Run-level `distributed` (every worker of the run is one rank; `span` defaults to "1"):
   * the view, or its progress (`state: "loading"`, HTTP 202) while the server summarizes
   * the ranks — poll it again.
   */
  async distributed(
    run: string,
    span: string | undefined,
    signal?: AbortSignal,
  ): Promise<DistributedResponse | DistributedLoading> {
    const { body } = await this.request('distributed', { run, span }, signal);
    return body as DistributedResponse | DistributedLoading;
  }

  overview(key: SpanKey, signal?: AbortSignal): Promise<OverviewResponse | StillLoading> {
    return this.getView<OverviewResponse>('overview', key, signal);
  }

  operators(
    key: SpanKey,
    groupBy: OperatorGroupBy,
    signal?: AbortSignal,
  ): Promise<OperatorsResponse | StillLoading> {
    return this.getView<OperatorsResponse>('operators', key, signal, { group_by: groupBy });
  }

  callstacks(
    key: SpanKey,
    params: CallStacksParams,
    signal?: AbortSignal,
  ): Promise<CallStacksResponse | StillLoading> {
    return this.getView<CallStacksResponse>('callstacks', key, signal, { ...params });
  }

  kernels(
    key: SpanKey,
    params: KernelsParams,
    signal?: AbortSignal,
  ): Promise<KernelsResponse | StillLoading> {
    return this.getView<KernelsResponse>('kernels', key, signal, { ...params });
  }

  memory(
    key: SpanKey,
    params: MemoryParams,
    signal?: AbortSignal,
  ): Promise<MemoryResponse | StillLoading> {
    return this.getView<MemoryResponse>('memory', key, signal, { ...params });
  }

  memoryCurve(
    key: SpanKey,
    params: MemoryCurveParams,
    signal?: AbortSignal,
  ): Promise<MemoryCurveResponse | StillLoading> {
    return this.getView<MemoryCurveResponse>('memory_curve', key, signal, { ...params });
  }

  memoryEvents(
    key: SpanKey,
    params: MemoryEventsParams,
    signal?: AbortSignal,
  ): Promise<MemoryEventsResponse | StillLoading> {
    return this.getView<MemoryEventsResponse>('memory_events', key, signal, { ...params });
  }

  /**
   * A trace-view route (`tracks`, `trace`, `event`, `flows`, `search`, `range_summary`)
   * with run, span and `worker` (file times) or `workers` (epoch µs) in `params`: the
   * data, or StillLoading when a worker answers 202.
   */
  async timeline<T>(
    route: string,
    params: Params,
    signal?: AbortSignal,
  ): Promise<T | StillLoading> {
    const { status, body } = await this.request(route, params, signal);
    if (status === 202) return { loading: true, status: body as StatusResponse };
    return body as T;
  }
}

export function isStillLoading(value: unknown): value is StillLoading {
  return (
    typeof value === 'object' && value !== null && (value as Partial<StillLoading>).loading === true
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
