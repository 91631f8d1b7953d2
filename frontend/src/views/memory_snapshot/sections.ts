// The parts of one device of a snapshot: tiles (peak, allocated vs reserved,
// fragmentation, OOMs), the stacks at the peak as an icicle and as a list, the OOM list.

import type { SnapshotDevice, SnapshotFrame, SnapshotStack } from '../../api/types';
import { h } from '../../components/dom';
import { sourceAnchor } from '../../components/editor_links';
import { formatBytes, formatCount, formatPercent, plural } from '../../components/format';
import { tile } from '../page_kit';
import { fragmentationShare, frameText, icicleLayout, sourceFrames } from './model';

export const ICICLE_ROW_PX = 22;

export function deviceTiles(device: SnapshotDevice): HTMLElement {
  const share = fragmentationShare(device);
  const d = device.device;
  return h(
    'div',
    { class: 'ks-tiles' },
    tile(
      'Peak active',
      formatBytes(device.peak_allocated_bytes),
      device.peak_allocated_bytes === null ? 'no allocation history in the file' : 'in the history',
      `snapshot-peak-${d}`,
    ),
    tile(
      'Allocated at the snapshot',
      formatBytes(device.allocated_bytes_at_snapshot),
      `active ${formatBytes(device.active_bytes_at_snapshot)}`,
      `snapshot-allocated-${d}`,
    ),
    tile(
      'Reserved',
      formatBytes(device.reserved_bytes),
      plural(device.segments, 'segment'),
      `snapshot-reserved-${d}`,
    ),
    tile(
      'Cached, not in use',
      formatBytes(device.inactive_bytes),
      share === null
        ? 'nothing reserved'
        : `${formatPercent(share * 100, 1)} of reserved; largest free block ${formatBytes(device.largest_inactive_block_bytes)}`,
      `snapshot-inactive-${d}`,
    ),
    tile('OOMs', formatCount(device.oom_count), undefined, `snapshot-ooms-${d}`),
  );
}

/** The icicle: one absolutely placed box per node, outermost frame on top. */
export function icicle(device: SnapshotDevice): HTMLElement {
  const cells = icicleLayout(device.icicle);
  const depth = cells.reduce((m, c) => Math.max(m, c.node.depth + 1), 0);
  const box = h('div', {
    class: 'ks-snap-icicle',
    testid: `snapshot-icicle-${device.device}`,
  });
  box.style.height = `${depth * ICICLE_ROW_PX}px`;
  for (const cell of cells) {
    const { node } = cell;
    const where = `${node.name} (${node.filename}${node.line === null ? '' : `:${node.line}`})`;
    const el = h(
      'div',
      {
        class: 'ks-snap-icicle-node',
        title: `${where}\n${formatBytes(node.bytes)} alive at the peak`,
        dataset: { bytes: String(node.bytes), depth: String(node.depth), name: node.name },
      },
      cell.width > 0.04 ? node.name : '',
    );
    el.style.left = `${cell.x * 100}%`;
    el.style.width = `${cell.width * 100}%`;
    el.style.top = `${node.depth * ICICLE_ROW_PX}px`;
    box.appendChild(el);
  }
  return box;
}

/** Frames innermost first, joined by ' ← ', each a link to its file and line in the
 *  user's editor where the path allows one (components/editor_links.ts). */
function frameLinks(frames: readonly SnapshotFrame[]): (HTMLElement | string)[] {
  return frames.flatMap((frame, i) => {
    const text = frameText(frame);
    const item = sourceAnchor(frame.filename, frame.line, text, 'snapshot-frame-link') ?? text;
    return i === 0 ? [item] : [' ← ', item];
  });
}

function stackItem(stack: SnapshotStack, index: number): HTMLElement {
  const shown = sourceFrames(stack.frames);
  const folded = stack.frames.length - shown.length;
  return h(
    'li',
    { testid: `snapshot-stack-${index}`, dataset: { bytes: String(stack.bytes) } },
    h('strong', null, formatBytes(stack.bytes)),
    ` in ${formatCount(stack.count)} allocation${stack.count === 1 ? '' : 's'}: `,
    stack.frames.length === 0
      ? h('span', { class: 'ks-muted' }, 'no stack recorded (allocated before the history began)')
      : h('code', { title: stack.frames.map(frameText).join('\n') }, ...frameLinks(shown)),
    folded > 0 ? h('span', { class: 'ks-muted ks-small' }, ` (+${folded} library frames)`) : null,
  );
}

export function stackList(device: SnapshotDevice): HTMLElement {
  return h(
    'ol',
    { class: 'ks-snap-stacks', testid: `snapshot-stacks-${device.device}` },
    ...device.top_stacks_at_peak.map(stackItem),
  );
}

export function oomTable(device: SnapshotDevice): HTMLElement {
  if (device.ooms.length === 0) {
    return h(
      'p',
      { class: 'ks-muted', testid: `snapshot-no-oom-${device.device}` },
      'No OOM recorded.',
    );
  }
  const rows = device.ooms.map((oom, i) =>
    h(
      'tr',
      { testid: `snapshot-oom-${device.device}-${i}` },
      h(
        'td',
        { dataset: { value: String(oom.requested_bytes ?? '') } },
        formatBytes(oom.requested_bytes),
      ),
      h('td', { dataset: { value: String(oom.device_free ?? '') } }, formatBytes(oom.device_free)),
      h('td', null, h('code', null, ...frameLinks(sourceFrames(oom.frames)))),
    ),
  );
  return h(
    'table',
    { class: 'ks-snap-ooms', testid: `snapshot-oom-table-${device.device}` },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', null, 'Asked for'),
        h('th', null, 'Device free'),
        h('th', null, 'Where'),
      ),
    ),
    h('tbody', null, ...rows),
  );
}
