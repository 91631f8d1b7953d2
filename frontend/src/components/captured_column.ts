// The "Captured at" column of a table whose rows ran as CUDA/HIP-graph replays: where the
// op that launched them was captured (a profiled capture's model-code frames, innermost
// first), its first frame a link to the editor; hovering lists every frame.

import type { SourceFrame } from '../api/types';
import type { ColumnSpec } from './columns';
import { h } from './dom';
import { sourceAnchor } from './editor_links';

/** "file:line" of a source frame, the file's last part. */
export function sourceFrameText(f: { filename: string; line: number | null }): string {
  return `${f.filename.split('/').pop() ?? f.filename}${f.line === null ? '' : `:${f.line}`}`;
}

/** What a table writes for a frame: `file:line` of model code, and the generated
 *  wrapper so named (its file is a hash: `c6t2yy….py`). */
export function sourceFrameLabel(f: SourceFrame): string {
  return f.generated
    ? `generated wrapper${f.line === null ? '' : `, line ${f.line}`}`
    : sourceFrameText(f);
}

/** The column, for rows whose capture frames `frames` gives ([] for none). */
export function capturedAtColumn<R>(
  frames: (row: R) => readonly SourceFrame[],
  testid: string,
): ColumnSpec<R> {
  return {
    key: 'captured_at',
    label: 'Captured at',
    tooltip:
      'Graph-replayed work: the code that launched it while the CUDA graph was captured ' +
      '(from the profiled capture, with_stack=True); hover for every frame. Click to sort.',
    minWidth: 180,
    grow: 1.2,
    value: (row) => frames(row).map(sourceFrameText).join(' > ') || null,
    cell: (row) => {
      const all = frames(row);
      const first = all[0];
      if (!first) return h('span', { class: 'ks-no' }, '—');
      const title = all
        .map((f) => `${f.filename}:${f.line ?? '?'} ${f.name}${f.generated ? ' (generated)' : ''}`)
        .join('\n');
      const where = sourceAnchor(first.filename, first.line, sourceFrameLabel(first), testid);
      return h('span', { class: 'ks-source-cell', title }, where);
    },
  };
}
