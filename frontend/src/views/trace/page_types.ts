// What the Trace page's parts (page_search, page_event, page_range) read of the page.

import type { ViewContext } from '../types';
import type { KeyParams } from './model';
import type { TracePanel } from './page_panel';
import type { Timeline } from './timeline';

export interface TracePageHost {
  readonly ctx: ViewContext;
  readonly panel: TracePanel;
  /** The timeline on screen, null while the tracks load. */
  timeline(): Timeline | null;
  /** The start of the loaded tracks (absolute µs): times on the timeline count from it. */
  origin(): number;
  /** Whether other workers than the page's own are shown (times in epoch µs). */
  multi(): boolean;
  /** run, span and the worker(s) shown, as request parameters. */
  keyParams(): KeyParams;
}
