// The Kernels page's note on graph replays left unmatched: per replayed graph (kernel
// sequence) no capture is taken for, why (the view's `graph_replay.unmatched`;
// docs/architecture.md#graph-replays).

import type { KernelsResponse } from '../../api/types';
import { h } from '../../components/dom';
import { formatCount, formatDuration } from '../../components/format';

/** Shown at most; the rest are counted. */
const SHOWN = 8;

export function replayNote(data: KernelsResponse): HTMLElement | null {
  const unmatched = data.graph_replay?.unmatched ?? [];
  if (!unmatched.length) return null;
  const items = unmatched
    .slice(0, SHOWN)
    .map((u) =>
      h(
        'li',
        { testid: 'kernels-unmatched-graph' },
        h('span', { class: 'ks-mono', title: u.first_kernel }, shorten(u.first_kernel)),
        ` … (${formatCount(u.kernels)} kernels, ${formatCount(u.replays)} replays, ` +
          `${formatDuration(u.device_us)}): ${u.reason}`,
      ),
    );
  const more = unmatched.length - SHOWN;
  return h(
    'div',
    { class: 'ks-notice', testid: 'kernels-unmatched-graphs', role: 'note' },
    h('strong', null, 'Graph replays not matched to their capture: '),
    'their kernels stay under the op around the graph launch.',
    h('ul', null, ...items, more > 0 ? h('li', null, `and ${formatCount(more)} more`) : null),
  );
}

function shorten(name: string): string {
  return name.length > 60 ? `${name.slice(0, 57)}…` : name;
}
