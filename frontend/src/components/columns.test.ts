import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FORMAT, sortValueOf, toColumns, valueText, type ColumnSpec } from './columns';

interface Row {
  name: string;
  calls: number | null;
  used: boolean;
  grid: number[];
}

const row: Row = { name: 'gemm', calls: 3, used: true, grid: [2, 1, 1] };

const CALLS: ColumnSpec<Row> = {
  key: 'calls',
  label: 'Calls',
  align: 'right',
  value: (r) => r.calls,
  format: FORMAT.count,
};
const GRID: ColumnSpec<Row> = {
  key: 'grid',
  label: 'Grid',
  value: (r) => r.grid,
  sort: (r) => r.grid[0],
};

const SPECS: ColumnSpec<Row>[] = [
  { key: 'name', label: 'Name', value: (r) => r.name, testid: (r) => `k-${r.name}` },
  CALLS,
  { key: 'used', label: 'Used', value: (r) => r.used },
  GRID,
  { key: 'link', label: 'Link', value: () => null, cell: () => 'open', sort: false },
];

describe('toColumns', () => {
  const columns = toColumns(SPECS);
  const byKey = new Map(columns.map((c) => [c.key, c]));

  it('keeps the order, keys and labels of the specs', () => {
    assert.deepEqual(
      columns.map((c) => [c.key, c.label]),
      SPECS.map((s) => [s.key, s.label]),
    );
    assert.equal(byKey.get('calls')?.align, 'right');
    assert.equal(byKey.get('name')?.align, undefined);
  });

  it('sorts by the value unless the spec sorts otherwise or not at all', () => {
    assert.equal(byKey.get('name')?.sortValue?.(row), 'gemm');
    assert.equal(byKey.get('used')?.sortValue?.(row), 1);
    assert.equal(byKey.get('grid')?.sortValue?.(row), 2);
    assert.equal(byKey.get('link')?.sortValue, undefined);
  });

  it('shows text values as text, "—" when missing, and a custom cell as given', () => {
    assert.equal(byKey.get('name')?.cell(row), 'gemm');
    assert.equal(byKey.get('link')?.cell(row), 'open');
    assert.equal(FORMAT.text(null), '—');
  });

  it('gives a test id with its value only to cells that ask for one', () => {
    assert.deepEqual(byKey.get('name')?.cellAttrs?.(row), {
      'data-testid': 'k-gemm',
      'data-value': 'gemm',
    });
    assert.equal(byKey.get('calls')?.cellAttrs, undefined);
  });

  it('applies a table-wide attribute rule to every cell, with the cell tooltip', () => {
    const specs: ColumnSpec<Row>[] = [
      { ...CALLS, cellTooltip: (r) => `${r.calls ?? 0} calls` },
      GRID,
    ];
    const [calls, grid] = toColumns(specs, (key, value) => ({
      'data-col': key,
      'data-value': valueText(value),
    }));
    assert.deepEqual(calls?.cellAttrs?.(row), {
      'data-col': 'calls',
      'data-value': '3',
      title: '3 calls',
    });
    assert.deepEqual(grid?.cellAttrs?.(row), { 'data-col': 'grid', 'data-value': '[2,1,1]' });
  });
});

describe('sortValueOf', () => {
  it('keeps numbers and text, turns yes/no into 1/0 and the rest into missing', () => {
    assert.equal(sortValueOf(2.5), 2.5);
    assert.equal(sortValueOf('a'), 'a');
    assert.equal(sortValueOf(false), 0);
    assert.equal(sortValueOf(null), null);
    assert.equal(sortValueOf([1, 2]), null);
  });
});
