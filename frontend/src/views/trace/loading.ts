// The trace view's waiting text while `tracks` answers 202: the trace file still loads,
// or (loaded) the server builds a structure of its trace view the first time.
import type { TraceViewLoading } from '../../api/types';
import { formatBytes } from '../../components/format';

/** "Loading w0: 1 MB of 4 MB (25 %)…" for a worker that still loads; "Building the index
 * of w0…" once it loaded and the server builds what the view needs (`building`). */
export function loadingText(s: TraceViewLoading): string {
  if (s.building !== undefined) return `Building the ${s.building} of ${s.worker}…`;
  const pct = s.bytes_total > 0 ? Math.round((100 * s.bytes_done) / s.bytes_total) : 0;
  return `Loading ${s.worker}: ${formatBytes(s.bytes_done)} of ${formatBytes(s.bytes_total)} (${pct} %)…`;
}
