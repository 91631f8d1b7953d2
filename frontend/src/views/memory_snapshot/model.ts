// Pure helpers of the Memory snapshot page: the icicle's layout, the time axis (on the
// trace's axis when the snapshot is aligned with it, else from the snapshot's first
// entry), frames as text and the alignment sentence.

import type {
  SnapshotAlignment,
  SnapshotDevice,
  SnapshotFrame,
  SnapshotIcicleNode,
  SnapshotTimeline,
} from '../../api/types';
import { formatDuration } from '../../components/format';

export interface IcicleCell {
  node: SnapshotIcicleNode;
  index: number;
  /** Left edge and width as fractions of the widest level (the peak's bytes). */
  x: number;
  width: number;
}

/**
 * The nodes (depth-first, largest child first, as the route sends them) placed side by
 * side: a node starts where its previous sibling ends, its first child where it starts.
 */
export function icicleLayout(nodes: readonly SnapshotIcicleNode[]): IcicleCell[] {
  const total = nodes.reduce((sum, n) => (n.parent === -1 ? sum + n.bytes : sum), 0);
  if (total <= 0) return [];
  const next = new Map<number, number>(); // parent index -> where its next child starts
  const cells: IcicleCell[] = [];
  nodes.forEach((node, index) => {
    const start = next.get(node.parent) ?? (node.parent === -1 ? 0 : (cells[node.parent]?.x ?? 0));
    const width = node.bytes / total;
    cells.push({ node, index, x: start, width });
    next.set(node.parent, start + width);
  });
  return cells;
}

/** Where time 0 of the page's axis is (epoch µs), and what it is called. */
export interface TimeOrigin {
  us: number;
  label: string;
}

export function timeOrigin(
  device: SnapshotDevice,
  alignment: SnapshotAlignment | null,
): TimeOrigin | null {
  if (alignment?.state === 'aligned' && alignment.trace_start_us !== null) {
    return {
      us: alignment.trace_start_us,
      label: `ms from the start of ${alignment.worker}'s trace`,
    };
  }
  if (device.first_time_us === null) return null;
  return { us: device.first_time_us, label: 'ms from the first history entry' };
}

/** [ms, bytes] points of a step curve; entries without a time are left out. */
export function curvePoints(
  t: readonly (number | null)[],
  values: readonly number[],
  origin: TimeOrigin,
): [number, number][] {
  const out: [number, number][] = [];
  t.forEach((time, i) => {
    const value = values[i];
    if (time !== null && value !== undefined) out.push([(time - origin.us) / 1000, value]);
  });
  return out;
}

export function timelineSeries(
  timeline: SnapshotTimeline,
  origin: TimeOrigin,
): { name: string; points: [number, number][] }[] {
  const series = [
    { name: 'active', points: curvePoints(timeline.t_us, timeline.active_bytes, origin) },
    { name: 'reserved', points: curvePoints(timeline.t_us, timeline.reserved_bytes, origin) },
  ];
  if (timeline.streams.length > 1) {
    for (const stream of timeline.streams) {
      const name = `stream ${stream.stream ?? '?'}`;
      series.push({ name, points: curvePoints(stream.t_us, stream.active_bytes, origin) });
    }
  }
  return series;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** `name (file.py:12)`; FX-augmented frames add the FX node they ran for. */
export function frameText(frame: SnapshotFrame): string {
  const line = frame.line === null ? '' : `:${frame.line}`;
  const fx = frame.fx?.fx_node_name ? ` [fx ${frame.fx.fx_node_name}]` : '';
  return `${frame.name} (${baseName(frame.filename)}${line})${fx}`;
}

/** Library frames (site-packages, the interpreter) fold away, so a stack reads as model
 *  source; an all-library stack keeps its innermost frame. */
export function sourceFrames(frames: readonly SnapshotFrame[]): SnapshotFrame[] {
  const own = frames.filter((f) => !/site-packages|dist-packages|^<frozen|^\?\?$/.test(f.filename));
  return own.length > 0 ? own : frames.slice(0, 1);
}

/** Reserved bytes not in active use, as a share of reserved (null when nothing is reserved). */
export function fragmentationShare(device: SnapshotDevice): number | null {
  return device.reserved_bytes > 0 ? device.inactive_bytes / device.reserved_bytes : null;
}

export function alignmentText(alignment: SnapshotAlignment | null): string {
  if (alignment === null) return 'No trace in this run to align the snapshot with.';
  const where = `${alignment.worker}'s trace (span ${alignment.span})`;
  if (alignment.state === 'unknown')
    return `Not aligned with ${where}: ${alignment.reason ?? 'unknown'}.`;
  if (alignment.state === 'no_overlap') {
    return `Not aligned with ${where}: the files were recorded at different times.`;
  }
  const matched = alignment.matched_allocations;
  const offset = alignment.clock_offset_us;
  const check =
    matched > 0 && offset !== null
      ? ` ${matched} of the trace's allocations are in the snapshot's history (clocks ${formatDuration(Math.abs(offset))} apart).`
      : '';
  return `Aligned with ${where}: times are on the trace's axis.${check}`;
}

/** The aligned trace's span on the page's axis (ms), null when not aligned. */
export function traceWindow(
  alignment: SnapshotAlignment | null,
  origin: TimeOrigin,
): [number, number] | null {
  if (alignment?.state !== 'aligned') return null;
  const { trace_start_us: start, trace_end_us: end } = alignment;
  if (start === null || end === null) return null;
  return [(start - origin.us) / 1000, (end - origin.us) / 1000];
}
