"""A device's history (`device_traces[d]`, a list of `TraceEntry` dicts) as columns: one
array per field, so that the replay (`snapshot_history`) is a few sorts and cumulative
sums instead of a Python step per entry.

The file is untrusted, so each field is checked as it is read: an `addr`, `size` or
`stream` that is not an int within int64 is missing (the sentinel `MISSING`; a CUDA
address or size is far inside it); a `time_us` that is not a number is NaN. Entries that
are not dicts are left out (`total` still counts them). The frames stay the file's own
objects (torch shares one list between the entries of one stack), held by reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

FREED = "free_completed"
ACTIONS = (
    "alloc",
    FREED,
    "oom",
    "segment_alloc",
    "segment_map",
    "segment_free",
    "segment_unmap",
)
OTHER, ALLOC, FREE_COMPLETED, OOM = 0, 1, 2, 3
RESERVE = (4, 5)  # segment_alloc, segment_map
RELEASE = (6, 7)  # segment_free, segment_unmap
_CODES = {name: code for code, name in enumerate(ACTIONS, start=1)}
MISSING = np.iinfo(np.int64).min
_HIGH = np.iinfo(np.int64).max
# A history entry's size beyond this is no allocation (the sums of the replay stay in
# int64); the same bound as the segments' (`snapshot.MAX_BYTES`).
MAX_BYTES = 1 << 40
# An address or device number beyond this is not one (an int's hash repeats from 2**61-1
# on: dicts keyed by such numbers could be made to collide).
MAX_ADDRESS = 1 << 60


def time_of(entry: dict[str, Any]) -> float | None:
    """An entry's `time_us` (epoch microseconds); None when absent or not a number."""
    t = entry.get("time_us")
    if type(t) is float or (type(t) is int and -_FLOAT_INTS < t < _FLOAT_INTS):
        return float(t)
    return None


_FLOAT_INTS = 1 << 1000  # an int time beyond this has no float (and is no time)


@dataclass
class Columns:
    total: int  # entries in the list, dicts or not
    entries: list[dict[str, Any]]  # the dict entries, in order
    action: np.ndarray  # int8 codes (ACTIONS from 1; 0: any other)
    addr: np.ndarray  # int64; MISSING
    size: np.ndarray
    stream: np.ndarray
    time: np.ndarray  # float64; NaN: no time

    NO_STREAM = MISSING

    @property
    def n(self) -> int:
        return len(self.entries)

    @property
    def addr_valid(self) -> np.ndarray:
        return self.addr != MISSING

    @property
    def size_valid(self) -> np.ndarray:
        return self.size != MISSING

    def entry(self, i: int) -> dict[str, Any]:
        return self.entries[i]

    def frames(self, i: int) -> Any:
        return self.entries[i].get("frames")

    def stream_of(self, i: int) -> int | None:
        s = int(self.stream[i])
        return None if s == MISSING else s


def _field(entries: list[dict[str, Any]], key: str) -> list[Any]:
    return list(map(dict.get, entries, repeat(key)))


def _ints(values: list[Any]) -> np.ndarray:
    """int64 of the values; MISSING where one is not an int or is out of range. All ints
    (torch's own files) convert at C speed; the checked path is for the rest."""
    if set(map(type, values)) <= {int}:
        try:
            out = np.array(values, dtype=np.int64)
        except OverflowError:
            pass
        else:
            return out
    return np.fromiter(
        (v if type(v) is int and MISSING < v <= _HIGH else MISSING for v in values),
        np.int64,
        len(values),
    )


def _sizes(sizes: np.ndarray) -> np.ndarray:
    return np.where((sizes < -MAX_BYTES) | (sizes > MAX_BYTES), MISSING, sizes)


def _times(values: list[Any]) -> np.ndarray:
    if set(map(type, values)) <= {int, float}:
        try:
            return np.array(values, dtype=np.float64)
        except OverflowError:
            pass
    nan = float("nan")
    return np.fromiter(
        (
            float(t) if type(t) is float or type(t) is int and abs(t) < _FLOAT_INTS else nan
            for t in values
        ),
        np.float64,
        len(values),
    )


def _actions(values: list[Any]) -> np.ndarray:
    if set(map(type, values)) <= {str}:
        return np.fromiter(map(_CODES.get, values, repeat(OTHER)), np.int8, len(values))
    return np.fromiter(
        (_CODES.get(a, OTHER) if type(a) is str else OTHER for a in values), np.int8, len(values)
    )


def columns(trace: Any) -> Columns:
    entries = [e for e in trace if isinstance(e, dict)] if isinstance(trace, list) else []
    return Columns(
        total=len(trace) if isinstance(trace, list) else 0,
        entries=entries,
        action=_actions(_field(entries, "action")),
        addr=_ints(_field(entries, "addr")),
        size=_sizes(_ints(_field(entries, "size"))),
        stream=_ints(_field(entries, "stream")),
        time=_times(_field(entries, "time_us")),
    )
