"""A batch of decoded events becomes a `Chunk` of columns: a handful of C-speed passes
(attribute gathers, hash interning, one msgspec decode of the batch's core args); no
per-event Python object outlives the batch."""

from __future__ import annotations

import functools
from itertools import compress
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from ..model.categories import PHASE_CODES, Kind, Phase, kind_of, memory_names
from ..model.decoders import decoders_for
from ..model.trace_model import NO_PYTHON_ID
from .event_text import decode_whole_events
from .schema import CoreArgs, Event, PythonIds
from .text_blocks import DecodeReport
from .values import lenient_floats, lenient_ints

_args_decoder, _one_args_decoder = decoders_for(CoreArgs)
_EMPTY_ARGS = CoreArgs()
_META = "M"


class Interner:
    """Values → dense codes, shared by every batch of one file."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def codes(self, items: list[Any]) -> np.ndarray:
        lookup = self.index.__getitem__
        try:
            return np.fromiter(map(lookup, items), dtype=np.int32, count=len(items))
        except KeyError:  # new values in this batch: add them, then look up again
            for value in dict.fromkeys(items):  # first-appearance order: stable codes
                if value not in self.index:
                    self.index[value] = len(self.values)
                    self.values.append(value)
            return np.fromiter(map(lookup, items), dtype=np.int32, count=len(items))


class Chunk(msgspec.Struct):
    """Columns of one run of events, with codes into its own small string tables, so it
    can be built in another process and merged in order."""

    cols: dict[str, np.ndarray]
    tables: dict[str, list[Any]]
    args: bytes
    memory: dict[str, np.ndarray] | None
    meta: list[tuple[Any, Any, str, Any]]
    warnings: list[str]
    events: int = 0  # events of the text, metadata events included
    partial: bool = False
    used: int = 0  # bytes of the text slice these events came from (see decode_whole_events)
    negative_durations: int = 0  # events whose `dur` was negative (read as 0)
    int32_columns: frozenset[str] = frozenset()  # NARROW_COLUMNS known to fit int32 (scanner)

    def __len__(self) -> int:
        return self.events


INTERNED = ("name", "cat", "pid", "tid")


def build_chunk(events: list[Event]) -> Chunk:
    """Turn decoded events into columns: a handful of C-speed passes per column."""
    count = len(events)
    interners = {k: Interner() for k in (*INTERNED, "ph")}
    phase_codes = interners["ph"].codes(list(map(attrgetter("ph"), events)))
    meta: list[tuple[Any, Any, str, Any]] = []
    meta_code = interners["ph"].index.get(_META)
    if meta_code is not None:
        is_meta = phase_codes == meta_code
        meta_events = list(compress(events, is_meta.tolist()))
        meta = meta_entries(
            [e.pid for e in meta_events],
            [e.tid for e in meta_events],
            [e.name for e in meta_events],
            [e.args for e in meta_events],
        )
        events = list(compress(events, (~is_meta).tolist()))
        phase_codes = phase_codes[~is_meta]
    n = len(events)
    cols: dict[str, np.ndarray] = {"ph": phase_table(interners["ph"].values)[phase_codes]}
    for key in INTERNED:
        cols[key] = interners[key].codes(list(map(attrgetter(key), events)))
    cols["kind"] = kinds(interners["cat"].values, interners["name"].values, cols)
    cols["ts"] = lenient_floats(list(map(attrgetter("ts"), events)))
    dur = lenient_floats(list(map(attrgetter("dur"), events)), 0.0)
    negative = int(np.count_nonzero(dur < 0))
    cols["dur"] = clean_durations(dur)
    flow = lenient_ints(list(map(attrgetter("id"), events)))
    cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, flow, -1)
    raws, blob, warnings = _utf8_args(list(map(attrgetter("args"), events)))
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=n)
    cols["args_end"] = np.cumsum(lengths)
    memory = arg_columns(cols, raws, lengths, blob)
    return Chunk(
        cols=cols,
        tables={k: interners[k].values for k in INTERNED},
        args=blob,
        memory=memory,
        meta=meta,
        warnings=warnings,
        events=count,
        negative_durations=negative,
    )


def phase_table(values: list[Any]) -> np.ndarray:
    """Phase code of each `ph` value of a table."""
    return np.array(
        [PHASE_CODES.get(p, Phase.OTHER) if isinstance(p, str) else Phase.OTHER for p in values],
        dtype=np.uint8,
    )


def clean_durations(dur: np.ndarray) -> np.ndarray:
    """A duration not finite or negative reads as 0 (`negative_duration_warning`)."""
    dur[~np.isfinite(dur) | (dur < 0)] = 0.0
    return dur


_NEGATIVE_DURATIONS = " events had a negative duration, read as 0"


def drop_empty_events(chunk: Chunk) -> int:
    """Take out the chunk's empty events (`{}`: no phase, name, time, process or args),
    which JAX's trace exporter ends its event list with; how many there were. Both
    decoders make the same columns of one, so this one place drops them."""
    cols = chunk.cols
    if any(None not in chunk.tables[k] for k in ("name", "cat", "pid")):
        return 0  # an empty event has a null name, category and pid (none without rows)
    blank = (cols["ph"] == Phase.OTHER) & np.isnan(cols["ts"])
    if not blank.any():
        return 0
    for key in ("name", "cat", "pid"):
        none_codes = np.array([v is None for v in chunk.tables[key]], dtype=bool)
        blank &= none_codes[cols[key]]
    blank &= np.diff(cols["args_end"], prepend=0) == 0
    count = int(np.count_nonzero(blank))
    if count:
        keep = ~blank
        if chunk.memory is not None:  # memory rows count the chunk's rows
            chunk.memory["row"] = chunk.memory["row"] - np.cumsum(blank)[chunk.memory["row"]]
        chunk.cols = {k: v[keep] for k, v in cols.items()}
    return count


def empty_events_warning(count: int) -> str:
    return f"{count} empty events ({{}}, as JAX's exporter ends its list with) were skipped"


def negative_duration_warning(count: int) -> str:
    """The load warning of a model whose file had `count` negative durations."""
    return f"{count}{_NEGATIVE_DURATIONS}"


def negative_durations(warnings: list[str]) -> int:
    """The count a model's load warnings give (0 when none says so)."""
    for warning in warnings:
        if warning.endswith(_NEGATIVE_DURATIONS) and warning.split(" ", 1)[0].isdigit():
            return int(warning.split(" ", 1)[0])
    return 0


def _utf8_args(raws: list[msgspec.Raw]) -> tuple[list[msgspec.Raw], bytes, list[str]]:
    """The args and their joined bytes. msgspec does not check the UTF-8 of args it keeps
    raw; every reader of them would fail, so bad bytes become U+FFFD here, once."""
    blob = b"".join(raws)  # type: ignore[arg-type]
    if blob.isascii():
        return raws, blob, []
    try:
        blob.decode("utf-8")
        return raws, blob, []
    except UnicodeDecodeError:
        pass
    fixed = [msgspec.Raw(bytes(r).decode("utf-8", "replace").encode("utf-8")) for r in raws]
    warning = "bytes that are not UTF-8 in event args were replaced by U+FFFD"
    return fixed, b"".join(fixed), [warning]  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1 << 12)
def _kind_row(category: str) -> tuple[int, ...]:
    """`kind_of` of each Phase for `category`, made once: made per chunk, the rows were half
    of a scanned chunk's Python time (a 253 MB trace: 5,300 calls of `kind_of`)."""
    return tuple(kind_of(category, p, "") for p in Phase)


def kind_table(categories: list[Any]) -> np.ndarray:
    """The Kind of each category (a row) and Phase (a column)."""
    rows = [_kind_row(c if isinstance(c, str) else "") for c in categories]
    return np.array(rows, dtype=np.uint8).reshape(len(categories), len(Phase))


def kinds(categories: list[Any], names: list[Any], cols: dict[str, np.ndarray]) -> np.ndarray:
    """Each row's Kind, from its category, phase and name (tables and codes)."""
    ph = cols["ph"]
    kinds = kind_table(categories)[cols["cat"], ph] if categories else np.zeros(len(ph), np.uint8)
    is_memory_name = memory_names(names)
    if is_memory_name is not None:
        kinds[(ph == Phase.INSTANT) & is_memory_name[cols["name"]]] = Kind.MEMORY
    return kinds


def arg_columns(
    cols: dict[str, np.ndarray], raws: list[msgspec.Raw], lengths: np.ndarray, blob: bytes
) -> dict[str, np.ndarray] | None:
    """The core args' columns of a batch's rows (`cols`, with their `kind`), read from
    each row's raw args (CoreArgs, PythonIds; `blob` is their text joined); the batch's
    memory part."""
    args = _core_args(raws, lengths)
    _arg_columns(cols, args)
    cols["python_id"], cols["python_parent_id"] = python_id_columns(raws, blob)
    return _memory_part(cols, args)


def _core_args(raws: list[msgspec.Raw], lengths: np.ndarray) -> Any:
    has = lengths > 2
    if has.all():
        return _decode_core_args(raws)
    args = np.full(len(raws), _EMPTY_ARGS, dtype=object)
    if has.any():
        parsed = np.empty(int(has.sum()), dtype=object)
        parsed[:] = _decode_core_args(list(compress(raws, has.tolist())))
        args[has] = parsed
    return args


def _arg_columns(cols: dict[str, np.ndarray], args: Any) -> None:
    def values(name: str) -> list[Any]:
        return list(map(attrgetter(name), args))

    external = lenient_ints(values("external_id"))
    cols["external_id"] = np.where(
        external >= 0, external, lenient_ints(values("external_id_lower"))
    )
    cols["correlation"] = lenient_ints(values("correlation"))
    cols["device"] = lenient_ints(values("device")).astype(np.int32)
    cols["stream"] = lenient_ints(values("stream"))
    cols["blocks_per_sm"] = lenient_floats(values("blocks_per_sm")).astype(np.float32)
    cols["occupancy"] = lenient_floats(values("occupancy")).astype(np.float32)
    cols["has_stack"] = _has_text(values("call_stack"))
    # The compiled scanner's hash of the work args; this path leaves it unknown (-1) and
    # the roofline reads those rows' args instead.
    cols["work_sig"] = np.full(len(cols["stream"]), -1, dtype=np.int64)


_INT64 = (-(2**63), 2**63)


def python_id_columns(raws: list[msgspec.Raw], blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Each row's `Python id` and `Python parent id`, as a struct of two optional ints
    reads them from its args (`PythonIds`): NO_PYTHON_ID (-1) where absent or null, and
    for both where the args do not decode so (a string id, args that are not an object).
    An int beyond int64 reads as absent."""
    ids = np.full(len(raws), NO_PYTHON_ID, dtype=np.int64)
    parents = ids.copy()
    # A key spelled with escapes (`"Pyth\u006fn id"`) is the same key.
    if b"Python" not in blob and b"\\u" not in blob:
        return ids, parents
    decoder, one = decoders_for(PythonIds)
    pieces = [r if len(r) else b"{}" for r in raws]
    try:
        decoded = decoder.decode(b"".join((b"[", b",".join(pieces), b"]")))  # type: ignore[arg-type]
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        decoded = []
        for piece in pieces:
            try:
                decoded.append(one.decode(piece))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                decoded.append(PythonIds())
    ids = _id_column([d.id for d in decoded])
    parents = _id_column([d.parent for d in decoded])
    return ids, parents


def _id_column(values: list[int | None]) -> np.ndarray:
    count = len(values)
    try:
        return np.fromiter(
            (NO_PYTHON_ID if v is None else v for v in values), dtype=np.int64, count=count
        )
    except OverflowError:
        lo, hi = _INT64
        kept = (v if v is not None and lo < v < hi else NO_PYTHON_ID for v in values)
        return np.fromiter(kept, dtype=np.int64, count=count)


def _has_text(raws: list[msgspec.Raw]) -> np.ndarray:
    """Whether each raw value is a non-empty JSON string (`""` is two bytes)."""
    flags = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws)) > 2
    for i in np.flatnonzero(flags).tolist():
        flags[i] = memoryview(raws[i])[0] == 0x22  # a string, not a list or number
    return flags


def _memory_part(cols: dict[str, np.ndarray], all_args: Any) -> dict[str, np.ndarray] | None:
    rows = np.flatnonzero(cols["kind"] == Kind.MEMORY)
    if len(rows) == 0:
        return None
    args = [all_args[i] for i in rows.tolist()]  # memory events are a small share

    def values(name: str) -> list[Any]:
        return list(map(attrgetter(name), args))

    return {
        "row": rows.astype(np.int64),
        "bytes": lenient_floats(values("nbytes"), 0.0),
        "addr": lenient_ints(values("addr")),
        "device_type": lenient_ints(values("device_type")).astype(np.int32),
        "device_id": lenient_ints(values("device_id")).astype(np.int32),
        "total_allocated": lenient_floats(values("total_allocated")),
        "total_reserved": lenient_floats(values("total_reserved")),
    }


def meta_entries(
    pids: list[Any], tids: list[Any], names: list[Any], raws: list[msgspec.Raw]
) -> list[tuple[Any, Any, str, Any]]:
    """(pid, tid, name, value) of metadata events: the process or thread name, sort index
    or labels their args carry."""
    raws = [r if len(r) else msgspec.Raw(b"{}") for r in raws]
    out = []
    for pid, tid, name, a in zip(pids, tids, names, _decode_core_args(raws)):
        value = (
            a.name
            if a.name is not None
            else (a.sort_index if a.sort_index is not None else a.labels)
        )
        out.append((pid, tid, str(name), value))
    return out


def build_text_chunk(body: bytes) -> Chunk:
    """In a worker process: decode a text slice and build its columns."""
    report = DecodeReport()
    events, used = decode_whole_events(body, report)
    chunk = build_chunk(events)
    chunk.used = used
    chunk.warnings = report.warnings
    chunk.partial = report.partial
    return chunk


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _decode_core_args(raws: list[msgspec.Raw]) -> list[CoreArgs]:
    try:
        # One join, then one copy to frame it (`b"[" + ... + b"]"` copies twice).
        listed = b"".join((b"[", b",".join(raws), b"]"))  # type: ignore[arg-type]
        return _args_decoder.decode(listed)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        out = []
        for r in raws:
            try:
                out.append(_one_args_decoder.decode(r) if len(r) else _EMPTY_ARGS)
            except (
                msgspec.DecodeError,
                msgspec.ValidationError,
                UnicodeDecodeError,
                RecursionError,
            ):
                out.append(_EMPTY_ARGS)
        return out
