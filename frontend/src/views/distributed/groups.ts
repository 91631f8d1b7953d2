// Communication groups of the Distributed page: the group table (verdict, the rank the
// others wait for, a link to the call that shows it in the trace view) and the rank × rank
// heat map of send/recv links, drawn per block of ranks when there are too many to draw
// one cell each (2,048 ranks: blocks of 16). Pure helpers first (model tests), then DOM.

import type { DistributedResponse, GroupRow, LinkRow } from '../../api/types';
import { FORMAT, numberFormat, type ColumnSpec } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { formatBytes } from '../../components/format';
import { traceColumn } from './columns';
import { formatRanks, traceLinkState, URL_KEYS } from './model';
import type { RunViewContext } from '../types';
import { section } from './sections';
import { formatBandwidth } from './text';

/** At most this many cells a side: beyond it, ranks are drawn in blocks. */
export const HEAT_MAX_CELLS = 128;

export const VERDICT_TEXT: Record<string, string> = {
  ok: 'ok',
  slow_link: 'slow link',
  waits_for_rank: 'waits for a rank',
};

/** The link to the trace view of a group's call, on its rank's worker; null without one. */
export function groupTraceState(
  run: string,
  view: DistributedResponse,
  group: GroupRow,
): Record<string, string> | null {
  const call = group.call;
  if (!call) return null;
  const rank = view.ranks.find((r) => r.rank === call.rank);
  if (!rank) return null;
  return traceLinkState(run, {
    worker: rank.worker,
    span: rank.span,
    start_us: call.start_us,
    end_us: call.end_us,
  });
}

export interface HeatGrid {
  /** Ranks a cell stands for (1: one rank a cell). */
  block: number;
  /** Cells a side. */
  size: number;
  /** First rank of the grid (cells are [first + i*block, first + (i+1)*block)). */
  first: number;
  /** bytes and time per cell, row = source block, column = destination block. */
  bytes: Float64Array;
  time: Float64Array;
  /** Bytes per µs → GB/s of each cell (NaN: no link, or no bytes known). */
  gbps: Float64Array;
  /** The slowest cell's GB/s and the fastest one's (color scale). */
  min: number;
  max: number;
}

/** The send/recv links as a grid of at most HEAT_MAX_CELLS a side; null without links. */
export function heatGrid(links: readonly LinkRow[], ranksFound: number): HeatGrid | null {
  if (!links.length) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (const l of links) {
    lo = Math.min(lo, l.src, l.dst);
    hi = Math.max(hi, l.src, l.dst);
  }
  const span = Math.max(hi - lo + 1, ranksFound);
  const block = Math.max(1, Math.ceil(span / HEAT_MAX_CELLS));
  const size = Math.ceil(span / block);
  const bytes = new Float64Array(size * size);
  const time = new Float64Array(size * size);
  for (const l of links) {
    const at = Math.floor((l.src - lo) / block) * size + Math.floor((l.dst - lo) / block);
    if (l.bytes !== null) {
      bytes[at] = (bytes[at] ?? 0) + l.bytes;
      time[at] = (time[at] ?? 0) + l.time_us;
    }
  }
  const gbps = new Float64Array(size * size).fill(NaN);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < gbps.length; i++) {
    const t = time[i] ?? 0;
    if (t <= 0) continue;
    const value = (bytes[i] ?? 0) / t / 1e3;
    gbps[i] = value;
    min = Math.min(min, value);
    max = Math.max(max, value);
  }
  return { block, size, first: lo, bytes, time, gbps, min, max };
}

/** "rank 12" or "ranks 16–31" for a cell index of the grid. */
export function cellRanks(grid: HeatGrid, index: number): string {
  const a = grid.first + index * grid.block;
  return grid.block === 1 ? `rank ${a}` : `ranks ${a}–${a + grid.block - 1}`;
}

/** Slow is hot: the slowest cell red, the fastest pale. */
export function heatColor(grid: HeatGrid, gbps: number): string {
  const range = grid.max - grid.min;
  const x = range > 0 ? (gbps - grid.min) / range : 1;
  const light = Math.round(45 + 30 * x);
  return `hsl(${Math.round(10 + 40 * x)}, 85%, ${light}%)`;
}

// ----- DOM -------------------------------------------------------------------------------------

const ratio = numberFormat((v) => (v === null ? '—' : `${v.toFixed(2)}×`));

const GROUP_COLUMNS: ColumnSpec<GroupRow>[] = [
  { key: 'name', label: 'Group', minWidth: 64, grow: 0.4, value: (g) => g.name || '(unnamed)' },
  { key: 'role', label: 'Role', minWidth: 60, grow: 0.4, value: (g) => g.role || null },
  {
    key: 'ranks',
    label: 'Ranks',
    minWidth: 120,
    grow: 1.4,
    value: (g) => formatRanks(g.ranks),
    sort: (g) => g.ranks[0] ?? -1,
  },
  {
    key: 'calls',
    label: 'Calls',
    align: 'right',
    minWidth: 60,
    value: (g) => g.collectives,
    format: FORMAT.count,
  },
  {
    key: 'p2p',
    label: 'Send/recv',
    tooltip: 'Point-to-point operations in the group (not calls: they give the heat map below)',
    align: 'right',
    minWidth: 70,
    value: (g) => g.p2p_ops,
    format: FORMAT.count,
  },
  {
    key: 'transfer',
    label: 'Transfer',
    align: 'right',
    minWidth: 90,
    value: (g) => g.transfer_us,
    format: FORMAT.duration,
  },
  {
    key: 'sync',
    label: 'Sync wait',
    align: 'right',
    minWidth: 90,
    value: (g) => g.sync_us,
    format: FORMAT.duration,
  },
  {
    key: 'busbw',
    label: 'Bus bw',
    align: 'right',
    minWidth: 90,
    value: (g) => g.busbw_gbps,
    format: numberFormat(formatBandwidth),
  },
  {
    key: 'ratio',
    label: 'vs peers',
    tooltip: 'Transfer time against groups of the same collective, size and members (1× = typical)',
    align: 'right',
    minWidth: 70,
    value: (g) => g.transfer_ratio,
    format: ratio,
  },
  {
    key: 'waits_for',
    label: 'Waits for',
    align: 'right',
    minWidth: 80,
    value: (g) => g.waits_for,
    format: FORMAT.number,
  },
  {
    key: 'verdict',
    label: 'Verdict',
    minWidth: 110,
    value: (g) => g.verdict,
    cell: (g) =>
      h(
        'span',
        { class: `ks-dist-verdict ks-dist-verdict-${g.verdict}` },
        VERDICT_TEXT[g.verdict] ?? g.verdict,
      ),
    testid: (g) => `group-${g.name}-verdict`,
  },
];

export function groupColumns(traceLink: (row: GroupRow) => Children): ColumnSpec<GroupRow>[] {
  return [...GROUP_COLUMNS, traceColumn(traceLink)];
}

/** The group table's look (VirtualTable options and the URL key of its sort). */
export const GROUP_TABLE_LOOK = {
  testid: 'group-table',
  caption: 'Communication groups',
  maxHeight: 360,
  sortKey: URL_KEYS.groupSort,
  emptyText: 'No collective was matched across ranks.',
  optional: ['p2p', 'ratio', 'busbw'],
};

export function groupRowAttrs(g: GroupRow): Record<string, string> {
  return { 'data-group': g.name, 'data-verdict': g.verdict };
}

/** The section: the verdict line, the table, the heat map. */
export function groupSection(view: DistributedResponse, table: HTMLElement): HTMLElement {
  return section(
    'groups',
    'Communication groups',
    verdictLine(view),
    h(
      'p',
      { class: 'ks-muted ks-small' },
      'Per process group: its calls matched across ranks, transfer and sync wait, bus bandwidth, transfer against groups of the same collective and size, and the rank the others wait for again and again. The link opens the call that shows it in that rank’s trace.',
    ),
    table,
    heatMap(view),
  );
}

/** The link from a group row to its call in the trace view of the call's rank. */
export function groupTraceLink(
  ctx: Pick<RunViewContext, 'run' | 'link'>,
  view: DistributedResponse,
  g: GroupRow,
): Children {
  const state = groupTraceState(ctx.run, view, g);
  if (!state || !g.call) return h('span', { class: 'ks-muted' }, '—');
  return h(
    'a',
    {
      class: 'ks-dist-trace-link',
      testid: `group-${g.name}-link`,
      title: `Open rank ${g.call.rank}'s ${g.call.type}${g.call.seq === null ? '' : ` #${g.call.seq}`} in the trace view (group ranks ${formatRanks(g.ranks)})`,
      dataset: {
        worker: state.worker ?? '',
        t0: String(g.call.start_us),
        t1: String(g.call.end_us),
      },
      attrs: { href: ctx.link(state), target: '_top' },
    },
    `Rank ${g.call.rank} ↗`,
  );
}

/** One line naming the slow ranks and slow groups, or that there are none. */
export function verdictLine(view: DistributedResponse): HTMLElement {
  const parts: string[] = [];
  if (view.slow_ranks.length)
    parts.push(
      `Waited for: rank${view.slow_ranks.length > 1 ? 's' : ''} ${formatRanks(view.slow_ranks)}`,
    );
  if (view.slow_groups.length)
    parts.push(
      `Slow link: group${view.slow_groups.length > 1 ? 's' : ''} ${view.slow_groups.join(', ')}`,
    );
  return h(
    'p',
    {
      class: 'ks-dist-verdicts',
      testid: 'group-verdicts',
      dataset: {
        slowRanks: JSON.stringify(view.slow_ranks),
        slowGroups: JSON.stringify(view.slow_groups),
      },
    },
    parts.length
      ? parts.join(' · ')
      : 'No group waits for one rank again and again, and no group’s link is slower than its peers’.',
  );
}

/** The rank × rank heat map of send/recv bandwidth on a canvas, with a readout on hover. */
export function heatMap(view: DistributedResponse): HTMLElement {
  const grid = heatGrid(view.links, view.ranks_found);
  if (!grid) {
    return h(
      'p',
      { class: 'ks-muted ks-note', testid: 'link-heatmap-empty' },
      'No send/recv between ranks in these traces.',
    );
  }
  const cell = Math.max(3, Math.floor(512 / grid.size));
  const canvas = h('canvas', {
    class: 'ks-dist-heat',
    attrs: { width: grid.size * cell, height: grid.size * cell },
  });
  const ctx2d = canvas.getContext('2d');
  for (let i = 0; ctx2d && i < grid.gbps.length; i++) {
    const value = grid.gbps[i] ?? NaN;
    if (Number.isNaN(value)) continue;
    ctx2d.fillStyle = heatColor(grid, value);
    ctx2d.fillRect((i % grid.size) * cell, Math.floor(i / grid.size) * cell, cell, cell);
  }
  const readout = h(
    'p',
    { class: 'ks-muted ks-small', testid: 'link-heatmap-readout' },
    'Point at a cell: source → destination, bytes, bandwidth.',
  );
  canvas.addEventListener('mousemove', (event: MouseEvent) => {
    const box = canvas.getBoundingClientRect();
    const col = Math.floor(((event.clientX - box.left) / box.width) * grid.size);
    const row = Math.floor(((event.clientY - box.top) / box.height) * grid.size);
    const at = row * grid.size + col;
    const value = grid.gbps[at] ?? NaN;
    readout.textContent = Number.isNaN(value)
      ? `${cellRanks(grid, row)} → ${cellRanks(grid, col)}: no send/recv`
      : `${cellRanks(grid, row)} → ${cellRanks(grid, col)}: ${formatBytes(grid.bytes[at] ?? 0)}, ${formatBandwidth(value)}`;
  });
  const unit = grid.block === 1 ? 'one rank a cell' : `${grid.block} ranks a cell`;
  return h(
    'div',
    {
      class: 'ks-dist-heat-wrap',
      testid: 'link-heatmap',
      dataset: { cells: String(grid.size), block: String(grid.block) },
    },
    h(
      'p',
      { class: 'ks-muted ks-small' },
      `Send/recv bandwidth, source rank (rows) → destination rank (columns), ${unit}; slower is redder (${formatBandwidth(grid.min)} – ${formatBandwidth(grid.max)}).`,
    ),
    canvas,
    readout,
  );
}
