"""Build a TraceModel from a trace file: decode batches, turn each into columns.

Per batch the work is a handful of C-speed passes (attribute gathers, hash interning,
one msgspec decode of the batch's args); no per-event Python objects outlive a batch.
Raw args go straight to a spill file, which the cache keeps and memory-maps.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import compress
from operator import attrgetter
from typing import Any, BinaryIO

import msgspec
import numpy as np

from .categories import PHASE_CODES, Kind, Phase, kind_of
from .decode import DecodeReport, ProgressFn, iter_event_batches
from .model import EVENT_COLUMNS, MEMORY_COLUMNS, TraceModel, empty_columns, file_identity
from .schema import CoreArgs, Event

_args_decoder = msgspec.json.Decoder(list[CoreArgs])
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
            for value in set(items):
                if value not in self.index:
                    self.index[value] = len(self.values)
                    self.values.append(value)
            return np.fromiter(map(lookup, items), dtype=np.int32, count=len(items))


def _floats(values: list[Any], default: float = np.nan) -> np.ndarray:
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        return np.array([_to_float(v, default) for v in values], dtype=np.float64)


def _to_float(v: Any, default: float) -> float:
    if v is None:
        return default
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def _ints(values: list[Any], default: int = -1) -> np.ndarray:
    try:
        arr = np.array(values, dtype=np.int64)
        return arr
    except (TypeError, ValueError, OverflowError):
        return np.array([_to_int(v, default) for v in values], dtype=np.int64)


def _to_int(v: Any, default: int) -> int:
    if v is None or isinstance(v, bool):
        return default
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else default
    if isinstance(v, float):
        return int(v) if v == v and abs(v) < 2**63 else default
    try:
        text = str(v).strip()
        return int(text, 16) if text.lower().startswith("0x") else int(float(text))
    except (TypeError, ValueError, OverflowError):
        return default


class ModelBuilder:
    def __init__(self, args_sink: BinaryIO | None) -> None:
        self.names = Interner()
        self.phases = Interner()
        self.cats = Interner()
        self.pids = Interner()
        self.tids = Interner()
        self.parts: list[dict[str, np.ndarray]] = []
        self.mem_parts: list[dict[str, np.ndarray]] = []
        self.meta: list[tuple[Any, Any, str, Any]] = []
        self.args_sink = args_sink
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kinetoscope-args")
        self._pending_write: Future[int] | None = None
        self.args_memory: list[bytes] = []
        self.args_total = 0
        self.rows = 0
        self.kind_cache: dict[tuple[int, int], int] = {}

    def add(self, batch: list[Event]) -> None:
        phase_codes = self.phases.codes(list(map(attrgetter("ph"), batch)))
        meta_code = self.phases.index.get(_META)
        if meta_code is not None and (phase_codes == meta_code).any():
            is_meta = phase_codes == meta_code
            self._add_meta(list(compress(batch, is_meta.tolist())))
            batch = list(compress(batch, (~is_meta).tolist()))
            phase_codes = phase_codes[~is_meta]
        n = len(batch)
        if n == 0:
            return
        phase_table = np.array(
            [
                PHASE_CODES.get(p, Phase.OTHER) if isinstance(p, str) else Phase.OTHER
                for p in self.phases.values
            ],
            dtype=np.uint8,
        )
        cols: dict[str, np.ndarray] = {}
        ph = phase_table[phase_codes]
        cols["ph"] = ph
        cols["name"] = self.names.codes(list(map(attrgetter("name"), batch)))
        cols["cat"] = self.cats.codes(list(map(attrgetter("cat"), batch)))
        cols["kind"] = self._kinds(cols["cat"], ph, cols["name"])
        cols["pid"] = self.pids.codes(list(map(attrgetter("pid"), batch)))
        cols["tid"] = self.tids.codes(list(map(attrgetter("tid"), batch)))
        cols["ts"] = _floats(list(map(attrgetter("ts"), batch)))
        dur = _floats(list(map(attrgetter("dur"), batch)), 0.0)
        dur[~np.isfinite(dur) | (dur < 0)] = 0.0
        cols["dur"] = dur
        flow = _ints(list(map(attrgetter("id"), batch)))
        cols["flow_id"] = np.where(cols["kind"] == Kind.FLOW, flow, -1)

        raws = list(map(attrgetter("args"), batch))
        lengths = np.fromiter(map(len, raws), dtype=np.int64, count=n)
        self._store_args(raws, lengths)
        self._add_args(cols, raws, lengths)
        self._add_memory(cols, raws, lengths)
        self.parts.append(cols)
        self.rows += n

    def _kinds(self, cat: np.ndarray, ph: np.ndarray, name: np.ndarray) -> np.ndarray:
        pair = cat.astype(np.int64) * 16 + ph
        uniq, inverse = np.unique(pair, return_inverse=True)
        table = np.empty(len(uniq), dtype=np.uint8)
        for i, key in enumerate(uniq.tolist()):
            cached = self.kind_cache.get(key)
            if cached is None:
                category = self.cats.values[key // 16]
                category = category if isinstance(category, str) else ""
                cached = int(kind_of(category, Phase(key % 16), ""))
                self.kind_cache[key] = cached
            table[i] = cached
        kinds = table[inverse]
        memory_code = self.names.index.get("[memory]")  # an interned name code
        if memory_code is not None:
            kinds[(ph == Phase.INSTANT) & (name == memory_code)] = Kind.MEMORY
        return kinds

    def _store_args(self, raws: list[msgspec.Raw], lengths: np.ndarray) -> None:
        data = b"".join(raws)  # type: ignore[arg-type]
        if self.args_sink is not None:
            # Writes release the GIL: a writer thread overlaps them with decoding.
            if self._pending_write is not None:
                self._pending_write.result()
            self._pending_write = self._writer.submit(self.args_sink.write, data)
        else:
            self.args_memory.append(data)
        ends = self.args_total + np.cumsum(lengths)
        self.args_total = int(ends[-1]) if len(ends) else self.args_total
        self._pending_ends = ends

    def _add_args(
        self, cols: dict[str, np.ndarray], raws: list[msgspec.Raw], lengths: np.ndarray
    ) -> None:
        cols["args_end"] = self._pending_ends
        n = len(raws)
        has = lengths > 2
        if has.all():
            args: Any = _decode_core_args(raws)
        else:
            args = np.full(n, _EMPTY_ARGS, dtype=object)
            if has.any():
                parsed = np.empty(int(has.sum()), dtype=object)
                parsed[:] = _decode_core_args(list(compress(raws, has.tolist())))
                args[has] = parsed
        ext = list(map(attrgetter("external_id"), args))
        ext_lower = list(map(attrgetter("external_id_lower"), args))
        external = _ints(ext)
        fallback = _ints(ext_lower)
        cols["external_id"] = np.where(external >= 0, external, fallback)
        cols["correlation"] = _ints(list(map(attrgetter("correlation"), args)))
        cols["device"] = _ints(list(map(attrgetter("device"), args))).astype(np.int32)
        cols["stream"] = _ints(list(map(attrgetter("stream"), args)))
        cols["blocks_per_sm"] = _floats(list(map(attrgetter("blocks_per_sm"), args))).astype(
            np.float32
        )
        cols["occupancy"] = _floats(list(map(attrgetter("occupancy"), args))).astype(np.float32)
        self._pending_args = args

    def _add_memory(
        self, cols: dict[str, np.ndarray], raws: list[msgspec.Raw], lengths: np.ndarray
    ) -> None:
        rows = np.flatnonzero(cols["kind"] == Kind.MEMORY)
        if len(rows) == 0:
            return
        args = [self._pending_args[i] for i in rows.tolist()]  # memory events are few
        self.mem_parts.append(
            {
                "row": rows.astype(np.int64) + self.rows,
                "bytes": _floats(list(map(attrgetter("nbytes"), args)), 0.0),
                "addr": _ints(list(map(attrgetter("addr"), args))),
                "device_type": _ints(list(map(attrgetter("device_type"), args))).astype(np.int32),
                "device_id": _ints(list(map(attrgetter("device_id"), args))).astype(np.int32),
                "total_allocated": _floats(list(map(attrgetter("total_allocated"), args))),
                "total_reserved": _floats(list(map(attrgetter("total_reserved"), args))),
            }
        )

    def _add_meta(self, events: list[Event]) -> None:
        raws = [e.args if len(e.args) else msgspec.Raw(b"{}") for e in events]
        parsed = _decode_core_args(raws)
        for e, a in zip(events, parsed):
            value = (
                a.name
                if a.name is not None
                else (a.sort_index if a.sort_index is not None else a.labels)
            )
            self.meta.append((e.pid, e.tid, str(e.name), value))

    def flush(self) -> None:
        if self._pending_write is not None:
            self._pending_write.result()
            self._pending_write = None
        self._writer.shutdown()

    def finish(
        self, header: dict[str, Any], report: DecodeReport, source: dict[str, Any], args_blob: Any
    ) -> TraceModel:
        events = _concat(self.parts, EVENT_COLUMNS)
        memory = _concat(self.mem_parts, MEMORY_COLUMNS)
        model = TraceModel(
            events=events,
            memory=memory,
            names=[_text(v) for v in self.names.values],
            categories=[_text(v) for v in self.cats.values],
            pids=list(self.pids.values),
            tids=list(self.tids.values),
            args_blob=args_blob,
            header=header,
            partial=report.partial,
            warnings=list(report.warnings),
            source=source,
        )
        for pid, tid, kind, value in self.meta:
            if kind == "process_name" and value is not None:
                model.process_names[str(pid)] = str(value)
            elif kind == "thread_name" and value is not None:
                model.thread_names[f"{pid}/{tid}"] = str(value)
            elif kind == "process_labels" and value is not None:
                model.process_labels[str(pid)] = str(value)
            elif kind == "process_sort_index":
                model.process_sort[str(pid)] = _to_int(value, 0)
            elif kind == "thread_sort_index":
                model.thread_sort[f"{pid}/{tid}"] = _to_int(value, 0)
        return model

    def memory_args_bytes(self) -> bytes:
        return b"".join(self.args_memory)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _decode_core_args(raws: list[msgspec.Raw]) -> list[CoreArgs]:
    try:
        return _args_decoder.decode(b"[" + b",".join(raws) + b"]")  # type: ignore[arg-type]
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        out = []
        one = msgspec.json.Decoder(CoreArgs)
        for r in raws:
            try:
                out.append(one.decode(r) if len(r) else _EMPTY_ARGS)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
                out.append(_EMPTY_ARGS)
        return out


def _concat(parts: list[dict[str, np.ndarray]], spec: dict[str, str]) -> dict[str, np.ndarray]:
    if not parts:
        return empty_columns(spec)
    return {k: np.concatenate([p[k] for p in parts]).astype(v, copy=False) for k, v in spec.items()}


def build_model(
    path: str,
    args_path: str | None = None,
    progress: ProgressFn | None = None,
    open_args: Callable[[str], BinaryIO] | None = None,
) -> TraceModel:
    """Decode `path` into a TraceModel. With `args_path`, raw args are spilled there and
    memory-mapped; otherwise they are kept in memory."""
    source = file_identity(path)
    report = DecodeReport()
    sink = open(args_path, "wb") if args_path else None  # noqa: SIM115 - closed below
    builder = ModelBuilder(sink)
    try:
        with open(path, "rb") as f:
            for batch in iter_event_batches(f, source["size"], report, progress):
                builder.add(batch)
    finally:
        builder.flush()
        if sink is not None:
            sink.close()
    if args_path and os.path.getsize(args_path) > 0:
        blob: Any = np.memmap(args_path, dtype=np.uint8, mode="r")
    elif args_path:
        blob = b""
    else:
        blob = builder.memory_args_bytes()
    header = {k: v for k, v in report.header.items() if k != "traceEvents"}
    return builder.finish(header, report, source, blob)
