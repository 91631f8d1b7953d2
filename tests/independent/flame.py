"""Flame-graph numbers recomputed from the raw JSON alone, without kinetoscope:

- the GPU flame graph's total is the kernel time: Σ dur of the trusted kernels
  (`health.kernel_time_us`: duplicates, `"ts": 0` and off-clock events left out);
- the depth of the Python frames above a thread's outermost ops, by the profiler's own
  parent ids (`Python id` / `Python parent id` of `python_function` events): per root op
  (a `cpu_op` or `user_annotation` slice of positive duration inside no other on its
  thread), the innermost Python frame enclosing it in exact ns (latest start, then
  longest, then file order), and that frame's chain of parents. The CPU flame graph gives
  a root op its whole Python stack, so its deepest run of Python frames under a thread
  frame is the deepest such chain.
"""

from __future__ import annotations

import bisect
from typing import Any

from .health import Health, _Events, _trusted_x
from .raw import RawTrace

HOST_CATS = {"cpu_op", "operator", "user_annotation"}


def _root_ops(ev: _Events, x: list[int]) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """Per thread, the (start, end) ns of its root ops (positive duration)."""
    by_thread: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for i in x:
        if ev.cat[i] in HOST_CATS:
            e = ev.events[i]
            start = ev.ts_ns[i] or 0
            key = (str(e.get("pid")), str(e.get("tid")))
            by_thread.setdefault(key, []).append((start, -(start + ev.dur_ns[i]), i))
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for key, items in by_thread.items():
        items.sort()
        reach = None
        for start, neg_end, _ in items:
            end = -neg_end
            if (reach is None or reach < end) and end > start:
                out.setdefault(key, []).append((start, end))
            reach = end if reach is None else max(reach, end)
    return out


def python_depth(trace: RawTrace, found: Health) -> int | None:
    """The deepest Python chain (by parent ids) above a root op; None when the trace's
    Python frames carry no ids (or it has none)."""
    ev = found.events or _Events.of(trace)
    x = _trusted_x(ev, found.untrusted)
    frames = [i for i in x if ev.cat[i] == "python_function"]
    ids: dict[Any, int] = {}
    for i in frames:
        pid = (ev.events[i].get("args") or {}).get("Python id")
        if pid is None:
            return None
        ids.setdefault(pid, i)
    if not ids:
        return None
    by_thread: dict[tuple[str, str], list[tuple[int, int, int, int]]] = {}
    for i in frames:
        e = ev.events[i]
        start = ev.ts_ns[i] or 0
        key = (str(e.get("pid")), str(e.get("tid")))
        by_thread.setdefault(key, []).append((start, -(start + ev.dur_ns[i]), i, 0))
    for items in by_thread.values():
        items.sort()
    depth_memo: dict[int, int] = {}

    def depth(i: int) -> int:
        chain = []
        while i >= 0 and i not in depth_memo:
            chain.append(i)
            parent = (ev.events[i].get("args") or {}).get("Python parent id")
            i = ids.get(parent, -1) if parent is not None else -1
            if len(chain) > len(frames):
                raise ValueError("a loop in the parent ids")
        d = depth_memo.get(i, 0)
        for c in reversed(chain):
            d += 1
            depth_memo[c] = d
        return d

    deepest = 0
    for key, ops in _root_ops(ev, x).items():
        items = by_thread.get(key, [])
        for start, end in ops:
            # candidates: frames starting at or before the op; the innermost encloses it
            upto = bisect.bisect_right(items, (start, float("inf"), 0, 0))
            for s, neg_e, i, _ in reversed(items[:upto]):
                if -neg_e >= end and s <= start:
                    deepest = max(deepest, depth(i))
                    break
    return deepest
