import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { FlameGraphView } from '../api/types';
import {
  buildTree,
  diffTree,
  frameMatches,
  layout,
  nodeAt,
  pathOf,
  searchTree,
  sourceOf,
} from './flame_model';

/** main.py:3 → aten::linear (30 self) → aten::addmm (60); main.py:3 → aten::relu (10). */
function view(addmm = 60, relu = 10): FlameGraphView {
  return {
    metric: 'cpu',
    stacks: 'python_function',
    total_us: 30 + addmm + relu,
    no_launcher_us: null,
    frames: [
      { name: 'main', kind: 'python', file: 'main.py', line: 3 },
      { name: 'aten::linear', kind: 'op', file: null, line: null },
      { name: 'aten::addmm', kind: 'op', file: null, line: null },
      { name: 'aten::relu', kind: 'op', file: null, line: null },
    ],
    node_parent: [-1, 0, 1, 0],
    node_frame: [0, 1, 2, 3],
    node_self_us: [0, 30, addmm, relu],
    node_total_us: [30 + addmm + relu, 30 + addmm, addmm, relu],
  };
}

describe('flame tree', () => {
  it('builds the route nodes under one root', () => {
    const root = buildTree(view());
    assert.equal(root.total, 100);
    const main = nodeAt(root, ['main']);
    assert.equal(main.frame.name, 'main');
    assert.deepEqual(
      main.children.map((c) => [c.frame.name, c.total, c.depth]),
      [
        ['aten::linear', 90, 2],
        ['aten::relu', 10, 2],
      ],
    );
    assert.equal(sourceOf(main.frame), 'main.py:3');
  });

  it('lays out a zoomed subtree over the whole width, its ancestors above', () => {
    const root = buildTree(view());
    const linear = nodeAt(root, ['main', 'aten::linear']);
    assert.deepEqual(pathOf(linear), ['main', 'aten::linear']);
    const rects = layout(linear);
    const byName = new Map(rects.map((r) => [r.node.frame.name, r]));
    assert.deepEqual(byName.get('aten::linear'), { node: linear, x: 0, w: 1, row: 2 });
    assert.ok(Math.abs((byName.get('aten::addmm')?.w ?? 0) - 60 / 90) < 1e-12);
    assert.equal(byName.get('main')?.w, 1); // an ancestor, full width
    assert.equal(byName.has('aten::relu'), false); // outside the zoom
    const whole = layout(root);
    assert.equal(whole.find((r) => r.node.frame.name === 'aten::relu')?.x, 0.9);
    // Frames narrower than the minimum are left out.
    assert.equal(
      layout(root, 0.2).some((r) => r.node.frame.name === 'aten::relu'),
      false,
    );
  });

  it('finds matches by name or file, a match inside a match counted once', () => {
    const root = buildTree(view());
    const aten = searchTree(root, 'ATEN::');
    assert.equal(aten.nodes.length, 3);
    assert.equal(aten.share, 1);
    assert.equal(searchTree(root, 'main.py').nodes.length, 1);
    assert.equal(searchTree(root, 'addmm').share, 0.6);
    assert.equal(frameMatches(root.frame, ''), false);
  });

  it('merges two traces by path: the larger time for width, both kept', () => {
    const merged = diffTree(buildTree(view(60, 10)), buildTree(view(20, 40)));
    const addmm = nodeAt(merged, ['main', 'aten::linear', 'aten::addmm']);
    assert.equal(addmm.base, 60);
    assert.equal(addmm.target, 20);
    assert.equal(addmm.total, 60);
    const relu = nodeAt(merged, ['main', 'aten::relu']);
    assert.deepEqual([relu.base, relu.target, relu.total], [10, 40, 40]);
    // Each side has a path the other lacks: the parent holds both children.
    const other = view();
    other.frames = other.frames.map((f) =>
      f.name === 'aten::linear' ? { ...f, name: 'aten::matmul' } : f,
    );
    const apart = diffTree(buildTree(view()), buildTree(other));
    const main = nodeAt(apart, ['main']);
    assert.deepEqual([main.base, main.target, main.total], [100, 100, 190]);
    const widths = layout(apart).filter((r) => r.row === 2);
    assert.ok(widths.every((r) => r.x + r.w <= 1 + 1e-12));
    const onlyBase = diffTree(buildTree(view()), buildTree({ ...view(), node_parent: [] }));
    assert.equal(nodeAt(onlyBase, ['main']).target, 0);
  });
});
