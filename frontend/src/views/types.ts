// What the shell hands a view, and what a view gives back. Views never import shell/
// (frontend/check-structure.mjs): what they need of the shell's URL state comes here.

import type { ApiClient } from '../api/client';
import type { SpanKey, StatusResponse } from '../api/types';
import type { ThemeWatcher } from '../components/theme';

/**
 * The host page's URL with the given p.kinetoscope.<key> values set (removed when
 * undefined), every other key kept: a link that opens that state (open it with
 * target "_top"; the plugin runs in TensorBoard's iframe).
 */
export type StateLink = (values: Record<string, string | undefined>) => string;

export interface ViewContext {
  api: ApiClient;
  key: SpanKey;
  /** The `status` of the worker-span; always state "ready" here. */
  status: StatusResponse;
  themes: ThemeWatcher;
  /** Aborted when the user leaves the view; pass it to fetches. */
  signal: AbortSignal;
  /** Views this worker-span offers that the UI knows (as in the View selector). */
  views: readonly string[];
  /** The run-level views the run offers (its listing's `views`: distributed, compile...). */
  runViews: readonly string[];
  /** The label of a view id, as in the View selector. */
  viewLabel: (view: string) => string;
  /** Switches to a view (or stays) and scrolls to an anchor in it. */
  navigate: (view: string, anchor?: string) => void;
  link: StateLink;
}

export interface ViewHandle {
  dispose: () => void;
  /** Scrolls to an anchor; false when the view has no such anchor. */
  scrollTo?: (anchor: string) => boolean;
}

/** What the shell reads of a page besides its render function. */
interface PageDef {
  id: string;
  label: string;
  /** Its place in the Views list (ascending; views/registry.ts sorts by it). */
  order: number;
  /** Why a trace (or run) does not offer it, for the page's notice: what it must hold. */
  absent?: string;
}

export interface ViewDef extends PageDef {
  render: (container: HTMLElement, ctx: ViewContext) => Promise<ViewHandle>;
}

export interface RunViewContext {
  api: ApiClient;
  run: string;
  /** The span name each worker uses (the Spans list's selection). */
  span: string;
  themes: ThemeWatcher;
  /** Aborted when the user leaves the view; pass it to fetches and polls. */
  signal: AbortSignal;
  viewLabel: (view: string) => string;
  link: StateLink;
}

export interface RunViewDef extends PageDef {
  /** Resolves once the view is mounted (it may still be loading its data). */
  render: (container: HTMLElement, ctx: RunViewContext) => Promise<ViewHandle>;
}
