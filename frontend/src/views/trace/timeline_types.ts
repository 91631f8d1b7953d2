// The timeline's interface to its page: what it asks the server for, what it reports
// back, and the options it is built with.

import type { TracksResponse, WindowResponse, FlowsResponse } from '../../api/types';
import type { Viewport } from './viewport';

export interface WindowRequest {
  /** Absolute µs, in the tracks' time base. */
  t0: number;
  t1: number;
  width: number;
  tracks: string[];
  maxItems: number;
}

export interface FlowsRequest {
  t0: number;
  t1: number;
  tracks: string[];
}

/** An event the user selected, in relative µs. */
export interface SelectedEvent {
  trackId: string;
  worker: string | null;
  row: number;
  depth: number;
  start: number;
  dur: number;
  name: string;
}

export interface AreaSelection {
  t0: number;
  t1: number;
  trackIds: string[];
}

export interface TimelineOptions {
  tracks: TracksResponse;
  fetchWindow: (req: WindowRequest, signal: AbortSignal) => Promise<WindowResponse | null>;
  fetchFlows: (req: FlowsRequest, signal: AbortSignal) => Promise<FlowsResponse | null>;
  onSelect: (event: SelectedEvent | null) => void;
  onArea: (area: AreaSelection | null) => void;
  /** Called after a response was drawn. */
  onFrame?: () => void;
  /** Called (debounced) when the visible window settles; absolute µs. */
  onViewport?: (t0: number, t1: number) => void;
  initial?: Viewport;
  isDark: () => boolean;
}
