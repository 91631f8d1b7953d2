"""Small helpers every view uses: name predicates over the interned table, GPU↔launch links."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...model.categories import GPU_ACTIVITY_KINDS, LAUNCH_KINDS, Kind, complete_mask
from ...model.sparse_column import row_type
from ...model.trace_model import TraceModel
from .tree_arrays import running_count, sorted_search

try:
    from . import _nesting  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's passes give the same keys
    _nesting = None
from .trusted_rows import drop_untrusted


def name_flags(model: TraceModel, predicate: Callable[[str], bool]) -> np.ndarray:
    """predicate over the interned names: one call per distinct name, not per event. Kept
    with the model (read-only) when the predicate is a module-level function: several
    views ask the same (a lambda's identity does not say what it tests)."""

    def evaluate(m: TraceModel) -> np.ndarray:
        return np.fromiter((predicate(n) for n in m.names), dtype=bool, count=len(m.names))

    qualname = getattr(predicate, "__qualname__", "<")
    if "<" in qualname:  # <lambda>, <locals>
        return evaluate(model)
    key = f"_name_flags:{predicate.__module__}.{qualname}"
    source = model.__dict__.get(_NAME_SOURCE)
    if source is not None:  # a rank of a batch: the batch tests each distinct name once
        batch, codes = source
        return model.derived(key, lambda _: read_only(name_flags(batch, predicate)[codes]))
    return model.derived(key, lambda m: read_only(evaluate(m)))


_NAME_SOURCE = "_name_source"


def keep_name_source(model: TraceModel, batch: TraceModel, codes: np.ndarray) -> None:
    """`model`'s names are `batch`'s at `codes` (a rank of a batch of ranks,
    `rank_batches.share_tables`): its name flags are read from the batch's, so a name
    that every rank holds is tested once, not once per rank."""
    model.derived(_NAME_SOURCE, lambda _: (batch, codes))


def complete_rows(model: TraceModel, *kinds: Kind) -> np.ndarray:
    """`model.complete_rows(*kinds)` kept with the model (read-only): the views ask for the
    same few sets (kernels, launches, host ranges) dozens of times, each a pass over every
    event. Rows whose time cannot be trusted (a second copy of an event, `"ts": 0`, off
    the clock: `trusted_rows.py`) are left out here, once for every view; the trace
    view, which shows every event, reads the model's own."""
    key = _complete_rows_key(kinds)

    def build(m: TraceModel) -> np.ndarray:
        # Held through the views that read them (the Python frames' rows: 3.5 MB of a 253
        # MB H100 trace as int64), and found as int32 (no int64 rows made beside them).
        mask = complete_mask(m.events, kinds)
        drop_untrusted(m, mask)
        return read_only(nonzero_rows(m, mask))

    return model.derived(key, build)


def _complete_rows_key(kinds: tuple[Kind, ...]) -> str:
    return "_complete_rows:" + ",".join(str(int(k)) for k in sorted(set(kinds)))


def keep_complete_rows(model: TraceModel, kinds: tuple[Kind, ...], rows: np.ndarray) -> None:
    """Keeps `rows` as the model's `complete_rows(model, *kinds)`: found for a batch of
    ranks and split back (`rank_batches.share_tables`), the same rows."""
    rows = read_only(narrow_rows(model, rows))
    model.derived(_complete_rows_key(kinds), lambda _: rows)


def narrow_rows(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """Row indices of `model` as int32 where its rows fit (half the bytes), else as they
    are: for row sets held a while (kept with the model, or through a view's peak)."""
    return rows.astype(np.int32) if row_type(len(model)) is np.int32 else rows


# Rows of a mask are found this many at a time (`nonzero_rows`).
_NONZERO_BLOCK = 1 << 16


def nonzero_rows(model: TraceModel, mask: np.ndarray) -> np.ndarray:
    """`narrow_rows(model, np.flatnonzero(mask))`, a block of the mask at a time: no int64
    array of every row beside the narrow one (8 bytes a row, the health check's peak)."""
    if row_type(len(model)) is not np.int32:
        return np.flatnonzero(mask)
    out = np.empty(np.count_nonzero(mask), dtype=np.int32)
    at = 0
    for a in range(0, mask.size, _NONZERO_BLOCK):
        hit = np.flatnonzero(mask[a : a + _NONZERO_BLOCK])
        hit += a
        out[at : at + hit.size] = hit
        at += hit.size
    return out


def read_only(array: np.ndarray) -> np.ndarray:
    """`array`, read-only: it is kept with the model, and every view reads the same one."""
    array.flags.writeable = False
    return array


def repeated(value: Any, count: int, dtype: Any = None) -> np.ndarray:
    """`value` (a number, or `count` values) as a new array of `count`: what
    `np.broadcast_to(np.asarray(value, dtype), (count,)).copy()` makes, at a fraction of
    its cost on the few hundred values of a rank's graph."""
    if np.ndim(value) == 0:
        return np.full(count, value, dtype=dtype)
    out = np.array(value, dtype=dtype)
    return out if out.shape == (count,) else np.broadcast_to(out, (count,)).copy()


def rows_named(model: TraceModel, rows: np.ndarray, predicate: Callable[[str], bool]) -> np.ndarray:
    """The subset of `rows` whose name satisfies `predicate`."""
    if rows.size == 0:
        return rows
    flags = name_flags(model, predicate)
    return rows[flags[model.events["name"][rows]]]


def ends(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    ev = model.events
    return ev["ts"][rows] + ev["dur"][rows]


def gpu_rows(model: TraceModel) -> np.ndarray:
    return complete_rows(model, *GPU_ACTIVITY_KINDS)


def launch_rows(model: TraceModel) -> np.ndarray:
    return complete_rows(model, *LAUNCH_KINDS)


def launches_of(
    model: TraceModel, gpu: np.ndarray, launches: np.ndarray | None = None
) -> np.ndarray:
    """For each GPU activity row, the row of the runtime/driver call that launched it
    (same `correlation`), or -1. `launches`: the calls to look among; by default every
    launch call, whose correlation index is kept with the model (most views ask)."""
    if launches is None:
        index = model.derived("_launch_correlations", lambda m: _by_correlation(m, launch_rows(m)))
    else:
        index = _by_correlation(model, launches)
    sorted_corr, by_corr = index
    gpu_corr = model.column_at("correlation", gpu)
    pos = sorted_search(sorted_corr, gpu_corr, "left")
    pos_clipped = np.minimum(pos, max(sorted_corr.size - 1, 0))
    found = (sorted_corr.size > 0) & (gpu_corr >= 0)
    if sorted_corr.size:
        found &= sorted_corr[pos_clipped] == gpu_corr
    out = np.full(gpu.shape, -1, dtype=np.int64)
    out[found] = by_corr[pos_clipped[found]]
    return out


def _by_correlation(model: TraceModel, launches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The launch calls with a correlation id, sorted by it: (ids, rows). Where a runtime
    call and a driver call share an id (XPU, PrivateUse1 write both for one launch), the
    runtime call comes first, so it is the one a GPU activity links to."""
    launch_corr = model.column_at("correlation", launches)
    valid = launch_corr >= 0
    launches, launch_corr = launches[valid], launch_corr[valid]
    is_driver = model.events["kind"][launches] == Kind.DRIVER
    order = np.lexsort((is_driver, launch_corr))
    return read_only(launch_corr[order]), read_only(launches[order])


def lexsort_head(keys: tuple[np.ndarray, ...], count: int) -> np.ndarray:
    """`np.lexsort(keys)[:count]` (the last key first): only the positions whose last key
    is at most its `count`-th least value (ties included) are sorted, found by a
    partition; they keep their order, so ties fall as the full sort leaves them. A view's
    top rows of tens of thousands."""
    primary = keys[-1]
    if count <= 0 or count >= primary.size:
        return np.lexsort(keys)[: max(count, 0)]
    kth = np.partition(primary, count - 1)[count - 1]
    if kth != kth:  # NaN (sorted last by both): the full sort
        return np.lexsort(keys)[:count]
    candidates = np.flatnonzero(primary <= kth)
    return candidates[np.lexsort(tuple(key[candidates] for key in keys))][:count]


def in_sorted(values: np.ndarray, known: np.ndarray) -> np.ndarray:
    """`np.isin(values, known)` where `known` is sorted (`np.unique`'s answer): one
    binary search per value, no sort of both arrays together as np.isin does."""
    if known.size == 0:
        return np.zeros(values.shape, dtype=bool)
    at = np.searchsorted(known, values)
    np.minimum(at, known.size - 1, out=at)
    return known[at] == values


def gpu_device_ids(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """Device of GPU rows: the `device` arg, else the pid when it is a small integer
    (2020-21 traces put the device id in pid)."""
    dev = model.column_at("device", rows).astype(np.int64)
    missing = dev < 0
    if missing.any():
        pid_values = np.array(
            [p if isinstance(p, int) and 0 <= p < 4096 else -1 for p in model.pids], dtype=np.int64
        )
        dev[missing] = pid_values[model.events["pid"][rows[missing]]]
    return dev


SMALL_DISTINCT = 128  # integers up to this many: a Python set (a rank's few hundred events)


def distinct(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)` (the distinct values, ascending, of the same dtype): integers
    whose range is at most a few times their count (devices, streams, threads, codes) are
    marked in a table of that range, not hashed or sorted (~4x faster on a trace's
    kernels' devices); other integers are sorted and deduplicated here, other values go
    to numpy. (`np.unique` without `return_*` imports numpy.ma on its first call: ~10 ms
    of a small report, which integers need not pay.)"""
    flat = np.asarray(values).reshape(-1)
    if flat.size == 0:
        return flat.copy()
    if flat.dtype.kind not in "iu":
        return np.unique(flat)
    if flat.size <= SMALL_DISTINCT:  # a few values: numpy's passes cost more than a set
        return np.array(sorted(set(flat.tolist())), dtype=flat.dtype)
    low, high = int(flat.min()), int(flat.max())
    if high - low >= max(4 * flat.size, 1 << 16):
        ordered = np.sort(flat)
        first = np.empty(ordered.size, dtype=bool)
        first[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        return ordered[first]
    present = np.zeros(high - low + 1, dtype=bool)
    index = flat.astype(np.intp)  # what indexing casts to anyway; no narrow overflow
    if low:
        index -= low
    present[index] = True
    found = np.flatnonzero(present)
    if low:
        found += low
    return found.astype(flat.dtype)


def unique_codes(codes: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(codes, return_inverse=True)` of codes in [0, bound) (interned names,
    categories: `bound` the table's size), by marking the codes present, not sorting them:
    the same distinct codes, ascending, and the same inverse. A few codes are sorted
    (`SMALL_UNIQUE`)."""
    if codes.size <= SMALL_UNIQUE:
        return _sorted_unique(codes)
    if int(codes.min()) < 0 or int(codes.max()) >= bound:
        uniq, inverse = np.unique(codes, return_inverse=True)
        return uniq, inverse.reshape(-1)
    present = np.zeros(bound, dtype=bool)
    present[codes] = True
    position = running_count(present) - 1
    return np.flatnonzero(present).astype(codes.dtype), position[codes]


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_inverse=True)` of a 1-D array (the same distinct values,
    ascending, and the same inverse). Integers whose range is at most a few times their
    count (interned codes, devices, ranks, thread keys) are marked in a table of that
    range (`unique_codes`), not sorted: numpy sorts every value to find the inverse (13 ms
    per 190k values on a 2-core machine, ~0.5 ms marked). Other integers are sorted here
    and counted with `running_count`: numpy's own counts with a cumsum of booleans, which
    holds the GIL throughout (a server's request threads stalled on a big trace). A few
    integers (`SMALL_UNIQUE`: a rank of a many-rank job has a few hundred events) are
    sorted: a table of their range costs more than the sort."""
    if values.dtype.kind not in "iu":
        uniq, inverse = np.unique(values, return_inverse=True)
        return uniq, inverse.reshape(-1)
    if values.size > SMALL_UNIQUE:
        low, high = int(values.min()), int(values.max())
        if high - low < max(4 * values.size, 1 << 16):
            shifted = values - values.dtype.type(low)
            uniq, inverse = unique_codes(shifted, high - low + 1)
            uniq += values.dtype.type(low)
            return uniq, inverse
    return _sorted_unique(values)


# Integers up to this many are sorted to find their distinct values and inverse: marking
# them in a table of their range pays for the range (up to 64K entries), ~13 numpy calls
# a few hundred values do not amortise.
SMALL_UNIQUE = 1024


def _sorted_unique(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`unique_inverse` of integers by one stable sort."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(ordered.size, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(values.size, dtype=np.int64)
    inverse[order] = running_count(new) - 1
    return ordered[new], inverse


def lexsort_ints(keys: Sequence[np.ndarray]) -> np.ndarray:
    """`np.lexsort(keys)` (the last key the primary) of integer keys of one length, by one
    stable argsort of their mixed-radix combination where no key is negative and the
    product of their ranges fits an int64: a lexsort pays about one argsort per key (a
    1 GB trace's index: ~0.1 s per pass); else the lexsort itself."""
    if keys[0].size == 0:
        return np.zeros(0, dtype=np.intp)
    radices = [int(key.max()) + 1 for key in keys]
    if any(int(key.min()) < 0 for key in keys) or math.prod(radices) >= 1 << 62:
        return np.lexsort(keys)
    combined = np.zeros(keys[0].size, dtype=np.int64)
    for key, radix in zip(reversed(keys), reversed(radices)):
        combined *= radix
        combined += key
    return np.argsort(combined, kind="stable")


def unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(keys, axis=0, return_inverse=True)` of an integer matrix (the same rows,
    in the same lexicographic order, the same inverse), without numpy's sort of structured
    rows, which is several times slower: each column becomes its rank among the column's
    distinct values, and the ranks one mixed-radix integer per row."""
    combined = np.zeros(keys.shape[0], dtype=np.int64)
    radix = 1
    for column in keys.T:
        values, rank = unique_inverse(column)
        radix *= max(values.size, 1)
        if radix >= 1 << 62:  # the ranks no longer fit one int64
            uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
            return uniq, inverse.reshape(-1)
        combined = combined * values.size + rank
    distinct, inverse = unique_inverse(combined)
    # Any row of each group is the group's row (equal combined ranks, equal rows).
    member = np.empty(distinct.size, dtype=np.int64)
    member[inverse] = np.arange(inverse.size)
    return keys[member], inverse


def thread_keys(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """One int per (pid, tid) of `rows`; a pid or tid written as "123" and as 123 is one
    thread (2021 traces wrote op tids as strings and memory-event tids as numbers)."""
    ev = model.events
    width = max(len(model.tids), 1)
    pid_canon, tid_canon = _canonical_table(model.pids), _canonical_table(model.tids)
    rows = np.asarray(rows)
    native = _native_thread_keys(ev["pid"], ev["tid"], rows, (pid_canon, tid_canon), width)
    if native is not None:
        return native
    key = _canonical_codes(pid_canon, ev["pid"][rows])
    key *= np.int64(width)
    key += _canonical_codes(tid_canon, ev["tid"][rows])
    return key


def _native_thread_keys(
    pid: np.ndarray,
    tid: np.ndarray,
    rows: np.ndarray,
    canon: tuple[np.ndarray, np.ndarray],
    width: int,
) -> np.ndarray | None:
    """`thread_keys` in one compiled pass (`_nesting.thread_keys`: a key per row from its
    codes, where numpy makes two gathers, two casts and two sums over the rows); None
    where that is not built, the code columns are not int16 or int32 of one type, or a
    row or code is out of range (numpy's passes then, which raise as they always did)."""
    if _nesting is None or pid.dtype != tid.dtype or pid.dtype not in (np.int16, np.int32):
        return None
    if rows.dtype.kind not in "iu" or rows.ndim != 1:
        return None
    # int32 rows (a model's kept complete rows) read as they are: no int64 copy of them.
    rows = np.ascontiguousarray(rows, dtype=np.int32 if rows.dtype == np.int32 else np.int64)
    out = np.empty(rows.size, dtype=np.int64)
    ok = _nesting.thread_keys(
        np.ascontiguousarray(pid),
        np.ascontiguousarray(tid),
        rows,
        *canon,
        pid.dtype.itemsize,
        width,
        out,
    )
    return out if ok else None


def _canonical_table(values: list[object]) -> np.ndarray:
    """Per code (into `values`), the first code of a value written the same (int64)."""
    first: dict[str, int] = {}
    canon = np.zeros(max(len(values), 1), dtype=np.int64)
    for i, v in enumerate(values):
        canon[i] = first.setdefault(str(v), i)
    return canon


def _canonical_codes(canon: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """`codes` through `_canonical_table`'s `canon` (int64); the codes as they are where
    no two values are written the same (most traces: no gather needed)."""
    if np.array_equal(canon, np.arange(canon.size)):
        return codes.astype(np.int64)
    return canon[codes]


def gather_ranges(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Concatenation of arange(a_i, b_i)."""
    lengths = np.maximum(b - a, 0)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(a - (np.cumsum(lengths) - lengths), lengths)
    return offsets + np.arange(total, dtype=np.int64)
