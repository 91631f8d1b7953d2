// Pure transforms from the `kernels` response to what the Kernel page shows: short
// kernel names, launch dimensions, the tensor-core and top-kernel pies, CSV rows.

import type { KernelGroupBy, KernelRow, KernelsResponse } from '../../api/types';
import type { CsvCell } from '../../components/csv';
import { sourceFrameLabel, sourceFrameText } from '../../components/captured_column';
import { topN, type Slice } from '../../components/topn';

export const GROUP_BYS: readonly KernelGroupBy[] = ['name', 'op'];

export const GROUP_LABEL: Record<KernelGroupBy, string> = {
  name: 'Kernel',
  op: 'Kernel + launching operator',
};

export const TOP_N = 10;

export const TC_USING = 'Using Tensor Cores';
export const TC_NOT_USING = 'Not using Tensor Cores';
export const TC_UNKNOWN = 'Unknown kind';

/** A column-header-sized name of the matrix units ("Tensor Cores", "MFMA"). */
export function matrixCoreShort(name: string): string {
  if (name === 'Tensor Cores') return name;
  return name.includes('MFMA') ? 'MFMA' : 'Matrix cores';
}
/** Pie colours by slice position: using, not using, unknown. */
export const TC_SLICE_COLORS = ['#59a14f', '#4e79a7', '#bab0ac'];

/** Drops a balanced <...> or (...) group starting at `open` in `text`; -1 if unbalanced. */
function skipGroup(text: string, at: number, open: string, close: string): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === open) depth++;
    else if (c === close) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * A readable kernel name: "void ns::kernel<float, 512>(int, float*)" → "ns::kernel<…>".
 * Leading "void ", template arguments and the parameter list are folded.
 */
export function shortKernelName(name: string): string {
  let text = name.trim().replace(/^void\s+/, '');
  // The parameter list: the last top-level "(...)" at the end.
  if (text.endsWith(')')) {
    let depth = 0;
    for (let i = text.length - 1; i >= 0; i--) {
      const c = text[i];
      if (c === ')') depth++;
      else if (c === '(') {
        depth--;
        if (depth === 0) {
          if (i > 0) text = text.slice(0, i).trimEnd();
          break;
        }
      }
    }
  }
  let out = '';
  for (let i = 0; i < text.length;) {
    if (text[i] === '<') {
      const end = skipGroup(text, i, '<', '>');
      if (end < 0) {
        out += text.slice(i);
        break;
      }
      out += '<…>';
      i = end;
    } else {
      out += text.charAt(i);
      i++;
    }
  }
  return out || name;
}

/** How much of a first template argument tells two folded names apart. */
const ARG_CHARS = 40;

/**
 * Each name's label: its short name, except where different names fold to one short name
 * (`cutlass::Kernel2<…>` twice): those keep their first template argument (its first
 * ARG_CHARS characters), and where that still does not tell them apart, a number.
 */
export function kernelLabels(names: readonly string[]): Map<string, string> {
  const byShort = new Map<string, string[]>();
  for (const name of new Set(names)) {
    const short = shortKernelName(name);
    byShort.set(short, [...(byShort.get(short) ?? []), name]);
  }
  const labels = new Map<string, string>();
  for (const [short, group] of byShort) {
    const kept = group.map((name) => withFirstArgument(name) ?? short);
    const distinct = new Set(kept).size === group.length;
    group.forEach((name, i) => {
      const label = group.length === 1 ? short : distinct ? kept[i] : `${short} #${i + 1}`;
      labels.set(name, label ?? short);
    });
  }
  return labels;
}

/** "ns::k<first arg…>" of "void ns::k<first arg, more>(params)", or null without one. */
function withFirstArgument(name: string): string | null {
  const text = name.trim().replace(/^void\s+/, '');
  const open = text.indexOf('<');
  if (open < 0) return null;
  const end = skipGroup(text, open, '<', '>');
  if (end < 0) return null;
  const inner = text.slice(open + 1, end - 1);
  let depth = 0;
  let cut = inner.length;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '<' || c === '(') depth++;
    else if (c === '>' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      cut = i;
      break;
    }
  }
  const first = inner.slice(0, cut).trim();
  const more = cut < inner.length ? ', …' : '';
  const shown = first.length > ARG_CHARS ? `${first.slice(0, ARG_CHARS)}…` : `${first}${more}`;
  return `${text.slice(0, open)}<${shown}>`;
}

/** "[18, 25, 32]", or "—" when unknown. */
export function dimsText(dims: readonly number[] | null | undefined): string {
  return dims?.length ? `[${dims.join(', ')}]` : '—';
}

/** Product of the dimensions (for sorting grids and blocks by size). */
export function dimsSize(dims: readonly number[] | null | undefined): number | null {
  return dims?.length ? dims.reduce((a, b) => a * b, 1) : null;
}

export function searchTexts(row: KernelRow): string[] {
  return [row.name, row.op_name ?? ''];
}

/** The matrix-core pie: kernel time using / not using tensor cores (MFMA on AMD), and the
 * time whose use the kernel taxonomy cannot tell. */
export function tensorCorePie(k: KernelsResponse): Slice[] {
  const unknown = k.tensor_core_unknown_time_us;
  const total = k.tensor_core_time_us + k.non_tensor_core_time_us + unknown;
  if (!(total > 0)) return [];
  const unit = k.matrix_core_name;
  const slice = (name: string, value: number): Slice => ({
    name,
    value,
    percent: (value / total) * 100,
    count: 1,
    other: false,
  });
  const slices = [
    slice(`Using ${unit}`, k.tensor_core_time_us),
    slice(`Not using ${unit}`, k.non_tensor_core_time_us),
  ];
  if (unknown > 0) slices.push(slice(TC_UNKNOWN, unknown));
  return slices;
}

/** Colours of `tensorCorePie`'s slices, by name. */
export function tensorCoreColors(slices: readonly Slice[]): Record<string, string> {
  return Object.fromEntries(slices.map((s, i) => [s.name, TC_SLICE_COLORS[i] ?? '#bab0ac']));
}

/** Top kernels by total time (rows of one name summed across devices and ops). */
export function kernelPie(rows: readonly KernelRow[], n = TOP_N): Slice[] {
  return topN(
    rows,
    (r) => r.name,
    (r) => r.total_us,
    n,
    'Other kernels',
  );
}

/**
 * Kernel time launched by tensor-core-eligible operators that did not use tensor cores:
 * the time a change of dtype (or of the kernel chosen) might move onto tensor cores.
 */
export function eligibleWithoutTensorCores(rows: readonly KernelRow[]): number {
  let sum = 0;
  // Only kernels known not to use them: an unknown one may.
  for (const r of rows)
    if (r.op_tensor_core_eligible && r.tensor_cores_used === false) sum += r.total_us;
  return sum;
}

export function kernelCsv(
  rows: readonly KernelRow[],
  groupBy: KernelGroupBy,
): { header: string[]; rows: CsvCell[][] } {
  const header = ['Name'];
  if (groupBy === 'op') header.push('Operator');
  header.push(
    'Device',
    'Stream',
    'Calls',
    'Total Duration (us)',
    'Mean Duration (us)',
    'Min Duration (us)',
    'Max Duration (us)',
    'Mean Blocks Per SM',
    'Mean Est. Achieved Occupancy (%)',
    'Registers Per Thread',
    'Shared Memory (bytes)',
    'Grid',
    'Block',
    'Tensor Cores Used',
    'Op Tensor Cores Eligible',
  );
  const out = rows.map((r) => {
    const cells: CsvCell[] = [r.name];
    if (groupBy === 'op') cells.push(r.op_name ?? '');
    cells.push(
      r.device,
      r.stream,
      r.calls,
      r.total_us,
      r.mean_us,
      r.min_us,
      r.max_us,
      r.blocks_per_sm,
      r.occupancy_pct,
      r.registers_per_thread,
      r.shared_memory,
      r.grid ? dimsText(r.grid) : null,
      r.block ? dimsText(r.block) : null,
      r.tensor_cores_used,
      r.op_tensor_core_eligible,
    );
    return cells;
  });
  return { header, rows: out };
}

/** `file:line` of a source frame, and how the Source column writes it (the generated
 *  wrapper so named): the tables' shared rule (components/captured_column.ts). */
export { sourceFrameText as frameText, sourceFrameLabel as frameLabel };

/** The aten ops fused in an Inductor kernel, short ("view + gelu"). */
export function fusedText(ops: readonly string[] | undefined): string {
  if (!ops?.length) return 'fused ops not known';
  return ops.map((o) => o.replace(/^aten::/, '')).join(' + ');
}

/** An Inductor kernel's source frames as one line, model code first ('' when none). */
export function sourceText(row: KernelRow): string {
  return (row.source ?? []).map(sourceFrameText).join(' > ');
}

/** The CUPTI fields (beside the launch configuration) some row records, in column order. */
export function recordedCuptiFields(
  rows: readonly KernelRow[],
): ('occupancy_limited_by' | 'priority' | 'queue_mean_us')[] {
  return (['occupancy_limited_by', 'priority', 'queue_mean_us'] as const).filter((key) =>
    rows.some((r) => r[key] !== null),
  );
}
