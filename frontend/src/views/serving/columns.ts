// The Serving page's tables as data: the iterations (components/columns.ts specs: every
// cell carries data-col and data-value for the end-to-end tests) and the per-phase rows.

import type { Iteration } from '../../api/types';
import { FORMAT, num, type ColumnSpec } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { DASH, formatCount, formatDuration, formatPercent } from '../../components/format';
import { CLASS_COLOR, phaseColor, phaseLabel, type PhaseRow } from './model';

/** Columns the iteration table drops first, in order, when it is too narrow. */
export const NARROW_HIDES = [
  'gpu_gap_before_us',
  'queue_us',
  'gpu_idle_us',
  'collective_us',
  'requests',
  'host_dur_us',
  'top',
];

function phaseCell(phase: string): Children {
  return h(
    'span',
    { class: 'ks-serving-phase' },
    h('span', { class: 'ks-swatch', style: `background:${phaseColor(phase)}` }),
    phaseLabel(phase),
  );
}

function time(key: keyof Iteration, label: string, tooltip: string): ColumnSpec<Iteration> {
  return {
    key,
    label,
    tooltip,
    align: 'right',
    minWidth: 92,
    value: (it) => it[key] as number | null,
    format: FORMAT.duration,
  };
}

function phaseColumn(): ColumnSpec<Iteration> {
  return {
    key: 'phase',
    label: 'Phase',
    tooltip: 'prefill, decode, mixed, idle or unknown; hover a cell for what decided it',
    minWidth: 100,
    value: (it) => it.phase,
    cell: (it) => phaseCell(it.phase),
    cellTooltip: (it) => it.phase_from,
  };
}

function count(key: 'tokens' | 'requests', label: string): ColumnSpec<Iteration> {
  return {
    key,
    label,
    align: 'right',
    minWidth: 80,
    value: (it) => it[key],
    format: FORMAT.count,
    cellTooltip: (it) => (it.counts_from === null ? '' : `From the ${it.counts_from}`),
  };
}

function topKernelColumn(): ColumnSpec<Iteration> {
  return {
    key: 'top',
    label: 'Top kernel',
    minWidth: 180,
    grow: 2,
    value: (it) => it.top_kernels[0]?.name ?? '',
    cell: (it) =>
      h('span', { class: 'ks-mono ks-serving-kernel' }, it.top_kernels[0]?.name ?? DASH),
    cellTooltip: (it) =>
      it.top_kernels
        .map((k) => {
          const as = k.captured_as === null ? '' : ` (captured as ${k.captured_as})`;
          const at = k.captured_at;
          const captured = at === null ? as : `${as} at ${at.filename}:${at.line ?? '?'}`;
          return `${formatDuration(k.total_us)} · ${k.calls}× ${k.name}${captured}`;
        })
        .join('\n'),
  };
}

const REPLAYED: ColumnSpec<Iteration> = {
  key: 'graph_replayed_pct',
  label: 'Replayed',
  tooltip: 'Share of its kernel time replayed from CUDA/HIP graphs',
  align: 'right',
  minWidth: 84,
  value: (it) => it.graph_replayed_pct,
  format: (v) => num(typeof v === 'number' ? formatPercent(v, 1) : DASH),
};

export function iterationColumns(
  origin: number,
  traceLink: (it: Iteration) => Children,
): ColumnSpec<Iteration>[] {
  return [
    {
      key: 'index',
      label: '#',
      align: 'right',
      minWidth: 48,
      value: (it) => it.index,
      format: FORMAT.number,
    },
    phaseColumn(),
    {
      key: 'start',
      label: 'Start',
      tooltip: 'Since the first iteration started',
      align: 'right',
      minWidth: 92,
      value: (it) => it.start_us - origin,
      format: FORMAT.duration,
    },
    time(
      'dur_us',
      'Duration',
      'From its start to the later of its marker’s end and its GPU work’s end',
    ),
    time('host_dur_us', 'Host', 'The engine marker’s own length'),
    time('gpu_busy_us', 'GPU busy', 'Union of the GPU work it launched'),
    time('gpu_idle_us', 'GPU idle', 'Its GPU span less the busy time'),
    time('scheduling_us', 'Scheduling', 'From its start to its first launch call'),
    time('queue_us', 'Queue', 'From its first launch call to its first GPU activity'),
    time('gap_before_us', 'Gap before', 'Idle time since every earlier iteration ended'),
    time(
      'gpu_gap_before_us',
      'GPU gap',
      'GPU idle time since the earlier iterations’ GPU work ended',
    ),
    REPLAYED,
    count('tokens', 'Tokens'),
    count('requests', 'Requests'),
    time(
      'collective_us',
      'Collectives',
      'Its communication kernels (all-reduces of tensor-parallel ranks)',
    ),
    topKernelColumn(),
    { key: 'links', label: '', minWidth: 64, value: () => null, cell: traceLink, sort: false },
  ];
}

/** One row of the per-phase table. */
export function phaseTableRow(row: PhaseRow): HTMLElement {
  const s = row.stats;
  const cells: [string, Children][] = [
    ['phase', phaseCell(row.phase)],
    ['count', formatCount(s.count)],
    ['median', formatDuration(s.dur_us.median)],
    ['p90', formatDuration(s.dur_us.p90)],
    ['busy', formatDuration(s.gpu_busy_us.median)],
    ['scheduling', formatDuration(s.scheduling_us.median)],
    ['tokens', formatCount(s.tokens)],
    ['rate', s.tokens_per_s === null ? DASH : formatCount(Math.round(s.tokens_per_s))],
    ['estimate', formatDuration(row.estimate)],
    ['replayed', s.graph_replayed_pct === null ? DASH : formatPercent(s.graph_replayed_pct, 1)],
    ['classes', classBar(row)],
  ];
  return h(
    'tr',
    { testid: 'serving-phase-row', dataset: { phase: row.phase, count: String(s.count) } },
    cells.map(([col, value]) =>
      h(
        'td',
        { dataset: { col }, class: col === 'phase' || col === 'classes' ? '' : 'ks-num' },
        value,
      ),
    ),
  );
}

/** The phase's kernel time split by the taxonomy's classes, as one stacked bar. */
function classBar(row: PhaseRow): Children {
  const shown = row.classShares.filter((c) => c.share > 0);
  if (!shown.length) return DASH;
  return h(
    'div',
    {
      class: 'ks-serving-classes',
      title: shown
        .map((c) => `${c.cls}: ${formatDuration(c.us)} (${formatPercent(100 * c.share, 1)})`)
        .join('\n'),
    },
    shown.map((c) =>
      h('span', {
        dataset: { cls: c.cls },
        style: `width:${(100 * c.share).toFixed(2)}%;background:${CLASS_COLOR[c.cls] ?? '#9c9c9c'}`,
      }),
    ),
  );
}

export const PHASE_HEADERS: [string, string][] = [
  ['Phase', 'What decided each iteration’s phase is in its row’s tooltip'],
  ['Iterations', ''],
  ['Median', 'Median iteration duration'],
  ['p90', '90th percentile (linear between ranks)'],
  ['GPU busy', 'Median GPU busy time per iteration'],
  ['Scheduling', 'Median host time before the first launch'],
  [
    'Tokens',
    'Over the iterations whose tokens are known (the engine’s, or inferred from op shapes)',
  ],
  ['Tokens/s', 'Those tokens over those iterations’ summed durations'],
  ['Per token', 'Prefill: the first-token estimate; decode: per output token (median iteration)'],
  ['Replayed', 'Share of kernel time replayed from graphs'],
  ['Kernel time by class', 'The kernel taxonomy’s classes (hover for times)'],
];
