"""Per-iteration numbers: the GPU work each iteration launched and what it was.

An iteration's GPU work is the activities (kernels, copies, fills) whose launch call
started on the iteration's thread inside its host span (the correlation id links each
to its call; a graph replay's kernels share their launch call). From them:
- the GPU span (first start to last end), the GPU busy time (union of the activities),
  idle = span - busy;
- kernel time, and the part of it that is graph replays (kernels of a graph launch);
- kernel time per class of the kernel taxonomy (`kernel_classes`: gemm, attention,
  conv, communication, other; `unknown` is the part of `other` no taxonomy rule names);
- scheduling: host time from the iteration's start to its first launch call;
- the kernels with the most time (a graph-replayed one with what it was captured as, its
  CUDA-graph annotations' label or its profiled capture's op, the label with most time),
  and the communication kernels (calls and time; on a CPU rank, the host collective
  ranges that start inside the iteration).
Times are int64 nanoseconds from `GpuWork.origin_us` (`core/launches.py`).
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.common import complete_rows, ends, name_flags, thread_keys
from ..core.graph_replay import captured_as, graph_replay
from ..core.kernel_classes import kernel_classes
from ..core.launches import GpuWork, gpu_work, to_ns
from ..core.rules import collective_type
from ..core.source_frames import SourceFrame, grouped_capture_frames
from ..core.taxonomy import WORKS, is_host_transfer_op
from .hints import attention_phase_codes
from .iterations import Found

CLASSES = (*WORKS, "unknown")  # the breakdown's columns; `unknown` is within `other`
TOP_KERNELS = 3


class TopRow(NamedTuple):
    """One of an iteration's top kernels: its name, calls, time (ns), what it was captured
    as and where (graph-replayed; None: not known)."""

    name: str
    calls: int
    ns: int
    captured_as: str | None
    captured_at: SourceFrame | None


class IterationWork(msgspec.Struct):
    """Per iteration (arrays of len(found)); ns from `origin_us`; -1 where no GPU work."""

    origin_us: float
    start: np.ndarray
    end: np.ndarray  # host end
    gpu_start: np.ndarray
    gpu_end: np.ndarray
    busy: np.ndarray
    kernel: np.ndarray
    replayed: np.ndarray
    first_launch: np.ndarray
    activities: np.ndarray
    classes: np.ndarray  # (n, len(CLASSES)) ns
    comm_calls: np.ndarray
    comm: np.ndarray  # ns
    comm_types: list[dict[str, int]]
    top: list[list[TopRow]]
    hinted_phase: list[str | None]  # from the attention kernels' names (all agreeing)


def iteration_work(model: TraceModel, found: Found) -> IterationWork:
    work = gpu_work(model)
    n = len(found)
    start, end = to_ns(found.starts, work.origin_us), to_ns(found.ends, work.origin_us)
    owner = _owners(model, work, found, start, end)
    mine = np.flatnonzero(owner >= 0)
    it = owner[mine]
    a_start, a_end = work.start[mine], work.end[mine]
    dur = a_end - a_start
    is_kernel = work.is_kernel[mine]
    kernel_dur = np.where(is_kernel, dur, 0)
    gpu_start = np.full(n, np.iinfo(np.int64).max)
    gpu_end = np.full(n, -1, dtype=np.int64)
    np.minimum.at(gpu_start, it, a_start)
    np.maximum.at(gpu_end, it, a_end)
    gpu_start[gpu_end < 0] = -1
    first_launch = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(first_launch, it, work.launch_start[mine])
    first_launch[gpu_end < 0] = -1
    rows = work.rows[mine]
    classes, comm_calls, comm, comm_types = _by_class(model, rows, it, kernel_dur, n)
    _host_collectives(model, found, start, np.maximum(end, gpu_end), comm_calls, comm, comm_types)
    return IterationWork(
        origin_us=work.origin_us,
        start=start,
        end=end,
        gpu_start=gpu_start,
        gpu_end=gpu_end,
        busy=_union_per_group(it, a_start, a_end, n),
        kernel=np.bincount(it, weights=kernel_dur, minlength=n).astype(np.int64),
        replayed=np.bincount(
            it, weights=np.where(work.graph[mine], kernel_dur, 0), minlength=n
        ).astype(np.int64),
        first_launch=first_launch,
        activities=np.bincount(it, minlength=n),
        classes=classes,
        comm_calls=comm_calls,
        comm=comm,
        comm_types=comm_types,
        top=_top_kernels(model, rows[is_kernel], it[is_kernel], kernel_dur[is_kernel], n),
        hinted_phase=_hinted(model, rows[is_kernel], it[is_kernel], n),
    )


def _owners(
    model: TraceModel, work: GpuWork, found: Found, start: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """Per GPU activity of `work`: the iteration whose host span on its thread holds the
    activity's launch call, or -1."""
    owner = np.full(work.rows.size, -1, dtype=np.int64)
    linked = np.flatnonzero(work.launch >= 0)
    if linked.size == 0 or not len(found):
        return owner
    launch_thread = thread_keys(model, work.launch[linked])
    iteration_thread = thread_keys(model, found.rows)
    t = work.launch_start[linked]
    for thread in np.unique(iteration_thread).tolist():
        its = np.flatnonzero(iteration_thread == thread)  # sorted by start
        sel = np.flatnonzero(launch_thread == thread)
        at = np.searchsorted(start[its], t[sel], side="right") - 1
        ok = at >= 0
        ok[ok] = t[sel[ok]] <= end[its[at[ok]]]
        owner[linked[sel[ok]]] = its[at[ok]]
    return owner


def _union_per_group(group: np.ndarray, start: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """Length of the union of the intervals of each group (ns)."""
    out = np.zeros(n, dtype=np.int64)
    if group.size == 0:
        return out
    order = np.lexsort((start, group))
    g, s, e = group[order], start[order], end[order]
    lo = int(s.min())
    span = int(e.max()) - lo + 1
    if span * (n + 1) < 2**62:
        # Shift each group past the previous one: one running maximum then serves all.
        shift = g.astype(np.int64) * span - lo
        s, e = s + shift, e + shift
        reach = np.concatenate([[np.iinfo(np.int64).min], np.maximum.accumulate(e)[:-1]])
        np.add.at(out, g, np.clip(e - np.maximum(s, reach), 0, None))
        return out
    for i in np.unique(g).tolist():  # a span too long to shift: group by group
        sel = g == i
        gs, ge = s[sel], e[sel]
        reach = np.concatenate([[gs[0]], np.maximum.accumulate(ge)[:-1]])
        out[i] = int(np.clip(ge - np.maximum(gs, reach), 0, None).sum())
    return out


def _by_class(
    model: TraceModel, rows: np.ndarray, it: np.ndarray, kernel_dur: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, int]]]:
    """Kernel time per (iteration, class), and the communication kernels' calls, time and
    collective types per iteration."""
    classes = kernel_classes(model)
    out = np.zeros((n, len(CLASSES)), dtype=np.int64)
    comm_calls = np.zeros(n, dtype=np.int64)
    comm = np.zeros(n, dtype=np.int64)
    types: list[dict[str, int]] = [{} for _ in range(n)]
    if rows.size == 0 or classes.rows.size == 0:
        return out, comm_calls, comm, types
    pos = np.minimum(np.searchsorted(classes.rows, rows), classes.rows.size - 1)
    known = classes.rows[pos] == rows
    k_it, k_pos, k_dur = it[known], pos[known], kernel_dur[known]
    work = classes.work[k_pos].astype(np.int64)
    np.add.at(out, (k_it, work), k_dur)
    no_rule = np.array([f is None for f in classes.family], dtype=bool)[k_pos]
    np.add.at(out[:, -1], k_it[no_rule], k_dur[no_rule])
    is_comm = work == WORKS.index("communication")
    np.add.at(comm_calls, k_it[is_comm], 1)
    np.add.at(comm, k_it[is_comm], k_dur[is_comm])
    for i, p in zip(k_it[is_comm].tolist(), k_pos[is_comm].tolist()):
        kind = classes.collective[p] or "other"
        types[i][kind] = types[i].get(kind, 0) + 1
    return out, comm_calls, comm, types


def _host_collectives(
    model: TraceModel,
    found: Found,
    start: np.ndarray,
    wall_end: np.ndarray,
    calls: np.ndarray,
    time: np.ndarray,
    types: list[dict[str, int]],
) -> None:
    """Host collective ranges (gloo on a CPU rank) that start inside an iteration."""
    host = complete_rows(model, Kind.CPU_OP, Kind.USER_ANNOTATION)
    if host.size == 0 or not len(found):
        return
    rows = host[name_flags(model, is_host_transfer_op)[model.events["name"][host]]]
    if rows.size == 0:
        return
    origin = gpu_work(model).origin_us
    t = to_ns(model.events["ts"][rows], origin)
    dur = to_ns(ends(model, rows), origin) - t
    at = np.searchsorted(start, t, side="right") - 1
    ok = (at >= 0) & (t <= wall_end[np.maximum(at, 0)])
    for i, d, name in zip(at[ok].tolist(), dur[ok].tolist(), model.names_of(rows[ok])):
        calls[i] += 1
        time[i] += d
        kind = collective_type(name) or "other"
        types[i][kind] = types[i].get(kind, 0) + 1


def _top_kernels(
    model: TraceModel, rows: np.ndarray, it: np.ndarray, dur: np.ndarray, n: int
) -> list[list[TopRow]]:
    out: list[list[TopRow]] = [[] for _ in range(n)]
    if rows.size == 0:
        return out
    codes = model.events["name"][rows].astype(np.int64)
    key = it.astype(np.int64) * (len(model.names) + 1) + codes
    uniq, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse, weights=dur).astype(np.int64)
    count = np.bincount(inverse)
    label = _captured_label(model, rows, inverse, dur, uniq.size)
    # Where each was captured: the first frame of its longest replayed call that has them.
    replay = graph_replay(model)
    captured = grouped_capture_frames(model, rows, inverse, uniq.size, replay, dur)
    where = [frames[0] if frames else None for frames in captured]
    g = uniq // (len(model.names) + 1)
    order = np.lexsort((-total, g))
    for j in order.tolist():
        i = int(g[j])
        if len(out[i]) < TOP_KERNELS:
            name = model.names[int(uniq[j] % (len(model.names) + 1))]
            out[i].append(TopRow(name, int(count[j]), int(total[j]), label[j], where[j]))
    return out


def _captured_label(
    model: TraceModel, rows: np.ndarray, group: np.ndarray, dur: np.ndarray, n: int
) -> list[str | None]:
    """Per group of kernels, what its graph-replayed ones were captured as: the label
    with most time (None: none replayed, or none known)."""
    out: list[str | None] = [None] * n
    order = np.argsort(rows, kind="stable")
    found = captured_as(model, rows[order])
    if not found:
        return out
    labels: dict[str, int] = {}
    code = np.full(rows.size, -1, np.int64)
    for k, label in found.items():
        code[order[k]] = labels.setdefault(label, len(labels))
    known = code >= 0
    pair = group[known].astype(np.int64) * len(labels) + code[known]
    uniq, inverse = np.unique(pair, return_inverse=True)
    time = np.bincount(inverse, weights=dur[known])
    names = list(labels)
    for j in np.lexsort((-time, uniq // len(labels))).tolist():
        at = int(uniq[j] // len(labels))
        if out[at] is None:
            out[at] = names[int(uniq[j] % len(labels))]
    return out


def _hinted(model: TraceModel, rows: np.ndarray, it: np.ndarray, n: int) -> list[str | None]:
    """Per iteration, the phase its attention kernels' names agree on (both kinds:
    mixed), or None."""
    out: list[str | None] = [None] * n
    if rows.size == 0:
        return out
    code = attention_phase_codes(model)[model.events["name"][rows]]
    said = np.zeros((n, 3), dtype=bool)
    said[it[code > 0], code[code > 0]] = True
    for i in np.flatnonzero(said[:, 1] | said[:, 2]).tolist():
        out[i] = "mixed" if said[i, 1] and said[i, 2] else ("decode" if said[i, 1] else "prefill")
    return out
