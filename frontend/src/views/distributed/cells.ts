// Cells of the Distributed page's tables that show more than one formatted value.

import { num } from '../../components/columns';
import { h, type Children } from '../../components/dom';
import { formatDuration, formatPercent } from '../../components/format';
import {
  CAUSE_HELP,
  causeLabel,
  excessParts,
  lateness,
  PART_COLOR,
  type RankRow,
  type StragglerRow,
} from './model';

const CAUSE_COLOR: Record<string, string> = {
  computation: PART_COLOR.computation,
  dataloader: '#edc948',
  host_gap: PART_COLOR.other,
  communication: PART_COLOR.communication,
  arrived_late: '#b07aa1',
  unknown: 'transparent',
};

export const MISSING = (): HTMLElement => h('span', { class: 'ks-muted' }, '—');

/** A duration with its share underneath (as the Overview's table). */
export function durationCell(value: number | null | undefined, pctValue: number | null): Children {
  if (value === null || value === undefined) return MISSING();
  return h(
    'span',
    { class: value === 0 ? 'ks-stack ks-zero' : 'ks-stack' },
    num(formatDuration(value)),
    pctValue !== null ? h('span', { class: 'ks-pct' }, formatPercent(pctValue)) : null,
  );
}

export function rankCell(row: RankRow): HTMLElement {
  return h(
    'span',
    { class: 'ks-dist-rank-cell' },
    num(String(row.rank)),
    row.partial
      ? h('span', { class: 'ks-dist-tag', title: 'The trace file was cut short' }, 'partial')
      : null,
  );
}

export function causeCell(row: StragglerRow): Children {
  const s = row.straggler;
  if (!s) return MISSING();
  const excess = excessParts(s);
  return h(
    'span',
    {
      class: 'ks-dist-cause',
      title: [
        CAUSE_HELP[s.cause] ?? '',
        ...lateness(s),
        `Excess over the other ranks’ median: ${excess.join(', ')}`,
      ].join('\n'),
    },
    h('span', {
      class: 'ks-dist-cause-dot',
      style: `background:${CAUSE_COLOR[s.cause] ?? 'transparent'}`,
    }),
    causeLabel(s.cause),
    s.cause !== 'unknown'
      ? h('span', { class: 'ks-muted' }, `+${formatDuration(s.cause_excess_us)}`)
      : null,
  );
}

export function lateRankCell(row: StragglerRow): Children {
  return row.straggler
    ? h(
        'span',
        null,
        num(String(row.straggler.rank)),
        h('span', { class: 'ks-muted' }, ` · ${row.straggler.worker}`),
      )
    : h('span', { class: 'ks-muted', title: 'Fewer than two ranks have this step' }, '—');
}
