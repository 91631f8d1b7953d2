import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ModuleRow } from '../../api/types';
import {
  childrenOf,
  initialOpen,
  operatorsState,
  parentIds,
  topOp,
  traceState,
  visibleRows,
} from './model';

/** A row of the tree; numbers that a test does not read are zeros. */
function row(id: number, parent: number, depth: number, name: string, host: number): ModuleRow {
  return {
    id,
    parent,
    depth,
    name,
    module_type: name.replace(/_\d+$/, ''),
    path: name,
    calls: 1,
    host_self_us: 0,
    host_total_us: host,
    device_self_us: 0,
    device_total_us: 100 - host,
    first_start_us: 10 * id,
    first_end_us: 10 * id + 5,
    first_row: id,
    ops: [],
  };
}

// Net_0 ─┬─ Block_0 ── Linear_0
//        └─ Head_0        (the server's order: host total, largest first)
const ROWS = [
  row(0, -1, 0, 'Net_0', 90),
  row(1, 0, 1, 'Block_0', 60),
  row(2, 1, 2, 'Linear_0', 50),
  row(3, 0, 1, 'Head_0', 20),
];
const names = (rows: readonly ModuleRow[]) => rows.map((r) => r.name);

describe('module tree', () => {
  it('groups rows by parent, in order', () => {
    const children = childrenOf(ROWS);
    assert.deepEqual(names(children.get(0) ?? []), ['Block_0', 'Head_0']);
    assert.deepEqual(names(children.get(-1) ?? []), ['Net_0']);
    assert.deepEqual([...parentIds(ROWS)].sort(), [0, 1]);
  });

  it('shows the open rows’ children only', () => {
    assert.deepEqual(names(visibleRows(ROWS, new Set(), undefined)), ['Net_0']);
    assert.deepEqual(names(visibleRows(ROWS, new Set([0]), undefined)), [
      'Net_0',
      'Block_0',
      'Head_0',
    ]);
    assert.deepEqual(names(visibleRows(ROWS, new Set([0, 1]), undefined)), [
      'Net_0',
      'Block_0',
      'Linear_0',
      'Head_0',
    ]);
  });

  it('sorts each level, children staying under their parent', () => {
    const open = new Set([0, 1]);
    // Device total is 100 - host: ascending host order reversed.
    const byDevice = visibleRows(ROWS, open, { key: 'device_total_us', dir: 'desc' });
    assert.deepEqual(names(byDevice), ['Net_0', 'Head_0', 'Block_0', 'Linear_0']);
    const byName = visibleRows(ROWS, open, { key: 'name', dir: 'asc' });
    assert.deepEqual(names(byName), ['Net_0', 'Block_0', 'Linear_0', 'Head_0']);
  });

  it('opens the first two levels', () => {
    assert.deepEqual([...initialOpen(ROWS)], [0, 1]);
    assert.deepEqual([...initialOpen(ROWS, 1)], [0]);
  });
});

describe('module links', () => {
  it('opens the trace at the first call and the operators at the top op', () => {
    const linear = {
      ...row(2, 1, 2, 'Linear_0', 50),
      ops: [{ name: 'aten::linear', calls: 2, host_total_us: 1, device_total_us: 2 }],
    };
    assert.equal(topOp(linear), 'aten::linear');
    assert.equal(topOp(row(0, -1, 0, 'Net_0', 90)), undefined);
    assert.deepEqual(traceState(linear), { view: 'trace', t0: '20', t1: '25' });
    assert.deepEqual(traceState({ ...linear, first_end_us: 20 }), {
      view: 'trace',
      t0: '20',
      t1: '21',
    });
    assert.deepEqual(operatorsState('aten::linear'), {
      view: 'operators',
      'operators.search': 'aten::linear',
    });
  });
});
