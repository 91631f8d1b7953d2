"""Per-operator memory statistics of a range (the Memory view's operator table)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypedDict

import numpy as np

from ...model.trace_model import TraceModel
from ..core.common import _nesting, distinct
from ..core.optree import op_tree
from ..core.tree_arrays import sorted_search
from .index import DeviceSeries, MemoryIndex
from .ranges import window


class OperatorRow(TypedDict):
    device: str
    name: str
    calls: int
    allocation_count: int
    allocation_bytes: float
    release_count: int
    release_bytes: float
    increase_bytes: float
    self_allocation_count: int
    self_allocation_bytes: float
    self_release_count: int
    self_release_bytes: float
    self_increase_bytes: float


def operator_stats(
    model: TraceModel, index: MemoryIndex, devices: list[DeviceSeries], lo: float, hi: float
) -> list[OperatorRow]:
    n_names = len(model.names)
    calls = _calls(model, lo, hi, n_names)
    out: list[OperatorRow] = []
    for d in devices:
        i0, i1 = window(d, lo, hi)
        if i1 <= i0:
            continue
        members = d.events[i0:i1]
        nbytes = d.nbytes[i0:i1]
        self_sums = _self_sums(model, index, members, nbytes)
        total_sums = _total_sums(index, members, nbytes, n_names)
        for code in np.flatnonzero((total_sums[0] + total_sums[2]) > 0).tolist():
            out.append(_row(d.name, model.names[code], int(calls[code]), total_sums[:, code],
                            self_sums[:, code]))  # fmt: skip
    out.sort(key=lambda r: (r["device"], -r["self_increase_bytes"], r["name"]))
    return out


_N_METRICS = 4


def _metrics(nbytes: np.ndarray) -> Iterator[np.ndarray]:
    """The metrics per memory event of `nbytes` (allocation count and bytes, release count
    and bytes), each made as it is read: one float64 array of the events at a time, not
    four (they were the Memory view's peak)."""
    yield (nbytes > 0).astype(np.float64)
    yield np.where(nbytes > 0, nbytes, 0.0)
    yield (nbytes < 0).astype(np.float64)
    yield np.where(nbytes < 0, -nbytes, 0.0)


def _self_sums(
    model: TraceModel, index: MemoryIndex, members: np.ndarray, nbytes: np.ndarray
) -> np.ndarray:
    """Per name code, each metric over the events that belong to an op of that name."""
    n_names = len(model.names)
    sums = np.zeros((_N_METRICS, n_names))
    op = index.op[members]
    owned = op >= 0
    codes = model.events["name"][op[owned]]
    del op
    owned_bytes = nbytes[owned]
    del owned
    # The allocations' and the releases' own codes and bytes, not the four metrics over
    # every owned event (zeros between add nothing: the same sums, in the same order).
    for j in (0, 2):
        chosen = owned_bytes > 0 if j == 0 else owned_bytes < 0
        chosen_codes = codes[chosen]
        chosen_bytes = owned_bytes[chosen]
        del chosen
        if j == 2:
            np.negative(chosen_bytes, out=chosen_bytes)
        sums[j] = np.bincount(chosen_codes, minlength=n_names)
        sums[j + 1] = np.bincount(chosen_codes, weights=chosen_bytes, minlength=n_names)
        del chosen_codes, chosen_bytes
    return sums


def _total_sums(
    index: MemoryIndex, members: np.ndarray, nbytes: np.ndarray, n_names: int
) -> np.ndarray:
    """Per name code, each metric over the events inside the union of that name's calls
    on their thread (each event once per name)."""
    sums = np.zeros((_N_METRICS, n_names))
    threads = index.thread[members]
    one = threads.size > 0 and bool((threads == threads[0]).all())
    keys = [int(threads[0])] if one else distinct(threads).tolist()
    if one:  # one thread (most traces): its events are all of them, none sorted or copied
        del threads
    for key in keys:
        ops = index.threads.get(key)
        if ops is None:
            continue
        mine = slice(None) if one else threads == key
        t = index.ts[members[mine]]  # time order kept
        span_codes, span_starts, span_ends = ops.name_spans
        if _span_sums_compiled(t, nbytes[mine], ops.name_spans, sums):
            continue
        first = sorted_search(t, span_starts, "left")  # the spans by name, then start
        last = sorted_search(t, span_ends, "left")
        touched = last > first
        if not touched.any():
            continue
        # One at a time: each subset replaces the whole (the spans' bounds, beside the
        # index, were the Memory view's peak).
        first = first[touched]
        last = last[touched]
        op_codes = span_codes[touched]
        del touched
        for j, values in enumerate(_metrics(nbytes[mine])):
            prefix = np.concatenate([[0.0], np.cumsum(values)])
            del values
            inside = prefix[last]
            inside -= prefix[first]
            sums[j] += np.bincount(op_codes, weights=inside, minlength=n_names)
            del prefix, inside  # before the next metric is made
    return sums


def _span_sums_compiled(
    t: np.ndarray,
    nbytes: np.ndarray,
    spans: tuple[np.ndarray, np.ndarray, np.ndarray],
    sums: np.ndarray,
) -> bool:
    """`_total_sums`' metrics of one thread's events `t` (its `nbytes`) inside its name
    spans, added into `sums` in one compiled pass (`_nesting.span_sums`: each span's events
    summed from its start's place, no bounds or prefix sums per span and event beside
    them). False, nothing added, where not built or for inputs it does not take."""
    codes, starts, ends = spans
    if _nesting is None or codes.dtype not in (np.int16, np.int32) or sums.dtype != np.float64:
        return False
    if not t.dtype == nbytes.dtype == starts.dtype == ends.dtype == np.float64:
        return False
    if not sums.flags.c_contiguous or sums.shape[0] != _N_METRICS:
        return False
    return bool(
        _nesting.span_sums(
            np.ascontiguousarray(t),
            np.ascontiguousarray(nbytes),
            np.ascontiguousarray(codes),
            np.ascontiguousarray(starts),
            np.ascontiguousarray(ends),
            codes.dtype.itemsize,
            sums,
        )
    )


def _row(device: str, name: str, calls: int, total: np.ndarray, own: np.ndarray) -> OperatorRow:
    a_n, a_b, f_n, f_b = total
    sa_n, sa_b, sf_n, sf_b = own
    return {
        "device": device,
        "name": name,
        "calls": calls,
        "allocation_count": int(a_n),
        "allocation_bytes": float(a_b),
        "release_count": int(f_n),
        "release_bytes": float(f_b),
        "increase_bytes": float(a_b - f_b),
        "self_allocation_count": int(sa_n),
        "self_allocation_bytes": float(sa_b),
        "self_release_count": int(sf_n),
        "self_release_bytes": float(sf_b),
        "self_increase_bytes": float(sa_b - sf_b),
    }


def _calls(model: TraceModel, lo: float, hi: float, n_names: int) -> np.ndarray:
    """Calls per name as the Operator view counts them (its op tree: a single same-named
    child is one call with its parent), of the calls that overlap the range."""
    tree = op_tree(model)
    nodes = tree.rows[tree.op_mask]
    starts = model.events["ts"][nodes]
    overlap = (starts <= hi) & (starts + model.events["dur"][nodes] >= lo)
    return np.bincount(model.events["name"][nodes[overlap]], minlength=n_names)
