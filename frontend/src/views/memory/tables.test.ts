import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AllocationRow } from '../../api/types';
import { colAttrs, toColumns } from '../../components/columns';
import { sortRows } from '../../components/table_model';
import { allocationViews, OPERATOR_CSV_HEADER } from './model';
import { allocationColumns, OPERATOR_COLUMNS } from './tables';

function allocation(state: string, size: number, extra: Partial<AllocationRow> = {}) {
  return {
    device: 'GPU0',
    state,
    size_bytes: size,
    alloc_us: 1100,
    free_us: 1200,
    duration_us: 100,
    op: 'aten::empty',
    parent_op: null,
    free_op: null,
    ...extra,
  } satisfies AllocationRow;
}

describe('memory table columns', () => {
  const views = allocationViews([
    allocation('paired', 1024, { parent_op: 'aten::linear' }),
    allocation('never_freed', 64, { free_us: null, duration_us: null }),
    allocation('freed_unseen', 8, { alloc_us: null, op: 'aten::resize_' }),
  ]);
  const columns = toColumns(allocationColumns(1000), colAttrs);
  const byKey = new Map(columns.map((c) => [c.key, c]));

  it('keeps the allocation and operator columns in their order', () => {
    assert.deepEqual(
      columns.map((c) => c.key),
      ['state', 'size', 'alloc_op', 'parent_op', 'alloc_us', 'free_op', 'free_us', 'duration'],
    );
    // The operator table shows the CSV's fields, in the CSV's order (less the counts of
    // self allocations and releases).
    const inCsv = OPERATOR_COLUMNS.map((c) =>
      OPERATOR_CSV_HEADER.indexOf(c.key === 'name' ? 'operator' : c.key),
    );
    assert.equal(inCsv.length, 10);
    assert.ok(inCsv.every((at, i) => at > (inCsv[i - 1] ?? 0)));
  });

  it('sorts the state by what needs a look first, the rest by the API value', () => {
    const state = byKey.get('state')?.sortValue;
    assert.ok(state);
    assert.deepEqual(
      sortRows(views, state, 'asc').map((v) => v.row.state),
      ['never_freed', 'freed_unseen', 'paired'],
    );
    const allocatedBy = byKey.get('alloc_op')?.sortValue;
    assert.deepEqual(
      views.map((v) => allocatedBy?.(v)),
      ['aten::empty', 'aten::empty', null],
    );
  });

  it('marks cells with the column and the raw value, missing as empty', () => {
    const [paired, neverFreed] = views;
    assert.ok(paired && neverFreed);
    assert.deepEqual(byKey.get('size')?.cellAttrs?.(paired), {
      'data-col': 'size',
      'data-value': '1024',
    });
    assert.deepEqual(byKey.get('free_us')?.cellAttrs?.(neverFreed), {
      'data-col': 'free_us',
      'data-value': '',
    });
  });
});
