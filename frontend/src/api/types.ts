// TypeScript mirror of docs/http_api.md. Keep in step with that file: every route the
// frontend calls has its response shape here.

export interface SpanInfo {
  /** "1", "2", ... ordered by time. */
  name: string;
  /** Milliseconds since the epoch, from the file name; null when unknown. */
  timestamp: number | null;
  file: string;
  size: number;
}

export interface WorkerInfo {
  name: string;
  rank: number | null;
  spans: SpanInfo[];
}

export interface RunInfo {
  /** Path relative to the logdir; "." for the logdir itself. */
  name: string;
  workers: WorkerInfo[];
  /** Run-level views, e.g. ["distributed"] when the run has two or more workers. */
  views?: string[];
}

export interface RunsResponse {
  runs: RunInfo[];
}

export interface WorkersResponse {
  run: string;
  workers: WorkerInfo[];
}

export interface SpansResponse {
  run: string;
  worker: string;
  spans: SpanInfo[];
}

export type LoadState = 'loading' | 'ready' | 'error';

export interface LoadError {
  kind: string;
  message: string;
  file: string | null;
  offset: number | null;
}

export interface StatusResponse {
  run: string;
  worker: string;
  span: string;
  state: LoadState;
  bytes_done: number;
  bytes_total: number;
  partial: boolean;
  warnings: string[];
  error: LoadError | null;
  /** Views the data supports; only filled when ready. */
  views: string[];
  event_count: number;
}

export const CATEGORIES = [
  'kernel',
  'memcpy',
  'memset',
  'communication',
  'runtime',
  'dataloader',
  'cpu_exec',
  'other',
] as const;

export type Category = (typeof CATEGORIES)[number];

export type Breakdown = Record<Category, number>;

export interface Step {
  name: string;
  number: number | null;
  start_us: number;
  end_us: number;
  duration_us: number;
  breakdown_us: Breakdown;
}

/** An incomplete step left out of the Overview; `reason` says why. */
export interface DroppedStep {
  name?: string;
  reason?: string;
  [key: string]: unknown;
}

export interface Device {
  id: number;
  name: string | null;
  memory_bytes: number | null;
  compute_capability: string | null;
  utilization_pct: number | null;
  sm_efficiency_pct: number | null;
  achieved_occupancy_pct: number | null;
  tensor_core_pct: number | null;
  kernel_time_us: number | null;
}

export interface RecommendationEvidence {
  metric?: string;
  value?: number | null;
  threshold?: number | null;
  steps?: string[];
  time_us?: number | null;
  [key: string]: unknown;
}

export interface RecommendationLink {
  view: string;
  anchor?: string | null;
}

export type Severity = 'info' | 'warning' | 'critical' | (string & {});

export interface Recommendation {
  id: string;
  severity: Severity;
  title: string;
  message: string;
  evidence: RecommendationEvidence | null;
  link: RecommendationLink | null;
  docs_url: string | null;
}

export interface OverviewResponse {
  steps: Step[];
  breakdown_us: Breakdown;
  step_count: number;
  average_step_us: number;
  average_breakdown_us: Breakdown;
  steps_source: string;
  dropped_steps: DroppedStep[];
  device_type: 'GPU' | 'CPU' | (string & {});
  devices: Device[];
  recommendations: Recommendation[];
}

/** Query parameters naming one worker-span. */
export interface SpanKey {
  run: string;
  worker: string;
  span: string;
}
