"""The rows every time-based sum leaves out, found once per model and shared by the views.

A row is left out of time-based sums when its time cannot be right: a second copy of an
event (`duplicate_events`: the first copy, in file order, is kept), `"ts": 0` with no
duration (`zero_timestamps`), or a start far from the rest of the trace (`clock_outlier`).
(A negative duration never reaches the model: the loader reads it as 0.) The views read
`untrusted_mask(model)` (memoised with the model) or `trusted_only(model, rows)`; the
`health` view says how many of each were left out.

Everything here is vectorised over the columns: the duplicate check sorts the rows by
start; the clock check sorts them again only for a trace whose starts spread past its
gap (most traces: no sort).
"""

from __future__ import annotations

import msgspec
import numpy as np

from ...model.trace_model import TraceModel

try:
    from . import _nesting  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: numpy's passes find the same rows
    _nesting = None

# A start this far from every other start (or farther than `CLOCK_GAP_IQR` times the
# interquartile range of starts, when that is longer) is on another clock: 2026 profilers
# wrote kernels of a second profile on the first profile's clock, hours away. Quartiles,
# not the extremes: a quarter of the events may be off the clock and still be found.
CLOCK_GAP_MIN_US = 1_000_000.0
CLOCK_GAP_IQR = 10.0
_KEY_COLUMNS = ("ph", "kind", "cat", "name", "pid", "tid", "correlation", "external_id")
_MORE_KEYS = ("flow_id", "device", "stream")
_SHORT_RUN = 8  # rows of one start compared pairwise up to this many, else sorted


class RowFlags(msgspec.Struct, frozen=True):
    """Boolean masks over every row (read-only)."""

    zero_ts: np.ndarray
    duplicate: np.ndarray  # the second and later copies
    clock_outlier: np.ndarray
    untrusted: np.ndarray  # any of the above
    any_untrusted: bool  # whether any row is set in `untrusted` (most traces: none)


def row_flags(model: TraceModel) -> RowFlags:
    """The flags of `model`, computed once and kept with it."""
    return model.derived("_health_row_flags", _row_flags)


def keep_ranks_row_flags(batch: TraceModel, ranks: list[TraceModel]) -> None:
    """Keeps with `batch` (the ranks' rows side by side, `model.rank_batch`) each rank's own
    flags: duplicates and clock outliers are judged within a trace, so a batch's rows are
    flagged as their rank's alone flags them, never against another rank's."""
    own = [row_flags(model) for model in ranks]
    joined = _kept_flags(
        np.concatenate([f.zero_ts for f in own]),
        np.concatenate([f.duplicate for f in own]),
        np.concatenate([f.clock_outlier for f in own]),
    )
    batch.derived("_health_row_flags", lambda _: joined)


def untrusted_mask(model: TraceModel) -> np.ndarray:
    return row_flags(model).untrusted


def has_untrusted_rows(model: TraceModel) -> bool:
    """Whether any row is left out (else `untrusted_mask` is all False: no need to read it)."""
    return row_flags(model).any_untrusted


def trusted_only(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """`rows` without those left out of time-based sums (`rows` itself where none is)."""
    if not has_untrusted_rows(model) or rows.size == 0:
        return rows
    return rows[~untrusted_mask(model)[rows]]


def drop_untrusted(model: TraceModel, mask: np.ndarray) -> None:
    """Clear, in the per-row `mask`, the rows left out of time-based sums (nothing to
    read where none is)."""
    if has_untrusted_rows(model):
        mask &= ~untrusted_mask(model)


def _row_flags(model: TraceModel) -> RowFlags:
    ev = model.events
    ts, dur = ev["ts"], ev["dur"]
    zero_ts = (ts == 0) & ~(dur > 0)
    duplicate = duplicate_mask(model)
    # The profiler's own end mark is not an activity: a trimmed trace leaves it far away.
    mark = model.name_code("Record Window End")
    clock = clock_outlier_mask(model, ~(zero_ts | duplicate) & (ev["name"] != mark))
    return _kept_flags(zero_ts, duplicate, clock)


def _kept_flags(zero_ts: np.ndarray, duplicate: np.ndarray, clock: np.ndarray) -> RowFlags:
    """The flags as kept with the model: every mask with no row set is one array of
    zeros (never written, so it holds no memory: the pages of a large `np.zeros` are
    the system's zero page until written), and `untrusted` is the one mask set where
    only one is (most traces set none: a row's byte per mask, 3.7 MB on a 0.9M-row
    trace, held through every view)."""
    none = np.zeros(zero_ts.size, dtype=bool)
    masks = [mask if mask.any() else none for mask in (zero_ts, duplicate, clock)]
    flagged = [mask for mask in masks if mask is not none]
    if len(flagged) <= 1:
        untrusted = flagged[0] if flagged else none
    else:
        untrusted = masks[0] | masks[1] | masks[2]
    for mask in (*masks, untrusted):
        mask.flags.writeable = False
    return RowFlags(masks[0], masks[1], masks[2], untrusted, bool(flagged))


def duplicate_mask(model: TraceModel) -> np.ndarray:
    """Rows that repeat an earlier row: the same phase, kind, category, name, process,
    thread, start, duration, correlation, external id, flow id, device, stream and args
    text. Only rows that share their start and kind with another row are compared, first
    by a hash of their keys, then, among rows of one hash, by the keys themselves."""
    ev, n = model.events, len(model)
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    rows = _sharing_a_start(ev["ts"])  # by start: by row only once the few are known
    run = ev["ts"][rows]
    # Copies share their kind too: a flow's start and end marks share the times of the
    # launch and the kernel they link (a third of a trace's rows share a start, few with
    # a row of their kind). Their starts tell the rows of one start apart (equal floats,
    # adjacent): no count of the runs over every row.
    same_kind = _pairs_in_runs(run, ev["kind"][rows])
    rows, run = rows[same_kind], run[same_kind]
    rows = np.sort(rows[_hash_shared(model, rows, run)])
    if rows.size < 2:
        return out
    keys = _keys(model, rows)
    # lexsort is stable: equal keys stay in file order, so the first copy leads its group
    perm = np.lexsort(keys[::-1])
    by_key, stacked = rows[perm], keys[:, perm]
    repeat = np.all(stacked[:, 1:] == stacked[:, :-1], axis=0)
    later = np.flatnonzero(repeat) + 1
    firsts = _group_firsts(repeat)
    for pos, first in zip(later.tolist(), firsts[later].tolist()):
        row, kept = int(by_key[pos]), int(by_key[first])
        out[row] = model.raw_args(row) == model.raw_args(kept)
    return out


def _sharing_a_start(ts: np.ndarray) -> np.ndarray:
    """The rows whose start another row shares, by start (file order among equal ones):
    of the rows by start, those equal to the one before or after, kept in one compiled
    pass where built (`_nesting.keep_equal_neighbours`: no sorted copy of the starts nor
    masks of every row beside the order)."""
    order = np.argsort(ts, kind="stable")
    if _nesting is not None and ts.dtype == np.float64 and order.dtype == np.int64:
        kept = _nesting.keep_equal_neighbours(np.ascontiguousarray(ts), order)
        if kept >= 0:
            return order[:kept].copy()  # the order's buffer let go of
    sorted_ts = ts[order]
    same = sorted_ts[1:] == sorted_ts[:-1]
    del sorted_ts
    shared = np.zeros(order.size, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    return order[shared]


def _keys(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """The compared values of `rows`, one int64 row per key."""
    ev = model.events
    ends = ev["args_end"]
    args_len = ends[rows] - np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
    keys = [ev["ts"][rows].view(np.int64), ev["dur"][rows].view(np.int64), args_len]
    keys += [model.column_at(c, rows).astype(np.int64) for c in (*_KEY_COLUMNS, *_MORE_KEYS)]
    return np.stack(keys) if rows.size else np.empty((len(keys), 0), np.int64)


def _hash_shared(model: TraceModel, rows: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Which of `rows` (by start; `run`: their starts, equal for the rows of one) share a
    hash of their start, duration, name, thread and args length with another row of
    their start (only those can be copies)."""
    if rows.size < 2:
        return np.zeros(rows.size, dtype=bool)
    ev = model.events
    ends = ev["args_end"]
    args_len = ends[rows] - np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
    mixed = ev["ts"][rows].view(np.uint64).copy()
    with np.errstate(over="ignore"):
        for values in (ev["dur"][rows].view(np.uint64), ev["name"][rows], ev["tid"][rows]):
            mixed *= np.uint64(0x9E3779B97F4A7C15)
            mixed ^= values.astype(np.uint64)
        mixed *= np.uint64(0x9E3779B97F4A7C15)
        mixed ^= args_len.astype(np.uint64)
    return _pairs_in_runs(run, mixed)


def _pairs_in_runs(run: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Which positions share their `key` with another position of their run (`run`: equal
    for the positions of one, which sit together)."""
    shared = np.zeros(run.size, dtype=bool)
    if run.size < 2:
        return shared
    # Rows of one start sit together and few share one (a parent and its first child):
    # each compared with the next ones of its start, no sort; long runs are sorted.
    first = np.flatnonzero(np.concatenate([[True], run[1:] != run[:-1]]))
    size = np.diff(np.append(first, run.size))
    for step in range(1, min(int(size.max()), _SHORT_RUN)):
        pair = (run[step:] == run[:-step]) & (key[step:] == key[:-step])
        shared[step:] |= pair
        shared[:-step] |= pair
    long = np.repeat(size > _SHORT_RUN, size)
    if long.any():
        at = np.flatnonzero(long)
        order = at[np.lexsort((key[at], run[at]))]
        equal = (run[order[1:]] == run[order[:-1]]) & (key[order[1:]] == key[order[:-1]])
        shared[order[1:][equal]] = True
        shared[order[:-1][equal]] = True
    return shared


def _group_firsts(repeat: np.ndarray) -> np.ndarray:
    """For each position of a key-sorted list, the position of its group's first item."""
    starts = np.concatenate([[True], ~repeat])
    return np.maximum.accumulate(np.where(starts, np.arange(starts.size), 0))


def clock_outlier_mask(model: TraceModel, considered: np.ndarray) -> np.ndarray:
    """Rows among `considered` that lie apart from the trace's main body: by start, the
    events split where one starts more than the gap (the larger of `CLOCK_GAP_MIN_US` and
    `CLOCK_GAP_IQR` interquartile ranges of starts) after every earlier one has ended (a
    long range that covers a quiet stretch keeps both sides together); every part but
    the one holding the median start is off the clock."""
    ev, n = model.events, len(model)
    out = np.zeros(n, dtype=bool)
    finite = np.isnan(ev["ts"])
    np.logical_not(finite, out=finite)
    finite &= considered
    considered = finite
    starts = ev["ts"][considered]
    if starts.size < 3:
        return out
    # A part starts more than `gap` after every earlier event ended, so after the first
    # start: within `gap` of it, every event is in one part (most traces: no sort; within
    # the least gap, no quartiles either).
    spread = float(starts.max()) - float(starts.min())
    if spread <= CLOCK_GAP_MIN_US:
        return out
    quartiles = [starts.size // 4, starts.size * 3 // 4]
    starts.partition(quartiles)  # in place: the starts are a copy already
    lo, hi = starts[quartiles]
    del starts
    gap = max(CLOCK_GAP_MIN_US, CLOCK_GAP_IQR * float(hi - lo))
    if spread <= gap:
        return out
    order = np.argsort(ev["ts"], kind="stable")  # file order among equal starts
    order = order[considered[order]]
    starts = ev["ts"][order]
    dur = ev["dur"][order]
    covered = np.maximum.accumulate(starts + np.where(dur > 0, dur, 0.0))
    part = np.concatenate([[0], np.cumsum(starts[1:] - covered[:-1] > gap)])
    out[order[part != part[order.size // 2]]] = True
    return out
