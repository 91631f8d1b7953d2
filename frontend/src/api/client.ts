// One typed fetch for every route of /data/plugin/kinetoscope/: `api.get(endpoint, params)`,
// typed by the generated route map (`Routes`). Errors become ApiError with TensorBoard's error message; 202
// (still loading) is a distinct result, never an error, and `untilReady` polls through it.

import type { RouteName, Routes, StatusResponse } from './generated';
import type { NarrowedBodies } from './types';
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

/** Route name -> its query, its 200 body and its 202 body: generated from the registry
 * (`Routes` in generated.ts, docs/http_api.md), with the bodies types.ts narrows. */
export type Endpoints = {
  [E in RouteName]: {
    params: Routes[E]['params'];
    response: E extends keyof NarrowedBodies ? NarrowedBodies[E] : Routes[E]['response'];
    loading: Routes[E]['loading'];
  };
};

export type Endpoint = RouteName;

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
