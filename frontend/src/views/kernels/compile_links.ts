// The Kernels page's link from Inductor kernels to the compiles that made them, for a run
// with TORCH_TRACE compile logs: a kernel is matched by name with the kernels each
// compile's generated code defines (the `compile` view's `kernels`); where its source
// frames name the generated file, only the compile of that file (exact), else every
// compile that defines a kernel so named (a recompile generates the same names again).
// Shown under the table, with a link to the Compile page.

import type { CompiledKernel, CompileResponse, KernelRow } from '../../api/types';
import { h } from '../../components/dom';
import type { ViewContext } from '../types';

export interface KernelCompiles {
  name: string;
  compileIds: string[];
  /** The kernel's source names one generated file: its compile, not just its name. */
  exact: boolean;
}

function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

/** The compiles of each kernel row whose name a compile's generated code defines. */
export function kernelCompiles(
  rows: readonly KernelRow[],
  view: CompileResponse,
): KernelCompiles[] {
  const byName = new Map<string, CompiledKernel>(view.kernels.map((k) => [k.name, k]));
  const out: KernelCompiles[] = [];
  for (const row of rows) {
    const made = byName.get(row.name);
    if (!made) continue;
    const files = new Set((row.source ?? []).map((f) => fileName(f.filename)));
    const exact = made.compiles.filter((c) => c.wrappers.some((w) => files.has(w)));
    const sites = exact.length ? exact : made.compiles;
    const ids = sites.map((c) =>
      c.rank === null ? c.compile_id : `${c.compile_id} (rank ${c.rank})`,
    );
    out.push({ name: row.name, compileIds: [...new Set(ids)], exact: exact.length > 0 });
  }
  return out;
}

/** The note under the table; null when no kernel of the page was compiled per the logs. */
export async function compileLinks(
  ctx: ViewContext,
  rows: readonly KernelRow[],
): Promise<HTMLElement | null> {
  if (!ctx.runViews.includes('compile')) return null;
  const { run, span } = ctx.key;
  const view = await ctx.api.getReady('compile', { run, span }, ctx.signal);
  const found = kernelCompiles(rows, view);
  if (found.length === 0) return null;
  return h(
    'div',
    { class: 'ks-section', testid: 'kernel-compiles' },
    h('h3', { class: 'ks-section-title' }, 'Compiled by'),
    h(
      'ul',
      { class: 'ks-small' },
      ...found.map((k) =>
        h(
          'li',
          { dataset: { kernel: k.name } },
          h('code', null, k.name),
          `: compile ${k.compileIds.join(', ')}${k.exact ? '' : ' (by name)'}`,
        ),
      ),
    ),
    h(
      'a',
      { attrs: { href: ctx.link({ view: 'compile' }), target: '_top' } },
      'The compiles on the Compile page ↗',
    ),
  );
}
