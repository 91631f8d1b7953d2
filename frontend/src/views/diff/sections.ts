// The Diff page's sections that need no state: the two sides named, the notices (devices
// differ, the route's notes), the headline tiles, and the side-by-side tables (metric,
// base, target, delta, delta %) of steps and breakdown, GPU, memory and communication.

import type { DiffView, SideSummary, SpanKey } from '../../api/types';
import { colAttrs } from '../../components/columns';
import { h } from '../../components/dom';
import { toColumns } from '../../components/columns';
import { VirtualTable } from '../../components/table';
import { ensureStyle } from '../../components/view_style';
import * as kit from '../page_kit';
import { compareColumns } from './columns';
import {
  formatDelta,
  formatDeltaPct,
  formatValue,
  tone,
  toneClass,
  type CompareRow,
} from './model';
import type { Target } from './state';

const CSS = `
.ks-diff-better { color: var(--ks-good); }
.ks-diff-worse { color: var(--ks-error-text); }
.ks-diff-status-added { color: var(--ks-good); }
.ks-diff-status-removed { color: var(--ks-error-text); }
.ks-diff-sides { border-collapse: collapse; font-size: 13px; }
.ks-diff-sides th, .ks-diff-sides td { text-align: left; padding: 4px 12px 4px 0; }
.ks-diff-chart { height: 320px; }
.ks-diff-work-table { border-collapse: collapse; font-size: 13px; width: 100%; }
.ks-diff-work-table th, .ks-diff-work-table td {
  text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--ks-border); vertical-align: top;
}
.ks-diff-work-table td.ks-num { text-align: right; }
.ks-diff-work-kernels div { max-width: 24ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
/* Long shapes wrap inside the cell: at 1280 px the table fits without sideways scrolling. */
.ks-diff-work-op { max-width: 28ch; overflow-wrap: anywhere; }
`;

export function ensureDiffStyle(): void {
  ensureStyle('diff', CSS);
}

function sideCells(label: string, name: string, side: SideSummary): HTMLElement {
  return h(
    'tr',
    { testid: `diff-side-${label.toLowerCase()}` },
    h('th', null, label),
    h('td', { class: 'ks-mono' }, name),
    h('td', null, side.device_type),
    h('td', null, side.devices.join(', ') || '—'),
    h('td', null, side.steps_source.replace(/_/g, ' ')),
  );
}

/** Which trace is which: run · worker · span, device and where the steps come from. */
export function sidesTable(key: SpanKey, target: Target, view: DiffView): HTMLElement {
  const name = (t: { run: string; worker: string; span?: string }): string =>
    t.span ? `${t.run} · ${t.worker} · span ${t.span}` : `${t.run} · ${t.worker} · first span`;
  return h(
    'table',
    { class: 'ks-diff-sides', testid: 'diff-sides' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['', 'Trace', 'Device', 'Devices', 'Steps from'].map((t) => h('th', null, t)),
      ),
    ),
    h(
      'tbody',
      null,
      sideCells('Base', name(key), view.base),
      sideCells('Target', name(target), view.target),
    ),
  );
}

/** "The devices differ" and each of the route's notes. */
export function diffNotices(view: DiffView): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (view.devices_differ) {
    out.push(
      h(
        'div',
        { class: 'ks-notice ks-notice-warn', testid: 'diff-devices-differ', role: 'note' },
        'The two traces ran on different devices: times compare hardware as well as code.',
      ),
    );
  }
  for (const note of view.notes) {
    out.push(h('div', { class: 'ks-notice', testid: 'diff-note', role: 'note' }, note));
  }
  return out;
}

/** A headline tile: the target's value, the delta and % underneath, in its tone. */
export function deltaTile(row: CompareRow, testid: string): HTMLElement {
  const c = row.value;
  const tile = kit.tile(
    row.label,
    formatValue(c.target, row.metric.unit),
    `base ${formatValue(c.base, row.metric.unit)}`,
    testid,
  );
  tile.append(
    h(
      'div',
      {
        class: `ks-tile-detail ${toneClass(tone(c, row.metric.better))}`,
        testid: `${testid}-delta`,
        dataset: { value: c.delta === null ? '' : String(c.delta) },
      },
      `${formatDelta(c, row.metric.unit)} (${formatDeltaPct(c)})`,
    ),
  );
  return tile;
}

/** A side-by-side table; `grouped` adds the column of what a line is of (a device...). */
export function compareTable(
  testid: string,
  caption: string,
  rows: readonly CompareRow[],
  grouped: boolean,
): VirtualTable<CompareRow> {
  return new VirtualTable<CompareRow>({
    columns: toColumns(compareColumns(grouped), colAttrs),
    rows,
    testid,
    caption,
    rowHeight: 32,
    maxHeight: 640,
    rowAttrs: (row) => ({ 'data-key': row.key }),
    emptyText: 'Nothing to compare.',
  });
}
