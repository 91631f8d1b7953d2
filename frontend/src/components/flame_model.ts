// The `flamegraph` route's nodes as a tree, the icicle's layout of a zoomed subtree,
// search matches, and the differential tree of two traces (frames matched by their path of
// names: the route merges equal paths, so a path is a node on each side).

import type { FlameFrame, FlameGraphView } from '../api/types';

export interface FlameNode {
  frame: FlameFrame;
  /** Time of its own and with its subtree, µs (the target's, in a differential tree). */
  self: number;
  total: number;
  /** Differential trees only: the base's subtree time (0: a path only the target has). */
  base?: number;
  /** Differential trees only: the target's (0: a path only the base has). */
  target?: number;
  children: FlameNode[];
  parent: FlameNode | null;
  depth: number;
}

const ALL: FlameFrame = { name: 'all', kind: 'all', file: null, line: null };

function rootNode(): FlameNode {
  return { frame: ALL, self: 0, total: 0, children: [], parent: null, depth: 0 };
}

/** The route's nodes under one root `all` (depth 0); children in the route's order. */
export function buildTree(view: FlameGraphView): FlameNode {
  const root = rootNode();
  const nodes: FlameNode[] = [];
  view.node_parent.forEach((p, i) => {
    const parent = p >= 0 ? nodes[p] : root;
    const frame = view.frames[view.node_frame[i] ?? 0] ?? ALL;
    if (!parent) return;
    const node: FlameNode = {
      frame,
      self: view.node_self_us[i] ?? 0,
      total: view.node_total_us[i] ?? 0,
      children: [],
      parent,
      depth: parent.depth + 1,
    };
    parent.children.push(node);
    nodes.push(node);
  });
  root.total = root.children.reduce((s, c) => s + c.total, 0);
  return root;
}

function frameKey(f: FlameFrame): string {
  return `${f.kind}\u0000${f.name}\u0000${f.file ?? ''}\u0000${f.line ?? ''}`;
}

/** Base and target in one tree: a node per path of either side, as wide as the larger of
 * its two times (a path that vanished stays visible; a parent at least as wide as its
 * children together), with both times kept. */
export function diffTree(base: FlameNode, target: FlameNode): FlameNode {
  const out = rootNode();
  const merge = (into: FlameNode, a: FlameNode | undefined, b: FlameNode | undefined): void => {
    into.base = a?.total ?? 0;
    into.target = b?.total ?? 0;
    into.total = Math.max(into.base, into.target);
    into.self = Math.max(a?.self ?? 0, b?.self ?? 0);
    const byKey = new Map<string, [FlameNode | undefined, FlameNode | undefined]>();
    for (const c of a?.children ?? []) byKey.set(frameKey(c.frame), [c, undefined]);
    for (const c of b?.children ?? []) {
      const k = frameKey(c.frame);
      byKey.set(k, [byKey.get(k)?.[0], c]);
    }
    const pairs = [...byKey.values()].sort((x, y) =>
      ((x[0] ?? x[1])?.frame.name ?? '').localeCompare((y[0] ?? y[1])?.frame.name ?? ''),
    );
    for (const [ca, cb] of pairs) {
      const frame = (cb ?? ca)?.frame ?? ALL;
      const child: FlameNode = {
        frame,
        self: 0,
        total: 0,
        children: [],
        parent: into,
        depth: into.depth + 1,
      };
      merge(child, ca, cb);
      into.children.push(child);
    }
    // Children as wide as the larger of their sides can together outgrow the larger of
    // the parent's (one side's subtree where the other has another): widen the parent.
    into.total = Math.max(
      into.total,
      into.children.reduce((sum, c) => sum + c.total, 0),
    );
  };
  merge(out, base, target);
  return out;
}

export interface FlameRect {
  node: FlameNode;
  /** Left edge and width in [0, 1] of the chart's width; row = depth below the top. */
  x: number;
  w: number;
  row: number;
}

/** The rectangles of the icicle zoomed into `zoom`: its ancestors full width above it,
 * its subtree spread over the width; nodes narrower than `minW` are left out. */
export function layout(zoom: FlameNode, minW = 0): FlameRect[] {
  const out: FlameRect[] = [];
  for (let a = zoom.parent; a; a = a.parent) out.push({ node: a, x: 0, w: 1, row: a.depth });
  const scale = zoom.total > 0 ? 1 / zoom.total : 0;
  const walk = (node: FlameNode, x: number, w: number): void => {
    out.push({ node, x, w, row: node.depth });
    let cx = x;
    for (const c of node.children) {
      const cw = c.total * scale;
      if (cw >= minW && cw > 0) walk(c, cx, cw);
      cx += cw;
    }
  };
  walk(zoom, 0, 1);
  return out;
}

/** Whether a frame matches a search: its name or file holds the text (any case). */
export function frameMatches(frame: FlameFrame, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return false;
  return frame.name.toLowerCase().includes(q) || (frame.file ?? '').toLowerCase().includes(q);
}

/** The matching nodes, and their share of the root's time (a match inside a match counted
 * once). */
export function searchTree(root: FlameNode, query: string): { nodes: FlameNode[]; share: number } {
  const nodes: FlameNode[] = [];
  let time = 0;
  const walk = (node: FlameNode, inMatch: boolean): void => {
    const hit = node.parent !== null && frameMatches(node.frame, query);
    if (hit) nodes.push(node);
    if (hit && !inMatch) time += node.total;
    for (const c of node.children) walk(c, inMatch || hit);
  };
  walk(root, false);
  return { nodes, share: root.total > 0 ? time / root.total : 0 };
}

/** The names from the root's child down to `node`: a node's address in the URL. */
export function pathOf(node: FlameNode): string[] {
  const names: string[] = [];
  let n = node;
  while (n.parent) {
    names.unshift(n.frame.name);
    n = n.parent;
  }
  return names;
}

/** The node at a path of names (the first child of each name), or the deepest found. */
export function nodeAt(root: FlameNode, path: readonly string[]): FlameNode {
  let node = root;
  for (const name of path) {
    const next = node.children.find((c) => c.frame.name === name);
    if (!next) break;
    node = next;
  }
  return node;
}

/** A frame's source place, `file:line`, or null when the trace does not say. */
export function sourceOf(frame: FlameFrame): string | null {
  if (!frame.file) return null;
  return frame.line !== null ? `${frame.file}:${frame.line}` : frame.file;
}
