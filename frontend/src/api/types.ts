// The wire types pages use, under the names they import. The shapes come from
// ./generated.ts, which is generated from the server's Python types (the endpoint registry,
// tb_plugin/api; `python tests/gen_typescript.py`). Here are only frontend-only
// types and refinements: an interface that `extends` a generated one may narrow a field
// (a string to its known values), and the compiler checks it still fits the contract.

import type * as G from './generated';

export type * from './generated';

export type SpanInfo = G.SpanListing;
export type WorkerInfo = G.WorkerListing;
/** `views` optional: fixtures (and servers before run-level views) leave it out. */
export interface RunInfo extends Omit<G.RunListing, 'views' | 'snapshots'> {
  views?: string[];
  /** Memory snapshots of the run folder (the server always sends the list). */
  snapshots?: G.SnapshotListing[];
}
export type RunsResponse = G.RunsResponse;
export type WorkersResponse = G.WorkersResponse;
export type SpansResponse = G.SpansResponse;
export type LoadState = G.StatusResponse['state'];
export type LoadError = G.LoadError;
export type StatusResponse = G.StatusResponse;

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

export interface Step extends G.StepView {
  breakdown_us: Breakdown;
}

/** An incomplete step left out of the Overview; `reason` says why. */
export interface DroppedStep {
  name?: string;
  reason?: string;
  [key: string]: unknown;
}

export type Device = G.GpuDeviceView;

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

/** `evidence` and `link` are always sent (the server's type says so); pages still check
 * them, so they stay nullable here until the pages drop the checks. */
export interface Recommendation extends Omit<G.Recommendation, 'evidence' | 'link'> {
  severity: Severity;
  evidence: RecommendationEvidence | null;
  link: RecommendationLink | null;
}

export interface OverviewResponse extends Omit<G.OverviewView, 'recommendations'> {
  steps: Step[];
  breakdown_us: Breakdown;
  average_breakdown_us: Breakdown;
  dropped_steps: DroppedStep[];
  device_type: 'GPU' | 'CPU' | (string & {});
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

export type OperatorGroupBy = NonNullable<G.OperatorsParams['group_by']>;

/** Statistics of a set of operator calls: an `operators` row or one call stack. */
export type OperatorStats = Omit<G.StackRow, 'frames'>;

export interface OperatorRow extends G.OperatorsOperatorRow {
  /** Only with group_by=shape: the `Input Dims` arg, null when the op recorded none. */
  input_shape?: JsonValue;
}

export type CallStackSource = 'call_stack_arg' | 'python_function' | (string & {});

export interface OperatorsResponse extends G.OperatorsView {
  group_by: OperatorGroupBy | (string & {});
  rows: OperatorRow[];
  call_stack_source: CallStackSource | null;
}

export type StackFrame = G.PythonStacksFrame;
export type CallStackRow = G.StackRow;

export interface CallStacksResponse extends G.CallStacksView {
  input_shape: JsonValue;
  source: CallStackSource | null;
}

/** Query parameters of `callstacks` (besides the worker-span). */
export interface CallStacksParams {
  name: string;
  /** The JSON of a `shape` row's input_shape ("null" for ops without one). */
  input_shape?: string | undefined;
}

export type KernelGroupBy = NonNullable<G.KernelsParams['group_by']>;
export type KernelRow = G.KernelRow;

export interface KernelsResponse extends G.KernelsView {
  group_by: KernelGroupBy | (string & {});
}

/** Query parameters of `kernels` (besides the worker-span). */
export interface KernelsParams {
  group_by?: KernelGroupBy | undefined;
  device?: number | undefined;
  stream?: number | undefined;
}

// ----- memory, memory_curve, memory_events -----

export type MemoryOpRef = G.OpRef;
export type MemoryDevice = G.MemoryDeviceView;
export type AllocationState = 'paired' | 'never_freed' | 'freed_unseen';
export type AllocationRow = G.AllocationRow;
export type MemoryOperatorRow = G.MemoryOperatorRow;
export type MemoryResponse = G.MemoryView;
export type MemoryCurveResponse = G.CurveView;
export type MemoryEventsSort = NonNullable<G.MemoryEventsParams['sort']>;

export interface MemoryEventsResponse extends G.EventsView {
  sort: MemoryEventsSort;
}

/** Query parameters of `memory` (besides the worker-span); `undefined` leaves one out. */
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

export type CollectiveStats = G.CollectiveStats;
export type DistributedRankStep = G.RankStep;
export type RankSource = 'distributedInfo' | 'file_name' | 'order' | (string & {});

/** `devices` is typed loosely on the server (a dict per device); it holds Overview devices. */
export interface DistributedRank extends Omit<G.RankView, 'devices'> {
  rank_source: RankSource;
  mode: 'gpu' | 'cpu' | (string & {});
  devices: Device[];
}

export type StepWindow = G.StepWindow;
export type StragglerFactor = 'computation' | 'dataloader' | 'host_gap' | 'communication';

export interface Straggler extends G.Straggler {
  measured: 'first_collective' | 'step_end' | (string & {});
  cause: StragglerFactor | 'arrived_late' | 'unknown' | (string & {});
  excess_us: Partial<Record<StragglerFactor, number>>;
}

export interface DistributedStep extends G.JobStep {
  straggler: Straggler | null;
}

export type StragglerCount = G.StragglerCount;
export type ProcessGroupInfo = G.ProcessGroupView;
export type DistributedRankError = G.RankError;

export interface DistributedResponse extends Omit<
  G.DistributedResponse,
  'ranks' | 'recommendations'
> {
  mode: 'gpu' | 'cpu' | 'mixed' | 'none' | (string & {});
  ranks: DistributedRank[];
  steps: DistributedStep[];
  recommendations: Recommendation[];
}

export type DistributedLoading = G.DistributedLoading;

// ----- memory snapshots (run-level: the run folder's allocator snapshots) -----

export type MemorySnapshotResponse = G.MemorySnapshotResponse;
export type SnapshotFileView = G.SnapshotFileView;
export type SnapshotDevice = G.SnapshotDevice;
export type SnapshotAlignment = G.SnapshotAlignment;
export type SnapshotFrame = G.SnapshotFrame;
export type SnapshotIcicleNode = G.IcicleNode;
export type SnapshotOom = G.OomEvent;
export type SnapshotTimeline = G.Timeline;
export type SnapshotStack = G.StackBytes;

// ----- trace view (all take run, span and worker=W or workers=W1,W2) -----

export type TimelineTrackKind = 'cpu' | 'gpu' | 'python' | 'other' | 'counter' | (string & {});

export interface TimelineCounterInfo extends G.CounterInfo {
  metric: 'gpu_utilization' | 'memory_allocated' | 'memory_reserved' | (string & {});
  unit: 'fraction' | 'bytes' | (string & {});
}

export interface TimelineTrack extends G.TrackView {
  kind: TimelineTrackKind;
  counter: TimelineCounterInfo | null;
}

export type TimelineWorkerInfo = G.WorkerInfo;
export type TimelineStep = G.StepMarker;

export interface TracksResponse extends G.TracksView {
  time_base: 'file' | 'epoch' | (string & {});
  tracks: TimelineTrack[];
}

/** Bits of `flags` of exact events. */
export const EVENT_FLAG = { instant: 1, linked: 2, startsBefore: 4, endsAfter: 8 } as const;

export type WindowEvents = G.SliceColumns;
/** `row` optional: pages build empty blocks without it. */
export interface WindowBlocks extends Omit<G.BlockColumns, 'row'> {
  row?: number[];
}
export type CounterSeries = G.CounterSeries;
export interface TrackWindow extends Omit<G.TrackWindow, 'blocks'> {
  blocks: WindowBlocks | null;
}

export interface WindowResponse extends Omit<G.WindowView, 'tracks'> {
  tracks: TrackWindow[];
}
export type WindowParams = G.TraceParams;
export type TraceFrameRef = G.TraceViewFrame;

export type LinkRelation =
  | 'gpu_activity'
  | 'launcher'
  | 'cpu_op'
  | 'backward'
  | 'forward'
  | 'flow_out'
  | 'flow_in'
  | (string & {});

export interface EventLink extends G.Link {
  relation: LinkRelation;
}

export interface EventResponse extends G.EventView {
  call_stack_source: 'args' | 'python' | null | (string & {});
  flows: EventLink[];
}

export type FlowColumns = G.FlowColumns;
export type FlowsResponse = G.FlowsView;
export type SearchResponse = G.SearchView;
export type RangeSummaryRow = G.RangeRow;
export type RangeSummaryResponse = G.RangeSummaryView;
export type SourcePathsView = G.SourcePathsView;

// ----- the route map's bodies -----

/** The 200 bodies this file reads more precisely than the generated types (literal unions
 * and keyed records the Python types spell as `str`, `dict` or `Any`; a recommendation's
 * `evidence` and `link` kept nullable while the pages check them): `api.get` answers these
 * for their routes, the generated `Routes` body for every other route. */
export interface NarrowedBodies {
  overview: OverviewResponse;
  operators: OperatorsResponse;
  callstacks: CallStacksResponse;
  memory_events: MemoryEventsResponse;
  distributed: DistributedResponse;
}

/** Every key of NarrowedBodies is a route of the generated map (fails to compile else). */
type RouteNames<T extends G.RouteName> = T;
export type NarrowedRoutes = RouteNames<keyof NarrowedBodies>;
