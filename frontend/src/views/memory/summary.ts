// The Memory page's summary of one device: the tiles (peak, reserved, change, counts)
// and the card about the peak (when, in which operator, under which Python stack); and
// the notices above them (a cut-short file, the server's notes on the memory events).

import { sourceAnchor, stackLinkNote } from '../../components/editor_links';
import { parseFrame } from '../../components/source_link';
import type { MemoryDevice, MemoryResponse, StatusResponse } from '../../api/types';
import { h, replaceChildren, type Children } from '../../components/dom';
import { formatBytes, formatCount, formatDuration } from '../../components/format';
import { formatAbsTime, formatBytesExact, formatRelTime, type TimeRange } from './model';

/** Python frames shown before "show all". */
const STACK_SHOWN = 6;

function tile(
  testid: string,
  label: string,
  value: string,
  detail?: Children,
  title?: string,
): HTMLElement {
  return h(
    'div',
    { class: 'ks-tile', testid, title },
    h('div', { class: 'ks-tile-label' }, label),
    h('div', { class: 'ks-tile-value' }, value),
    detail ? h('div', { class: 'ks-tile-detail' }, detail) : null,
  );
}

/** The tiles of a device; `ranged` when a time range is selected. */
export function deviceTiles(
  d: MemoryDevice,
  m: MemoryResponse,
  ranged: boolean,
  origin: number,
): HTMLElement[] {
  const at = (t: number | null): string =>
    t === null ? 'no events in range' : `at ${formatRelTime(t - origin)}`;
  const total = d.total_memory_bytes;
  const peakShare = total
    ? ` · ${((d.peak_allocated_bytes / total) * 100).toFixed(2)} % of ${formatBytes(total)}`
    : '';
  const change = d.end_allocated_bytes - d.start_allocated_bytes;
  const rows = m.allocations + m.never_freed + m.freed_unseen;
  return [
    tile(
      'memory-tile-peak',
      d.allocated_source === 'computed' ? 'Peak allocated (lower bound)' : 'Peak allocated',
      formatBytes(d.peak_allocated_bytes),
      `${at(d.peak_allocated_us)}${peakShare}`,
      formatBytesExact(d.peak_allocated_bytes),
    ),
    tile(
      'memory-tile-reserved',
      'Peak reserved',
      d.reserved_known ? formatBytes(d.peak_reserved_bytes) : 'unknown',
      d.reserved_known ? at(d.peak_reserved_us) : 'the trace has no Total Reserved',
      d.reserved_known ? formatBytesExact(d.peak_reserved_bytes) : undefined,
    ),
    tile(
      'memory-tile-change',
      ranged ? 'Change over the range' : 'Change over the trace',
      `${change > 0 ? '+' : ''}${formatBytes(change)}`,
      `${formatBytes(d.start_allocated_bytes)} → ${formatBytes(d.end_allocated_bytes)}`,
    ),
    tile(
      'memory-tile-allocations',
      'Allocations',
      formatCount(rows),
      `${formatCount(m.never_freed)} never freed · ${formatCount(m.freed_unseen)} before recording`,
    ),
    tile(
      'memory-tile-events',
      'Memory events',
      formatCount(d.events),
      m.no_address_events
        ? `${formatCount(m.no_address_events)} without an address`
        : `${formatCount(m.unattributed_events)} outside any operator`,
    ),
  ];
}

type PeakOp = NonNullable<MemoryDevice['peak_op']>;

/** The operator running at the peak and the chain of ops it is inside. */
function operatorFields(op: PeakOp | null | undefined, origin: number): Children[] {
  if (!op) {
    return [
      h('dt', null, 'Operator'),
      h('dd', { class: 'ks-muted' }, 'none: the allocation happened outside every CPU operator'),
    ];
  }
  const fields: Children[] = [
    h('dt', null, 'Operator'),
    h(
      'dd',
      null,
      h('code', { class: 'ks-mem-code', testid: 'memory-peak-op' }, op.name),
      h(
        'span',
        { class: 'ks-muted' },
        ` started ${formatRelTime(op.start_us - origin)}, ran ${formatDuration(op.duration_us)}`,
      ),
    ),
  ];
  if (op.ops.length > 1) {
    fields.push(
      h('dt', null, 'Inside'),
      h(
        'dd',
        { class: 'ks-mem-chain', testid: 'memory-peak-ops' },
        op.ops.map((name, i) => [
          i ? h('span', { class: 'ks-muted' }, ' › ') : null,
          h('code', { class: 'ks-mem-code' }, name),
        ]),
      ),
    );
  }
  return fields;
}

/** The Python stack at the peak, outer frames folded away; null without one. */
function stackBlock(op: PeakOp | null | undefined): HTMLElement | null {
  const stack = op?.stack ?? [];
  if (!stack.length) return null;
  const source =
    op?.stack_source === 'call_stack' ? 'the op’s call stack' : 'Python function events';
  const hidden = stack.slice(0, Math.max(0, stack.length - STACK_SHOWN));
  const shown = stack.slice(hidden.length);
  const frame = (text: string): HTMLElement => {
    const code = h('code', { class: 'ks-mem-code' }, text);
    const f = parseFrame(text);
    return h('li', null, sourceAnchor(f.file, f.line, code, 'memory-frame-link') ?? code);
  };
  const block = h(
    'div',
    { class: 'ks-mem-stack', testid: 'memory-peak-stack' },
    h(
      'div',
      { class: 'ks-field-label' },
      `Python stack (${stack.length} frames, innermost last; from ${source})`,
    ),
    hidden.length
      ? h(
          'details',
          null,
          h('summary', null, `${hidden.length} outer frame${hidden.length === 1 ? '' : 's'}`),
          h('ol', { class: 'ks-mem-frames' }, hidden.map(frame)),
        )
      : null,
    h('ol', { class: 'ks-mem-frames', attrs: { start: hidden.length + 1 } }, shown.map(frame)),
  );
  block.append(stackLinkNote(block));
  return block;
}

/** The contents of the "At the peak" card of a device (or of none). */
export function peakCard(
  d: MemoryDevice | undefined,
  range: TimeRange | null,
  origin: number,
): HTMLElement[] {
  const t = d?.peak_allocated_us ?? null;
  if (!d || t === null) {
    return [
      h('h4', { class: 'ks-card-title' }, 'At the peak'),
      h('p', { class: 'ks-muted ks-note' }, 'No memory events of this device in the range.'),
    ];
  }
  const carried = range !== null && t < range.start_us;
  const fields: Children[] = [
    h('dt', null, 'Peak allocated'),
    h(
      'dd',
      { testid: 'memory-peak-bytes', dataset: { value: String(d.peak_allocated_bytes) } },
      formatBytesExact(d.peak_allocated_bytes),
    ),
    h('dt', null, 'Reached at'),
    h(
      'dd',
      { title: formatAbsTime(t) },
      formatRelTime(t - origin),
      carried
        ? h('span', { class: 'ks-muted' }, ' (before the range: the level it starts at)')
        : null,
    ),
    ...operatorFields(d.peak_op, origin),
  ];
  const stack = stackBlock(d.peak_op);
  return [
    h('h4', { class: 'ks-card-title' }, `At the peak on ${d.label}`),
    h('dl', { class: 'ks-fields ks-mem-peak-fields' }, fields),
    ...(stack ? [stack] : []),
  ];
}

/** The notice for a trace file that was cut short, with its warnings, or null. */
export function partialNotice(status: StatusResponse): HTMLElement | null {
  if (!status.partial) return null;
  return h(
    'div',
    { class: 'ks-notice ks-notice-warn', role: 'note' },
    h('strong', null, 'This trace file was cut short; what could be read is shown.'),
    status.warnings.length
      ? h(
          'ul',
          null,
          status.warnings.map((w) => h('li', null, w)),
        )
      : null,
  );
}

/** The server's notes on the trace's memory events in `box` (hidden when there are none). */
export function showNotes(box: HTMLElement, notes: readonly string[]): void {
  replaceChildren(
    box,
    notes.length
      ? [
          h('strong', null, 'About this trace’s memory events:'),
          h(
            'ul',
            null,
            notes.map((n) => h('li', null, n)),
          ),
        ]
      : null,
  );
  box.hidden = notes.length === 0;
}

/** The device's tiles in `box` (empty without a device); the peak tile carries its bytes. */
export function showTiles(
  box: HTMLElement,
  d: MemoryDevice | undefined,
  mem: MemoryResponse,
  ranged: boolean,
  origin: number,
): void {
  replaceChildren(box, d ? deviceTiles(d, mem, ranged, origin) : null);
  if (!d) return;
  for (const el of box.querySelectorAll<HTMLElement>('[data-testid="memory-tile-peak"]')) {
    el.dataset.value = String(d.peak_allocated_bytes);
  }
}
