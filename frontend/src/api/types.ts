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
  /** The one display name of the device ("GPU 0 · NVIDIA H100 80GB HBM3"), as on every page. */
  label: string;
  /** "nvidia", "amd", "mtia" or "unknown". */
  vendor: string;
  name: string | null;
  memory_bytes: number | null;
  compute_capability: string | null;
  utilization_pct: number | null;
  sm_efficiency_pct: number | null;
  achieved_occupancy_pct: number | null;
  /** Matrix-core (tensor core / MFMA) time over the kernel time whose use is known. */
  tensor_core_pct: number | null;
  /** Share of kernel time whose matrix-core use the kernel taxonomy cannot tell. */
  matrix_core_unknown_pct: number | null;
  /** "Tensor Cores" (NVIDIA), "Matrix cores (MFMA)" (AMD) or "Matrix cores". */
  matrix_core_name: string;
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

// ----- operators, callstacks, kernels -----

export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type OperatorGroupBy = 'name' | 'shape';

/** Statistics of a set of operator calls: an `operators` row or one call stack. */
export interface OperatorStats {
  calls: number;
  host_self_us: number;
  host_total_us: number;
  device_self_us: number;
  device_total_us: number;
  host_self_avg_us: number;
  host_total_avg_us: number;
  device_self_avg_us: number;
  device_total_avg_us: number;
  /** The op (or a descendant) is conv/matmul-family or launched a tensor-core kernel. */
  tensor_core_eligible: boolean;
  tensor_core_self_us: number;
  tensor_core_total_us: number;
}

export interface OperatorRow extends OperatorStats {
  name: string;
  has_call_stack: boolean;
  /** Only with group_by=shape: the `Input Dims` arg, null when the op recorded none. */
  input_shape?: JsonValue;
}

export type CallStackSource = 'call_stack_arg' | 'python_function' | (string & {});

export interface OperatorsResponse {
  group_by: OperatorGroupBy | (string & {});
  rows: OperatorRow[];
  op_count: number;
  host_self_us: number;
  device_self_us: number;
  call_stack_source: CallStackSource | null;
  /** Set when the trace has no GPU kernels (then `status.views` lacks "kernels"). */
  kernel_view_absent_reason: string | null;
}

/** One frame of a call stack; file and line are null for frames without a position. */
export interface StackFrame {
  file: string | null;
  line: number | null;
  function: string;
}

export interface CallStackRow extends OperatorStats {
  /** Innermost first: frames[0] called the op. [] for calls without a recorded stack. */
  frames: StackFrame[];
}

export interface CallStacksResponse {
  name: string;
  input_shape: JsonValue;
  source: CallStackSource | null;
  calls: number;
  stacks: CallStackRow[];
}

/** Query parameters of `callstacks` (besides the worker-span). */
export interface CallStacksParams {
  name: string;
  /** The JSON of a `shape` row's input_shape ("null" for ops without one). */
  input_shape?: string | undefined;
}

export type KernelGroupBy = 'name' | 'op';

export interface KernelRow {
  name: string;
  device: number | null;
  stream: number | null;
  /** Only with group_by=op: the launching op, null when no op launched it. */
  op_name?: string | null;
  calls: number;
  total_us: number;
  mean_us: number;
  min_us: number;
  max_us: number;
  blocks_per_sm: number | null;
  occupancy_pct: number | null;
  registers_per_thread: number | null;
  shared_memory: number | null;
  grid: number[] | null;
  block: number[] | null;
  /** null: the kernel taxonomy cannot tell (shown as unknown, never as "No"). */
  tensor_cores_used: boolean | null;
  op_tensor_core_eligible: boolean;
  /** "communication", "gemm", "attention", "conv" or "other". */
  work: string;
}

export interface KernelsResponse {
  group_by: KernelGroupBy | (string & {});
  device: number | null;
  stream: number | null;
  rows: KernelRow[];
  kernel_count: number;
  total_us: number;
  tensor_core_time_us: number;
  non_tensor_core_time_us: number;
  tensor_core_pct: number | null;
  tensor_core_unknown_time_us: number;
  matrix_core_name: string;
  /** Every device and stream of the trace, unfiltered. */
  devices: number[];
  streams: number[];
}

/** Query parameters of `kernels` (besides the worker-span). */
export interface KernelsParams {
  group_by?: KernelGroupBy | undefined;
  device?: number | undefined;
  stream?: number | undefined;
}

// ----- memory, memory_curve, memory_events -----

/** The op running when a memory event happened (the peak's), with its context. */
export interface MemoryOpRef {
  name: string;
  start_us: number;
  duration_us: number;
  /** Enclosing CPU ops, outermost first, ending with `name`. */
  ops: string[];
  /** Python frames, outermost first ([] when the trace has none). */
  stack: string[];
  stack_source: 'call_stack' | 'python_function' | null | (string & {});
}

export interface MemoryDevice {
  /** "CPU", "GPU0", "MTIA0", ...: the key requests name the device by. */
  device: string;
  /** Its display name, the same as on the Overview and the trace counters
   * ("GPU 0 · NVIDIA H100 80GB HBM3"). */
  label: string;
  device_type: number;
  device_id: number;
  /** Memory events in the range. */
  events: number;
  /** "trace": Total Allocated; "computed": running sum of Bytes (a lower bound). */
  allocated_source: 'trace' | 'computed' | (string & {});
  reserved_known: boolean;
  total_memory_bytes: number | null;
  peak_allocated_bytes: number;
  /** May precede the range start: the level the range starts at counts. */
  peak_allocated_us: number | null;
  peak_op: MemoryOpRef | null;
  peak_reserved_bytes: number | null;
  peak_reserved_us: number | null;
  start_allocated_bytes: number;
  end_allocated_bytes: number;
}

export type AllocationState = 'paired' | 'never_freed' | 'freed_unseen';

export interface AllocationRow {
  device: string;
  state: AllocationState | (string & {});
  size_bytes: number;
  alloc_us: number | null;
  free_us: number | null;
  duration_us: number | null;
  /** The op that allocated (for freed_unseen: that freed). */
  op: string | null;
  parent_op: string | null;
  free_op: string | null;
}

export interface MemoryOperatorRow {
  device: string;
  name: string;
  calls: number;
  allocation_count: number;
  allocation_bytes: number;
  release_count: number;
  release_bytes: number;
  increase_bytes: number;
  self_allocation_count: number;
  self_allocation_bytes: number;
  self_release_count: number;
  self_release_bytes: number;
  self_increase_bytes: number;
}

export interface MemoryResponse {
  /** The first event of the trace (any kind): times are shown relative to it. */
  trace_start_us: number;
  /** The device the tables cover; null: every device. */
  device: string | null;
  default_device: string | null;
  start_us: number | null;
  end_us: number | null;
  devices: MemoryDevice[];
  allocations: number;
  never_freed: number;
  freed_unseen: number;
  no_address_events: number;
  unattributed_events: number;
  allocation_table: { rows: AllocationRow[]; total_rows: number; truncated: boolean };
  operator_stats: MemoryOperatorRow[];
  notes: string[];
}

export interface MemoryCurveResponse {
  trace_start_us: number;
  device: string;
  start_us: number | null;
  end_us: number | null;
  width: number;
  /** Points of the full step curve in the range. */
  points: number;
  downsampled: boolean;
  /** A step curve: each value holds from its time until the next. */
  t_us: number[];
  allocated_bytes: number[];
  reserved_bytes: number[] | null;
  peak_allocated_bytes: number;
  peak_reserved_bytes: number | null;
}

export type MemoryEventsSort = 'size' | 'alloc' | 'free' | 'duration';

export interface MemoryEventsResponse {
  device: string | null;
  start_us: number | null;
  end_us: number | null;
  sort: MemoryEventsSort;
  offset: number;
  limit: number;
  total_rows: number;
  rows: AllocationRow[];
}

/** Query parameters of `memory` (besides the worker-span). */
export interface MemoryParams {
  device?: string | undefined;
  start_us?: number | undefined;
  end_us?: number | undefined;
}

export interface MemoryCurveParams extends MemoryParams {
  /** The chart's pixel width, 1-20000. */
  width?: number | undefined;
}

export interface MemoryEventsParams extends MemoryParams {
  sort?: MemoryEventsSort | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

// ----- distributed (run-level: every worker of a run is one rank) -----

/** Per collective type: job-level (all ranks) or one rank's. */
export interface CollectiveStats {
  name: string;
  calls: number;
  /** null when no call's size is known. */
  bytes: number | null;
  total_us: number;
  avg_us: number;
  sync_wait_us: number;
  transfer_us: number;
  /** GB/s over transfer time; null when bytes are unknown. */
  algbw_gbps: number | null;
  busbw_gbps: number | null;
}

/** One step of one rank; the four parts add up to duration_us. */
export interface DistributedRankStep {
  name: string;
  number: number | null;
  /** Trace time of this rank's file (as the overview's steps). */
  start_us: number;
  end_us: number;
  duration_us: number;
  computation_us: number;
  overlap_us: number;
  communication_us: number;
  other_us: number;
  dataloader_us: number;
  host_gap_us: number;
  sync_wait_us: number;
  transfer_us: number;
}

export type RankSource = 'distributedInfo' | 'file_name' | 'order' | (string & {});

export interface DistributedRank {
  rank: number;
  rank_source: RankSource;
  worker: string;
  span: string;
  file: string;
  host: string | null;
  mode: 'gpu' | 'cpu' | (string & {});
  steps_source: string;
  step_count: number;
  step_time_us: number;
  computation_us: number;
  overlap_us: number;
  communication_us: number;
  other_us: number;
  sync_wait_us: number;
  transfer_us: number;
  unmatched_collectives: number;
  collectives: CollectiveStats[];
  steps: DistributedRankStep[];
  devices: Device[];
  partial: boolean;
  warnings: string[];
}

/** The step of the late rank, to open in the trace view (times as in its file). */
export interface StepWindow {
  worker: string;
  span: string;
  start_us: number;
  end_us: number;
}

export type StragglerFactor = 'computation' | 'dataloader' | 'host_gap' | 'communication';

export interface Straggler {
  rank: number;
  worker: string;
  late_by_us: number;
  measured: 'first_collective' | 'step_end' | (string & {});
  /** 'arrived_late': it entered the step late; a named cause covers >= 50 % of late_by. */
  cause: StragglerFactor | 'arrived_late' | 'unknown' | (string & {});
  cause_excess_us: number;
  /** Share of late_by the cause accounts for; 0 when unknown. */
  cause_share_pct: number;
  /** Part of late_by already there when its step started (later than the others'). */
  arrived_late_us: number;
  /** It entered its first profiled step late: why is not in the trace. */
  entry_before_window: boolean;
  in_step_late_us: number;
  explained_us: number;
  unexplained_us: number;
  /** The late rank's value minus the median of the other ranks, per factor. */
  excess_us: Partial<Record<StragglerFactor, number>>;
  window: StepWindow;
}

export interface DistributedStep {
  name: string;
  number: number | null;
  /** Ranks that have this step. */
  ranks: number;
  median_duration_us: number;
  max_duration_us: number;
  /** null when fewer than two ranks have the step. */
  straggler: Straggler | null;
}

export interface StragglerCount {
  rank: number;
  worker: string;
  steps_late: number;
  late_by_us: number;
}

export interface ProcessGroupInfo {
  name: string;
  description: string | null;
  backend_config: string | null;
  size: number | null;
  ranks: number[] | null;
}

/** A rank whose file could not be summarized (the `status` error fields). */
export interface DistributedRankError {
  worker: string;
  span: string;
  kind?: string;
  message?: string;
  file?: string | null;
  offset?: number | null;
}

export interface DistributedResponse {
  run: string;
  span: string;
  state: 'ready';
  world_size: number | null;
  backend: string | null;
  process_groups: ProcessGroupInfo[];
  mode: 'gpu' | 'cpu' | 'mixed' | 'none' | (string & {});
  ranks_found: number;
  ranks: DistributedRank[];
  collectives: CollectiveStats[];
  steps: DistributedStep[];
  stragglers: StragglerCount[];
  /** The job's communication advice (sync wait vs transfer decides which). */
  recommendations: Recommendation[];
  warnings: string[];
  errors: DistributedRankError[];
}

/** `distributed` answers 202 with this while the per-rank summaries are computed. */
export interface DistributedLoading {
  run: string;
  span: string;
  state: 'loading';
  ranks_done: number;
  ranks_total: number;
}

// ----- trace view (timeline routes; all take run, span and worker=W or workers=W1,W2) -----

export type TimelineTrackKind = 'cpu' | 'gpu' | 'python' | 'other' | 'counter' | (string & {});

export interface TimelineCounterInfo {
  metric: 'gpu_utilization' | 'memory_allocated' | 'memory_reserved' | (string & {});
  unit: 'fraction' | 'bytes' | (string & {});
  max: number;
}

export interface TimelineTrack {
  id: string;
  worker: string | null;
  kind: TimelineTrackKind;
  label: string;
  process: string;
  pid: string | null;
  tid: string | null;
  device: number | null;
  stream: number | null;
  sort: number;
  max_depth: number;
  event_count: number;
  counter: TimelineCounterInfo | null;
}

export interface TimelineWorkerInfo {
  worker: string | null;
  rank: number | null;
  offset_us: number;
  start_us: number;
  end_us: number;
  index_seconds: number;
}

export interface TimelineStep {
  worker: string | null;
  name: string;
  start_us: number;
  end_us: number;
}

export interface TracksResponse {
  time_base: 'file' | 'epoch' | (string & {});
  start_us: number;
  end_us: number;
  workers: TimelineWorkerInfo[];
  tracks: TimelineTrack[];
  steps: TimelineStep[];
}

/** Bits of `flags` of exact events. */
export const EVENT_FLAG = { instant: 1, linked: 2, startsBefore: 4, endsAfter: 8 } as const;

export interface WindowEvents {
  row: number[];
  /** Index into the response's `names`. */
  name: number[];
  start: number[];
  dur: number[];
  depth: number[];
  flags: number[];
}

/** Events shorter than `exact_min_us`, merged per depth: extent, count, busy time, the
 * name with the most busy time; `row`: the event when the block holds one (instants always
 * come this way), else -1. */
export interface WindowBlocks {
  row?: number[];
  depth: number[];
  start: number[];
  end: number[];
  count: number[];
  busy: number[];
  name: number[];
}

/** A step function: `value[i]` holds from `start[i]` until the next start. */
export interface CounterSeries {
  start: number[];
  value: number[];
}

export interface TrackWindow {
  id: string;
  worker: string | null;
  events: WindowEvents | null;
  blocks: WindowBlocks | null;
  counter: CounterSeries | null;
}

export interface WindowResponse {
  time_base: string;
  t0: number;
  t1: number;
  width: number;
  min_px: number;
  us_per_px: number;
  exact_min_us: number;
  bucket_us: number;
  tracks: TrackWindow[];
  names: string[];
  item_count: number;
  truncated: boolean;
}

export interface WindowParams {
  tracks?: string;
  t0?: number;
  t1?: number;
  width?: number;
  min_px?: number;
  max_items?: number;
}

export interface TraceFrameRef {
  name: string;
  row: number | null;
}

export type LinkRelation =
  | 'gpu_activity'
  | 'launcher'
  | 'cpu_op'
  | 'backward'
  | 'forward'
  | 'flow_out'
  | 'flow_in'
  | (string & {});

export interface EventLink {
  relation: LinkRelation;
  category: string;
  row: number;
  name: string;
  ts: number;
  dur: number;
  track: string | null;
}

export interface EventResponse {
  row: number;
  name: string;
  category: string;
  kind: string;
  phase: string;
  ts: number;
  dur: number;
  pid: string;
  tid: string;
  process: string;
  thread: string;
  track: string | null;
  depth: number | null;
  args: Record<string, unknown>;
  input_shapes: unknown[] | null;
  /** Innermost frame first. */
  call_stack: TraceFrameRef[];
  call_stack_source: 'args' | 'python' | null | (string & {});
  /** Outermost first. */
  ancestors: TraceFrameRef[];
  flows: EventLink[];
}

export interface FlowColumns {
  category: string[];
  id: number[];
  src_track: string[];
  src_ts: number[];
  src_row: number[];
  src_depth: number[];
  dst_track: string[];
  dst_ts: number[];
  dst_row: number[];
  dst_depth: number[];
}

export interface FlowsResponse {
  t0: number;
  t1: number;
  flows: FlowColumns;
  count: number;
  truncated: boolean;
}

export interface SearchResponse {
  query: string;
  names: { name: string; count: number }[];
  hits: {
    row: number[];
    ts: number[];
    dur: number[];
    track: string[];
    depth: number[];
    /** Index into `names`. */
    name: number[];
  };
  total: number;
  truncated: boolean;
}

export interface RangeSummaryRow {
  name: string;
  count: number;
  total_us: number;
  self_us: number;
}

export interface RangeSummaryResponse {
  t0: number;
  t1: number;
  rows: RangeSummaryRow[];
  event_count: number;
  truncated: boolean;
}
