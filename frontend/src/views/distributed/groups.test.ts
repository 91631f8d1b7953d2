import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { LinkRow } from '../../api/types';
import { FIXTURE } from './fixture';
import { cellRanks, groupTraceState, heatColor, heatGrid, HEAT_MAX_CELLS } from './groups';

function link(src: number, dst: number, bytes: number | null, time_us: number): LinkRow {
  return { src, dst, ops: 1, bytes, time_us, gbps: null };
}

describe('heatGrid', () => {
  it('draws one cell a rank for a small job, bandwidth = bytes / time', () => {
    const grid = heatGrid([link(0, 1, 4_000_000, 100), link(1, 2, 1_000_000, 100)], 4);
    assert.ok(grid);
    assert.equal(grid.block, 1);
    assert.equal(grid.size, 4);
    assert.equal(grid.gbps[0 * 4 + 1], 40); // 4 MB in 100 µs
    assert.equal(grid.gbps[1 * 4 + 2], 10);
    assert.ok(Number.isNaN(grid.gbps[2 * 4 + 3] ?? 0));
    assert.equal(grid.min, 10);
    assert.equal(grid.max, 40);
    assert.equal(cellRanks(grid, 2), 'rank 2');
  });

  it('aggregates 2,048 ranks into blocks, bytes and time summed per block pair', () => {
    const links: LinkRow[] = [];
    for (let r = 0; r + 8 < 2048; r += 8) links.push(link(r, r + 8, 1_000_000, 50));
    links.push(link(1000, 1008, 1_000_000, 500)); // one slow pair
    const grid = heatGrid(links, 2048);
    assert.ok(grid);
    assert.equal(grid.size, HEAT_MAX_CELLS);
    assert.equal(grid.block, 16);
    assert.equal(cellRanks(grid, 62), 'ranks 992–1007');
    // Block 62 (ranks 992-1007) -> block 63 (1008-1023): 1000 -> 1008 twice, the usual
    // 50 µs and the slow 500 µs: 2 MB over 550 µs.
    const at = 62 * grid.size + 63;
    assert.equal(grid.bytes[at], 2_000_000);
    assert.equal(grid.time[at], 550);
    assert.equal(grid.min, 2_000_000 / 550 / 1e3);
    assert.notEqual(heatColor(grid, grid.min), heatColor(grid, grid.max));
  });

  it('has nothing to draw without links', () => {
    assert.equal(heatGrid([], 8), null);
  });
});

describe('groupTraceState', () => {
  it("opens the group's call on its rank's worker, in that rank's trace times", () => {
    const group = FIXTURE.groups[0];
    assert.ok(group);
    const state = groupTraceState('ddp_gloo', FIXTURE, group);
    assert.ok(state);
    assert.equal(state.worker, 'rank1');
    assert.equal(state.run, 'ddp_gloo');
    assert.ok(Object.values(state).includes('1500'));
    assert.ok(Object.values(state).includes('1900'));
  });

  it('has no link without a call', () => {
    const group = FIXTURE.groups[0];
    assert.ok(group);
    assert.equal(groupTraceState('ddp_gloo', FIXTURE, { ...group, call: null }), null);
  });
});
