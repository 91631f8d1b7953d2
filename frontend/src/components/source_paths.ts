// Where the relative files of the open trace's stack frames are on this machine (the
// `source_paths` route: the recording interpreter's folders, the run's folder,
// KINETOSCOPE_SOURCE_ROOTS). The shell names the open worker-span; the route is asked
// once per span, the first time a link to a relative file is drawn, and the links are
// refreshed when its answer comes (EDITOR_LINKS_CHANGED).

import { isAbort, type ApiClient } from '../api/client';
import type { SourcePathsView, SpanKey } from '../api/types';

/** Fired on `window` when what editor links point at changed (settings, resolutions). */
export const EDITOR_LINKS_CHANGED = 'kinetoscope:editor-links';

export function announceEditorLinksChanged(): void {
  if (typeof window !== 'undefined') window.dispatchEvent(new Event(EDITOR_LINKS_CHANGED));
}

interface SpanSource {
  api: ApiClient;
  key: SpanKey;
  controller: AbortController | null;
  view: SourcePathsView | null;
}

let current: SpanSource | null = null;

/** The worker-span whose frames the links show (null on run-level pages). */
export function useSourceSpan(api: ApiClient, key: SpanKey | null): void {
  const same =
    current !== null &&
    key !== null &&
    current.key.run === key.run &&
    current.key.worker === key.worker &&
    current.key.span === key.span;
  if (same) return;
  current?.controller?.abort();
  current = key ? { api, key: { ...key }, controller: null, view: null } : null;
}

/** Absolute on some machine: `/...`, `C:\...` or `C:/...`, `\\server\...`, or `<...>`. */
export function isAbsolutePath(path: string): boolean {
  return /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path);
}

/** The local file of a relative frame file, when the route found it; asks the route the
 *  first time (the links refresh when it answers). */
export function resolvedPath(file: string): string | undefined {
  if (isAbsolutePath(file) || file.startsWith('<')) return undefined;
  const span = current;
  if (!span) return undefined;
  if (span.view) return span.view.resolved[file];
  if (!span.controller) void fetchSourcePaths(span);
  return undefined;
}

/** The open span's answer, once known (the note near a stack reads its roots). */
export function sourcePathsView(): SourcePathsView | null {
  return current?.view ?? null;
}

async function fetchSourcePaths(span: SpanSource): Promise<void> {
  const controller = new AbortController();
  span.controller = controller;
  try {
    span.view = await span.api.getReady('source_paths', { ...span.key }, controller.signal);
    if (current === span) announceEditorLinksChanged();
  } catch (error) {
    if (!isAbort(error)) console.warn('kinetoscope: source paths unavailable', error);
  }
}
