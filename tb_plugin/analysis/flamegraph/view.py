"""Flame graphs of CPU and GPU time: where the op tree's time goes, by call path.

- A path is the chain of frames from a root to a leaf: Python frames (`python_function`
  events of `with_stack=True` traces, or the `Call stack` arg of 2021-22 traces), op tree
  nodes (`cpu_op`, `user_annotation`; ProfilerStep#N ranges as one `ProfilerStep#*` frame,
  so the steps merge), runtime calls and kernels. Equal paths merge (a flame graph, not a
  timeline); module frames lose their instance number (python_stacks.py).
- Between an op and its parent op go the Python frames that enclose the op but not the
  parent: the code that ran between them. A root op gets its whole Python stack. With the
  `Call stack` arg, an op whose parent has no stack of its own gets its whole stack.
- `metric=cpu`: one root frame per thread. Each op tree node holds its host self time and
  each runtime call inside it (the innermost host range containing it, as optree.py
  subtracts it) its duration, so a thread's frames add up to the op tree's host time:
  the sum of the nodes' self times and of the runtime calls inside them. Time in Python
  outside every op is not counted (the op tree does not know it).
- `metric=gpu`: each kernel's duration (the Kernel view's kernels: memcpy and memset
  aside), under its launching runtime call, under that call's op (optree.py; a
  collective's is the communication op around the call, `optree.collective_owner`: the
  `nccl:*` range, where the CPU graph puts the call too) and Python
  frames. A launch call outside every op sits under the Python frames enclosing it; a
  kernel without a known launch call under one root frame `[no launcher known]`, so the
  values add up to the Kernel view's `total_us`. A replayed graph's kernels sit under the
  graph launch call, and there under a `captured` frame naming what each was captured
  as: its CUDA-graph annotations' label (module · op · phase, `graph_annotations.py`),
  else the op of its profiled capture (`graph_replay.py`); none when neither is known.
  The frame's file and line: where it was captured, the first model-code frame around
  the capturing op in the profiled capture (`source_frames.py`), when recorded.
- Frames with no time in them are left out. Nodes come in pre-order (a parent before its
  children, children by frame name), so a node's parent index is below its own.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np

from ...model.errors import ViewParamError
from ...model.trace_model import TraceModel
from ..core.common import launches_of, thread_keys
from ..core.graph_replay import captured_as
from ..core.host_ranges import host_ranges
from ..core.kernel_classes import kernel_classes
from ..core.optree import OpTree, op_tree
from ..core.python_ranges import python_ranges
from ..core.python_stacks import PythonStacks, StackArgs, parse_frame, python_stacks
from ..core.rules import is_step_name
from ..core.source_frames import captured_where
from .types import FlameFrame, FlameGraphParams, FlameGraphView

METRICS = ("cpu", "gpu")
NO_LAUNCHER = "[no launcher known]"
STEP_FRAME = "ProfilerStep#*"
# `<built-in method float of Tensor object at 0x7f93109bdf90>`: the address differs per
# object and per run; without it equal code merges (and two traces' frames match).
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>$")


class _Trie:
    """Merged call paths: a node per distinct path, time added at its end."""

    def __init__(self) -> None:
        self.frames: list[FlameFrame] = []
        self._frame_ids: dict[tuple[str, str, str | None, int | None], int] = {}
        self.parent: list[int] = []
        self.frame: list[int] = []
        self.value: list[float] = []
        self._children: dict[tuple[int, int], int] = {}

    def frame_id(
        self, kind: str, name: str, file: str | None = None, line: int | None = None
    ) -> int:
        key = (kind, name, file, line)
        found = self._frame_ids.get(key)
        if found is None:
            found = self._frame_ids[key] = len(self.frames)
            self.frames.append({"name": name, "kind": kind, "file": file, "line": line})
        return found

    def child(self, node: int, frame: int) -> int:
        key = (node, frame)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = len(self.parent)
            self.parent.append(node)
            self.frame.append(frame)
            self.value.append(0.0)
        return found

    def add(self, node: int, value: float) -> None:
        self.value[node] += value


class _Paths:
    """The trie node of each op tree node's path; `base(thread)` is where a root op's
    path starts (a thread frame for CPU time, nothing for GPU time)."""

    def __init__(self, model: TraceModel, tree: OpTree, trie: _Trie, by_thread: bool) -> None:
        self.model, self.tree, self.trie, self.by_thread = model, tree, trie, by_thread
        ev = model.events
        self.t0 = ev["ts"][tree.rows].astype(np.float64)
        self.t1 = self.t0 + ev["dur"][tree.rows]
        self.py = python_stacks(model, tree)
        self.py_frame_ids: dict[int, int] = {}
        self.py_memo: dict[tuple[int, int], int] = {}
        self.between_memo: dict[tuple[int, int], int] = {}
        self.arg_stacks = None if self.py is not None else _arg_stacks(model, tree)
        self.thread_nodes: dict[int, int] = {}
        self.node = np.full(len(tree), -1, dtype=np.int64)
        self._fill()

    def stacks_source(self) -> str | None:
        if self.py is not None:
            return "python_function"
        return "call_stack_arg" if self.arg_stacks else None

    def base(self, thread: int, row: int) -> int:
        if not self.by_thread:
            return -1
        found = self.thread_nodes.get(thread)
        if found is None:
            frame = self.trie.frame_id("thread", _thread_label(self.model, row))
            found = self.thread_nodes[thread] = self.trie.child(-1, frame)
        return found

    def _fill(self) -> None:
        tree, trie, names = self.tree, self.trie, self.model.names
        name_codes = self.model.events["name"][tree.rows]
        steps = np.array([is_step_name(n) for n in names], dtype=bool)
        for level in tree.levels:
            for n in level.tolist():
                if tree.folded[n]:
                    continue
                p = int(tree.parent[n])
                at = (
                    int(self.node[p])
                    if p >= 0
                    else self.base(int(tree.thread[n]), int(tree.rows[n]))
                )
                at = self._python_between(at, n, p)
                code = int(name_codes[n])
                frame = trie.frame_id("op", STEP_FRAME if steps[code] else names[code])
                self.node[n] = trie.child(at, frame)

    def _python_between(self, at: int, n: int, p: int) -> int:
        """`at` descended through the Python frames entered between op p and op n."""
        if self.arg_stacks is not None:
            frames = self.arg_stacks.get(n)
            if frames and (p < 0 or p not in self.arg_stacks):
                for f in reversed(frames):
                    at = self.trie.child(at, self.trie.frame_id("python", **f))
            return at
        if self.py is None:
            return at
        cur = int(self.py.node_frame[n])
        if p < 0:
            return self.python_path(at, cur)
        # Children of one op mostly share their frames: each (op, frame) is walked once.
        chain: list[int] = []
        py_t0, py_t1 = _py_times(self.model, self.py)
        t0, t1 = self.t0[p], self.t1[p]
        memo = self.between_memo
        while cur >= 0 and (p, cur) not in memo and not (py_t0[cur] <= t0 and py_t1[cur] >= t1):
            chain.append(cur)
            cur = int(self.py.parent[cur])
        node = memo.get((p, cur), at) if cur >= 0 else at
        for c in reversed(chain):
            node = memo[(p, c)] = self.trie.child(node, self._py_frame(c))
        return node

    def python_path(self, at: int, cur: int) -> int:
        """`at` descended through python event `cur`'s whole stack (memoised)."""
        assert self.py is not None
        chain: list[int] = []
        while cur >= 0 and (at, cur) not in self.py_memo:
            chain.append(cur)
            cur = int(self.py.parent[cur])
        node = self.py_memo[(at, cur)] if cur >= 0 else at
        for c in reversed(chain):
            node = self.py_memo[(at, c)] = self.trie.child(node, self._py_frame(c))
        return node

    def _py_frame(self, event: int) -> int:
        assert self.py is not None
        code = int(self.py.frame[event])
        found = self.py_frame_ids.get(code)
        if found is None:
            f = parse_frame(self.py.frame_text[code])
            name = _ADDRESS.sub(">", f["function"])
            found = self.trie.frame_id("python", name, f["file"], f["line"])
            self.py_frame_ids[code] = found
        return found


def _py_times(model: TraceModel, py: PythonStacks) -> tuple[np.ndarray, np.ndarray]:
    def build(m: TraceModel) -> tuple[np.ndarray, np.ndarray]:
        t0 = m.events["ts"][py.rows].astype(np.float64)
        return t0, t0 + m.events["dur"][py.rows]

    return model.derived("_flame_python_times", build)


def _arg_stacks(model: TraceModel, tree: OpTree) -> dict[int, list[dict[str, Any]]]:
    """Per node with a `Call stack` arg: its frames, innermost first."""
    nodes = np.flatnonzero(model.events["has_stack"][tree.rows])
    out: dict[int, list[dict[str, Any]]] = {}
    parsed: dict[bytes, list[dict[str, Any]]] = {}
    for n, a in zip(nodes.tolist(), model.iter_args(tree.rows[nodes], StackArgs)):
        raw = bytes(a.stack)
        if raw not in parsed:
            text = msgspec.json.decode(raw) if len(raw) > 2 else ""
            parts = [p for p in str(text or "").split(";") if p.strip()]
            parsed[raw] = [
                {"name": f["function"], "file": f["file"], "line": f["line"]}
                for f in map(parse_frame, parts)
            ]
        if parsed[raw]:
            out[n] = parsed[raw]
    return out


def _thread_label(model: TraceModel, row: int) -> str:
    pid = model.pids[int(model.events["pid"][row])]
    tid = model.tids[int(model.events["tid"][row])]
    name = model.thread_names.get(f"{pid}/{tid}")
    return f"thread {tid}" + (f" ({name})" if name else "")


def _runtime_containers(model: TraceModel, tree: OpTree) -> tuple[np.ndarray, np.ndarray]:
    """Each runtime call's innermost containing node, after folding (-1: none); and the
    runtime rows. The node its time is subtracted from in optree.py."""
    runtimes = tree.runtimes
    if runtimes.size == 0 or len(tree) == 0:
        return np.full(runtimes.size, -1, np.int64), runtimes
    ranges = host_ranges(model)
    t0 = model.events["ts"][runtimes].astype(np.float64)
    container = ranges.enclosing(
        thread_keys(model, runtimes), t0, t0 + model.events["dur"][runtimes]
    )
    rep = np.arange(len(tree), dtype=np.int64)
    for level in tree.levels:  # folded nodes are roots of `levels`; walk up the raw parents
        for n in level[tree.folded[level]].tolist():
            up = int(ranges.parent[n])
            while up >= 0 and tree.folded[up]:
                up = int(ranges.parent[up])
            rep[n] = up
    return np.where(container >= 0, rep[np.maximum(container, 0)], -1), runtimes


def cpu_flame(model: TraceModel) -> FlameGraphView:
    tree = op_tree(model)
    trie = _Trie()
    paths = _Paths(model, tree, trie, by_thread=True)
    for n in np.flatnonzero(~tree.folded & (tree.host_self > 0)).tolist():
        trie.add(int(paths.node[n]), float(tree.host_self[n]))
    container, runtimes = _runtime_containers(model, tree)
    names, durs = model.events["name"][runtimes], model.events["dur"][runtimes]
    for i in np.flatnonzero(container >= 0).tolist():
        frame = trie.frame_id("runtime", model.names[int(names[i])])
        trie.add(trie.child(int(paths.node[container[i]]), frame), float(durs[i]))
    return _finish(trie, "cpu", paths.stacks_source(), None)


def gpu_flame(model: TraceModel) -> FlameGraphView:
    tree = op_tree(model)
    trie = _Trie()
    paths = _Paths(model, tree, trie, by_thread=False)
    ev = model.events
    kernels = kernel_classes(model).rows
    launcher = launches_of(model, kernels) if kernels.size else np.empty(0, np.int64)
    owner = np.full(kernels.size, -1, dtype=np.int64)
    if tree.gpu.size and kernels.size:
        owner = tree.gpu_node[np.minimum(np.searchsorted(tree.gpu, kernels), tree.gpu.size - 1)]
    outside = _python_around(model, paths, launcher, owner)
    captured = captured_as(model, kernels)
    where = captured_where(model, kernels) if captured else {}
    no_launcher = 0.0
    root = trie.child(-1, trie.frame_id("root", NO_LAUNCHER))
    for k, row in enumerate(kernels.tolist()):
        dur = float(ev["dur"][row])
        kernel_frame = trie.frame_id("kernel", model.names[int(ev["name"][row])])
        if launcher[k] < 0:
            trie.add(trie.child(root, kernel_frame), dur)
            no_launcher += dur
            continue
        at = int(paths.node[owner[k]]) if owner[k] >= 0 else outside.get(k, -1)
        call = trie.child(at, trie.frame_id("runtime", model.names[int(ev["name"][launcher[k]])]))
        if k in captured:
            at_line = where.get(k)
            file, line = (at_line["filename"], at_line["line"]) if at_line else (None, None)
            call = trie.child(call, trie.frame_id("captured", captured[k], file, line))
        trie.add(trie.child(call, kernel_frame), dur)
    return _finish(trie, "gpu", paths.stacks_source(), no_launcher)


def _python_around(
    model: TraceModel, paths: _Paths, launcher: np.ndarray, owner: np.ndarray
) -> dict[int, int]:
    """Per kernel whose launch call is outside every op: the trie node of the Python
    frames enclosing the call (with_stack traces); absent: none encloses it."""
    lone = np.flatnonzero((launcher >= 0) & (owner < 0))
    if paths.py is None or lone.size == 0:
        return {}
    rows = launcher[lone]
    ranges = python_ranges(model)
    t0 = model.events["ts"][rows].astype(np.float64)
    inner = ranges.enclosing(thread_keys(model, rows), t0, t0 + model.events["dur"][rows])
    out: dict[int, int] = {}
    for k, pos in zip(lone.tolist(), inner.tolist()):
        if pos >= 0:
            event = int(np.searchsorted(paths.py.rows, ranges.rows[pos]))
            out[k] = paths.python_path(-1, event)
    return out


def _finish(
    trie: _Trie, metric: str, stacks: str | None, no_launcher: float | None
) -> FlameGraphView:
    """The trie's nodes with time in them, in pre-order, children by frame name."""
    n = len(trie.parent)
    total = np.array(trie.value, dtype=np.float64)
    parent = np.array(trie.parent, dtype=np.int64)
    for i in range(n - 1, -1, -1):  # a child is made after its parent
        if parent[i] >= 0:
            total[parent[i]] += total[i]
    kids: dict[int, list[int]] = {}
    for i in range(n):
        if total[i] > 0:
            kids.setdefault(int(parent[i]), []).append(i)
    order: list[int] = []
    todo = sorted(kids.get(-1, []), key=lambda i: trie.frames[trie.frame[i]]["name"], reverse=True)
    while todo:
        i = todo.pop()
        order.append(i)
        mine = kids.get(i, [])
        todo.extend(sorted(mine, key=lambda c: trie.frames[trie.frame[c]]["name"], reverse=True))
    new_index = {old: new for new, old in enumerate(order)}
    # Frames by what they are, not by which row came first: the same trace written in
    # another event order (its protobuf form) gives the same answer.
    used = sorted({trie.frame[i] for i in order}, key=lambda f: _frame_key(trie.frames[f]))
    frame_index = {old: new for new, old in enumerate(used)}
    roots = [i for i in order if parent[i] < 0]
    return {
        "metric": metric,
        "stacks": stacks,
        "total_us": round(float(total[roots].sum()), 3) if roots else 0.0,
        "no_launcher_us": round(no_launcher, 3) if no_launcher is not None else None,
        "frames": [trie.frames[f] for f in used],
        "node_parent": [new_index[int(parent[i])] if parent[i] >= 0 else -1 for i in order],
        "node_frame": [frame_index[trie.frame[i]] for i in order],
        "node_self_us": [round(trie.value[i], 3) for i in order],
        "node_total_us": [round(float(total[i]), 3) for i in order],
    }


def _frame_key(frame: FlameFrame) -> tuple[str, str, str, int]:
    return (frame["name"], frame["kind"], frame["file"] or "", frame["line"] or -1)


def flamegraph(model: TraceModel, metric: str = "cpu") -> FlameGraphView:
    if metric not in METRICS:
        raise ViewParamError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    return cpu_flame(model) if metric == "cpu" else gpu_flame(model)


def flamegraph_view(model: TraceModel, params: FlameGraphParams) -> FlameGraphView:
    return flamegraph(model, params.get("metric") or "cpu")
