#!/usr/bin/env python3
"""Whether reading many small ranks as one table pays before any analysis is batched: K
rank files' events joined (each event's text as its file has it, no id moved), read as one
trace and split back into K models, against each file read alone; and whether each split
model is the rank's own. The first step of a batched rank job (docs/critical_path.md, "How
much a batch would take off"). Not a reader: the rows each rank has come from reading it
alone (outside the timing), and the joined trace has the first rank's header and every
rank's process and thread names, where a batch reader would keep each file's; so the
header is not compared, and those names differ where the ranks' do.

    .venv/bin/python bench/batch_split.py                 # 64 ranks of the 8x1x256 job, 5 rounds
    .venv/bin/python bench/batch_split.py --ranks 16 --rounds 3
    .venv/bin/python bench/batch_split.py --files A.json.gz B.json.gz   # what differs, a file each

Each round reads the K ranks one by one, and joins, reads and splits them, in alternating
order (A B, B A, ...); it prints the median CPU time a rank (``time.process_time``, one
process) of each way and of the split alone, and the split models that differ from the
ranks' own (every column and its type, the string tables, the sparse columns, the memory
table, each row's args, the process and thread names).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from batch_probe import batch_arguments, job_ranks, trace_bytes
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.decode import _array_ends
from kinetoscope.ingest.event_text import find_events_start
from kinetoscope.model.sparse_column import (
    SPARSE_COLUMNS,
    SparseColumn,
    dense_is_smaller,
    has_value,
    row_type,
)
from kinetoscope.model.trace_model import NARROW_COLUMNS, TraceModel

# The event columns that hold codes into the model's string tables.
_TABLES = {"name": "names", "cat": "categories", "pid": "pids", "tid": "tids"}


def combined_trace(paths: list[Path], out: Path) -> None:
    """The ranks' events in one trace file, in file order, each event's text as its file
    has it (the args are kept as written), under the first rank's header. Where the events
    array is and ends is found as a load finds it."""
    head = b""
    bodies = []
    for path in paths:
        text = trace_bytes(path)
        found = find_events_start(text, True)
        if found is None:
            raise SystemExit(f"{path}: no events array")
        start = found[0]
        head = head or text[: text.rindex(b"[", 0, start)]
        end = next(_array_ends(text, start), None)  # the last candidate: the array's end
        if end is None:  # a cut file: a load keeps its whole events, a join cannot
            raise SystemExit(f"{path}: its events array is not closed")
        last, _ = end
        body = text[start:last].strip()
        if body:
            bodies.append(body)
    out.write_bytes(head + b"[" + b",".join(bodies) + b"]}")


def split(batch: TraceModel, counts: list[int]) -> list[TraceModel]:
    """The batch's rows as one model per rank (`counts`: the rows of each, in order)."""
    out = []
    start = 0
    for count in counts:
        out.append(_rank_model(batch, start, start + count))
        start += count
    return out


def _rank_model(batch: TraceModel, start: int, stop: int) -> TraceModel:
    """Rows [start, stop) of the batch as a model of their own, as reading them alone
    makes it: string tables in the order of first use, columns in the narrow type where
    every value fits, sparse columns kept sparse where that is smaller, args rebased."""
    events: dict[str, np.ndarray] = {}
    tables: dict[str, list[Any]] = {}
    for key, column in batch.events.items():
        if key in SPARSE_COLUMNS:  # made below, sparse or a value per row as for the rank
            continue
        part = column[start:stop]
        if key in _TABLES:
            part, tables[key] = _interned(part, getattr(batch, _TABLES[key]))
        elif key == "args_end":
            part = part - (int(column[start - 1]) if start else 0)
        events[key] = _narrowed(key, part)
    sparse = _sparse_columns(batch, start, stop, events)
    ends = batch.events["args_end"]
    base = int(ends[start - 1]) if start else 0
    return TraceModel(
        events=events,
        memory=_memory_rows(batch.memory, start, stop),
        names=tables["name"],
        categories=tables["cat"],
        pids=tables["pid"],
        tids=tables["tid"],
        args_blob=bytes(batch.args_blob[base : int(ends[stop - 1]) if stop > start else base]),
        process_names=dict(batch.process_names),
        thread_names=dict(batch.thread_names),
        header=batch.header,
        partial=batch.partial,
        warnings=list(batch.warnings),
        source=batch.source,
        sparse=sparse,
    )


def _sparse_columns(
    batch: TraceModel, start: int, stop: int, events: dict[str, np.ndarray]
) -> dict[str, SparseColumn]:
    """Rows [start, stop) of each sparse column of a load: kept sparse where that holds
    fewer bytes, else added to `events` as a value per row."""
    sparse: dict[str, SparseColumn] = {}
    for key, fill in SPARSE_COLUMNS.items():
        if key in batch.sparse:
            column = batch.sparse[key]
            lo, hi = np.searchsorted(column.rows, [start, stop])
            rows, values = column.rows[lo:hi] - start, column.values[lo:hi]
        else:  # a value per row in the batch: the rows with one
            dense = batch.events[key][start:stop]
            rows = np.flatnonzero(has_value(dense, fill))
            values = dense[rows]
        made = _smaller(key, rows, values, fill, stop - start)
        if isinstance(made, SparseColumn):
            sparse[key] = made
        else:
            events[key] = made
    return sparse


def _interned(codes: np.ndarray, table: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """The codes as codes into a table of the values they use, in order of first use."""
    order = list(dict.fromkeys(codes.tolist()))  # a rank's few hundred rows: a dict's pass
    remap = np.full(len(table), -1, dtype=np.int64)
    remap[order] = np.arange(len(order))
    return remap[codes], [table[c] for c in order]


_LIMITS = {key: np.iinfo(narrow) for key, narrow in NARROW_COLUMNS.items()}


def _narrowed(key: str, part: np.ndarray) -> np.ndarray:
    """`part` in the column's narrow type where every value fits (as a load keeps it),
    else as it is: a batch column of the narrow type already fits."""
    narrow = NARROW_COLUMNS.get(key)
    if narrow is None or part.dtype == np.dtype(narrow):
        return part
    if part.size == 0:  # a load with no value keeps the narrow type
        return part.astype(narrow)
    limits = _LIMITS[key]
    if limits.min <= int(part.min()) and int(part.max()) <= limits.max:
        return part.astype(narrow)
    return part


def _smaller(key: str, rows: np.ndarray, values: np.ndarray, fill: float, size: int) -> Any:
    """A rank's sparse column (its rows with a value, counted from its first, and those
    values), kept sparse where that holds fewer bytes (`SparseParts.finish_smaller`'s
    rule), else a value per row."""
    values = _narrowed(key, values)
    rows = rows.astype(row_type(size))
    if dense_is_smaller(values.nbytes + rows.nbytes, size, values.dtype.itemsize):
        dense = np.full(size, fill, dtype=values.dtype)
        dense[rows] = values
        return dense
    return SparseColumn(rows, values, fill, size)


def _memory_rows(memory: dict[str, np.ndarray], start: int, stop: int) -> dict[str, np.ndarray]:
    rows = memory["row"]
    keep = (rows >= start) & (rows < stop)
    out = {key: column[keep] for key, column in memory.items()}
    out["row"] = out["row"] - start
    return out


def differences(a: TraceModel, b: TraceModel) -> list[str]:
    """What differs between two models but their header (empty: the same model)."""
    out = []
    for key in sorted(set(a.events) | set(b.events)):
        x, y = a.events.get(key), b.events.get(key)
        if x is None or y is None or x.dtype != y.dtype or not np.array_equal(x, y, True):
            out.append(f"column {key}")
    for attr in ("names", "categories", "pids", "tids", "process_names", "thread_names"):
        if getattr(a, attr) != getattr(b, attr):
            out.append(attr)
    for key in sorted(set(a.sparse) | set(b.sparse)):
        x, y = a.sparse.get(key), b.sparse.get(key)
        same = x is not None and y is not None and x.size == y.size
        if not same or not (
            np.array_equal(x.rows, y.rows) and np.array_equal(x.values, y.values, True)
        ):
            out.append(f"sparse {key}")
    for key in sorted(set(a.memory) | set(b.memory)):
        if not np.array_equal(a.memory.get(key), b.memory.get(key)):
            out.append(f"memory {key}")
    if bytes(a.args_blob) != bytes(b.args_blob):
        out.append("args")
    return out


def _one_by_one(paths: list[Path]) -> float:
    start = time.process_time()
    for path in paths:
        build_model(str(path))
    return time.process_time() - start


def _together(paths: list[Path], batch: Path, counts: list[int]) -> tuple[float, float]:
    """CPU of finding each file's events and joining them, reading the batch, and
    splitting it (all of it, and the split alone)."""
    start = time.process_time()
    combined_trace(paths, batch)
    model = build_model(str(batch))
    read = time.process_time()
    split(model, counts)
    return time.process_time() - start, time.process_time() - read


def main(argv: list[str] | None = None) -> int:
    p = batch_arguments(__doc__)
    p.add_argument("--files", type=Path, nargs="+", help="check these traces' split instead")
    args = p.parse_args(argv)
    if args.files:
        return _check(args.files)
    paths = job_ranks(args)
    own, found = _compared(paths)
    differ = [(r, d) for r, d in enumerate(found) if d]
    counts = [len(m) for m in own]
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch.pt.trace.json"
        alone: list[float] = []
        together: list[tuple[float, float]] = []
        for r in range(args.rounds):
            for way in ("alone", "together") if r % 2 == 0 else ("together", "alone"):
                if way == "alone":
                    alone.append(_one_by_one(paths))
                else:
                    together.append(_together(paths, batch, counts))
    _print(args.ranks, alone, together, differ)
    return 0


def _compared(paths: list[Path]) -> tuple[list[TraceModel], list[list[str]]]:
    """Each file's own model, and what its model split from the joined read differs in."""
    own = [build_model(str(path)) for path in paths]
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch.pt.trace.json"
        combined_trace(paths, batch)
        models = split(build_model(str(batch)), [len(m) for m in own])
    return own, [differences(model, alone) for model, alone in zip(models, own)]


def _check(files: list[Path]) -> int:
    """Each file's split model against its own: what differs, a line each."""
    own, found = _compared(files)
    for path, alone, differ in zip(files, own, found):
        print(f"{path.name}: {len(alone)} rows; differs in: {', '.join(differ) or 'nothing'}")
    return 0


def _print(
    k: int, alone: list[float], together: list[tuple[float, float]], differ: list[Any]
) -> None:
    print(f"{k} ranks, {len(alone)} rounds; CPU ms a rank, medians")
    print(f"read one by one: {statistics.median(alone) / k * 1e3:.3f}")
    print(
        f"joined, read as one and split: {statistics.median(t for t, _ in together) / k * 1e3:.3f}"
    )
    print(f"  of which the split: {statistics.median(s for _, s in together) / k * 1e3:.3f}")
    ratio = statistics.median(a / t for a, (t, _) in zip(alone, together))
    print(f"one by one / joined, read as one and split: {ratio:.1f}x")
    print(f"split models that differ from the rank's own: {len(differ)} of {k}")
    for r, d in differ[:5]:
        print(f"  rank {r}: {', '.join(d)}")


if __name__ == "__main__":
    raise SystemExit(main())
