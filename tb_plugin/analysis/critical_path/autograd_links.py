"""The autograd engine's handoff between threads, which the trace does not record.

With CUDA, `loss.backward()` on the training thread hands the graph to the engine's device
thread (the backward thread: its ops are the autograd functions, `...Backward0`,
`autograd::engine::evaluate_function: ...`) and blocks until it is done. The trace shows
the training thread idle (no range) while the backward thread works, and neither the start
(`aten::ones_like`, backward's seed, is the training thread's last op) nor the end of the
handoff. So:

- a burst of the backward thread that starts inside a gap of the training thread and ends
  before that gap does (the backward thread idle at both ends) follows the training
  thread's last node before the gap, and the training thread's first node after it follows
  the burst's last node. No time window: how long the engine takes to wake is recorded as
  the gap (`autograd handoff` on the path), whatever the machine's speed.

The training thread is the one holding the `ProfilerStep#` ranges (else the thread with
the most ranges that runs no autograd function); backward threads are the others that run
autograd functions. On the CPU the training thread runs backward itself: nothing here."""

from __future__ import annotations

import re

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import distinct, name_flags, thread_keys
from ..core.host_ranges import host_ranges
from ..core.steps import host_step_rows

_AUTOGRAD_FUNCTION = re.compile(r"(Backward\d*$)|(^autograd::engine::evaluate_function)")


def is_autograd_function(name: str) -> bool:
    return _AUTOGRAD_FUNCTION.search(name) is not None


def training_and_backward(model: TraceModel) -> tuple[int | None, list[int]]:
    """The training thread's key (None: none found) and the backward threads' keys."""
    ranges = host_ranges(model)
    if len(ranges) == 0:
        return None, []
    autograd = name_flags(model, is_autograd_function)[model.events["name"][ranges.rows]]
    threads_with = set(distinct(ranges.thread[autograd]).tolist())
    steps = host_step_rows(model)
    if steps.size:
        training = int(thread_keys(model, steps[:1])[0])
    else:
        others = ranges.thread[~np.isin(ranges.thread, list(threads_with))]
        if others.size == 0:
            return None, []
        keys, counts = np.unique(others, return_counts=True)
        training = int(keys[np.argmax(counts)])
    return training, sorted(t for t in threads_with if t != training)


def handoffs(
    node_thread: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    training: int,
    backward: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Host nodes (sorted by thread, then start) of the two threads: (backward burst
    starts, the training nodes they follow, training nodes resuming, the burst ends they
    follow)."""
    train = np.flatnonzero(node_thread == training)
    back = np.flatnonzero(node_thread == backward)
    empty = np.zeros(0, np.int64)
    if train.size < 2 or back.size == 0:
        return empty, empty, empty, empty
    gap_from, gap_to = end[train[:-1]], start[train[1:]]
    b_start, b_end = start[back], end[back]
    first = np.searchsorted(b_start, gap_from, side="left")
    last = np.searchsorted(b_start, gap_to, side="left") - 1
    has = first <= last
    first_ok = np.zeros(has.size, dtype=bool)
    first_ok[has] = np.where(
        first[has] > 0, b_end[np.maximum(first[has] - 1, 0)] <= gap_from[has], True
    )
    last_ok = np.zeros(has.size, dtype=bool)
    last_ok[has] = b_end[last[has]] <= gap_to[has]
    gaps = np.flatnonzero(has & first_ok & last_ok)
    return back[first[gaps]], train[gaps], train[gaps + 1], back[last[gaps]]
