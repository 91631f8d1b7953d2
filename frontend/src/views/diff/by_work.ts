// The Diff's cross-vendor sections: kernels paired by what they do (the taxonomy's work
// class, the launching op and its input shapes; `kernels_by_work`), not by name, so an
// MI300X's `Cijk_…` GEMM faces an H100's `sm90_xmma_gemm_…`; and modules paired by path
// (`modules`). Plain tables: a few dozen rows at most.

import type { DiffView, ModuleRatio, WorkPair, WorkSide } from '../../api/types';
import { h } from '../../components/dom';
import { formatDuration, formatPercent } from '../../components/format';
import * as kit from '../page_kit';

const MATCH_TEXT: Readonly<Record<WorkPair['match'], string>> = {
  shape: 'op and shapes',
  op: 'op',
  work: 'work class',
  base_only: 'base only',
  target_only: 'target only',
};

function sideCell(side: WorkSide | null): HTMLElement {
  if (side === null) return h('td', { class: 'ks-muted' }, '—');
  const more =
    side.kernel_names > side.kernels.length ? ` (+${side.kernel_names - side.kernels.length})` : '';
  return h(
    'td',
    { class: 'ks-diff-work-kernels' },
    h('div', null, `${formatDuration(side.total_us)} · ${side.calls} calls`),
    h(
      'div',
      { class: 'ks-muted ks-small', title: side.kernels.join('\n') },
      side.kernels.join(', ') + more,
    ),
  );
}

function ratioText(ratio: number | null): string {
  return ratio === null ? '—' : `${ratio.toFixed(3)}×`;
}

function pairRow(pair: WorkPair): HTMLElement {
  const op = pair.op === null ? '—' : pair.op || '(no op)';
  const shape = pair.input_shape === null ? '' : JSON.stringify(pair.input_shape);
  return h(
    'tr',
    {
      testid: 'diff-work-pair',
      dataset: { work: pair.work, op: pair.op ?? '', match: pair.match },
    },
    h('td', null, pair.work),
    h('td', { class: 'ks-mono ks-diff-work-op', title: shape }, shape ? `${op} ${shape}` : op),
    h('td', null, MATCH_TEXT[pair.match]),
    sideCell(pair.base),
    sideCell(pair.target),
    h('td', { class: 'ks-num' }, formatDuration(pair.per_step_us.base)),
    h('td', { class: 'ks-num' }, formatDuration(pair.per_step_us.target)),
    h('td', { class: 'ks-num' }, formatPercent(pair.total_us.delta_pct)),
    h('td', { class: 'ks-num', testid: 'diff-work-ratio' }, ratioText(pair.ratio)),
  );
}

function table(testid: string, head: string[], rows: HTMLElement[]): HTMLElement {
  return h(
    'table',
    { class: 'ks-diff-work-table', testid },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        head.map((t) => h('th', null, t)),
      ),
    ),
    h('tbody', null, rows),
  );
}

/** "Kernels by what they do", or null when a side ran no kernels. */
export function byWorkSection(view: DiffView): HTMLElement | null {
  if (!view.kernels_by_work.length) return null;
  const [base, target] = view.vendors;
  const vendors = base && target && base !== target ? ` (${base} against ${target})` : '';
  return kit.section(
    {
      anchor: 'by-work',
      testid: 'diff-by-work',
      title: 'Kernels by what they do',
      intro: `Kernels of both sides paired by work class, launching op and its input shapes, not by name${vendors}: first on the same op and shapes, then the same op, then the same work class.`,
    },
    table(
      'diff-work-table',
      [
        'Work',
        'Op (input shapes)',
        'Paired by',
        'Base',
        'Target',
        'Base / step',
        'Target / step',
        'Δ %',
        'Target / base',
      ],
      view.kernels_by_work.map(pairRow),
    ),
  );
}

function moduleRow(m: ModuleRatio): HTMLElement {
  return h(
    'tr',
    { testid: 'diff-module', dataset: { path: m.path } },
    h('td', { class: 'ks-mono', style: `padding-left: ${8 + 12 * m.depth}px` }, m.path),
    h('td', null, m.module_type),
    h('td', { class: 'ks-num' }, formatDuration(m.time_us.base)),
    h('td', { class: 'ks-num' }, formatDuration(m.time_us.target)),
    h('td', { class: 'ks-num' }, ratioText(m.ratio)),
  );
}

/** Per-module time ratios (modules on both sides, by path), or null when none is shared. */
export function modulesSection(view: DiffView): HTMLElement | null {
  if (!view.modules.length) return null;
  const metric = view.modules[0]?.metric === 'device_total_us' ? 'device' : 'host';
  return kit.section(
    {
      anchor: 'modules',
      testid: 'diff-modules',
      title: 'Modules',
      intro: `Modules on both sides, by path: ${metric} total time and target / base.`,
    },
    table(
      'diff-modules-table',
      ['Module', 'Type', 'Base', 'Target', 'Target / base'],
      view.modules.map(moduleRow),
    ),
  );
}
