"""Many small ranks of one job as one table: the batch a rank job can analyse in one pass
instead of one pass a rank (docs/critical_path.md, "Runs of many ranks"). A rank of the
2,048-rank bench job has ~200 events, so every stage pays numpy's cost per call, not per
event; K ranks side by side pay it once.

`join_ranks` joins K models read each alone (each file scanned as its own load scans it)
so that no two ranks share anything a stage keys by:
- process ids are moved apart (rank k's pid p reads k * pid_stride + p; a text pid, the
  profiler's own "Traces" or "Spans", reads "Traces#k"), and with them the process and
  thread names, labels and sort indices keyed by them;
- correlation, external, flow and Python ids are moved apart the same way (id_stride);
- devices are moved apart (device_stride), in the events and the memory rows;
- the name, category and thread id tables are merged (the ranks of a job share their
  names, so a name's class is found once a batch), in the order of first use, as a load
  interns them.

Rank 0's values are its own. A stage whose answer is one per row or per thread, device or
call (kernel classes, GPU work, host ranges, the collectives) then gives each rank its own
answer over that rank's rows; `bench/batch_separable.py` checks which do. What stays per
file is kept per file: the header (vendor, `pg_config`, time origin), the load's warnings
and whether it was cut. The ids inside the args' text are each file's own: only the
columns are moved. A trace the join could not keep apart is refused (`why_not_joined`):
GPU work that names its device only by its process id (2020-21 traces), which a moved
pid would lose, and an id of 0 (2020-21 traces' `external id` of NCCL kernels and
copies), which some stages read as none (`> 0`) and others as an id: moved, one would
change; kept, the ranks would share it."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
import numpy as np

from .categories import GPU_ACTIVITY_KINDS, kind_mask
from .sparse_column import (
    SPARSE_COLUMNS,
    SparseColumn,
    dense_is_smaller,
    fits_integer_type,
    has_value,
    row_type,
)
from .trace_model import EVENT_COLUMNS, NARROW_COLUMNS, TraceModel

# The id columns moved apart by `id_stride` (-1: no id, kept).
ID_COLUMNS = ("correlation", "external_id", "flow_id", "python_id", "python_parent_id")


class RankBatch(msgspec.Struct, frozen=True):
    """K ranks' models as one (`model`): rank k holds rows [first_rows[k],
    first_rows[k + 1]); its process ids, ids and devices are moved by k times the
    strides; `headers`, `warnings` and `partial` are each file's own."""

    model: TraceModel
    first_rows: np.ndarray
    pid_stride: int
    id_stride: int
    device_stride: int
    headers: list[dict[str, Any]]
    warnings: list[list[str]]
    partial: list[bool]
    name_codes: list[np.ndarray]  # per rank, its name codes into the batch's names

    def __len__(self) -> int:
        return len(self.headers)

    def rows_of(self, k: int) -> slice:
        return slice(int(self.first_rows[k]), int(self.first_rows[k + 1]))


def one_rank(model: TraceModel) -> np.ndarray:
    """The `first_rows` of a model read alone: one rank, all its rows."""
    return np.array([0, len(model)], dtype=np.int64)


def rank_of(rows: np.ndarray, first_rows: np.ndarray) -> np.ndarray:
    """The rank (0..K-1) of each of `rows`, rank k's rows starting at `first_rows[k]`."""
    if first_rows.size == 2:  # one rank: no search over a big trace's rows
        return np.zeros(np.shape(rows), dtype=np.int64)
    return np.searchsorted(first_rows, rows, side="right") - 1


def bounds_of(rows: np.ndarray, first_rows: np.ndarray) -> list[tuple[int, int]]:
    """Per rank, the [lo, hi) of its entries in `rows` (grouped rank after rank; any order
    within a rank)."""
    if first_rows.size == 2:
        return [(0, int(np.size(rows)))]
    at = np.searchsorted(rank_of(rows, first_rows), np.arange(first_rows.size)).tolist()
    return list(zip(at[:-1], at[1:]))


class NotJoined(ValueError):
    """The ranks cannot be joined so that each keeps its own answers (why: the message)."""


def why_not_joined(models: list[TraceModel]) -> str | None:
    """Why these models cannot be joined so that each rank keeps its own answers (None:
    they can)."""
    return _Rows(models).refusal()


def join_ranks(models: list[TraceModel]) -> RankBatch:
    """The models as one batch (NotJoined where `why_not_joined` says why not)."""
    rows = _Rows(models)
    why = rows.refusal()
    if why is not None:
        raise NotJoined(why)
    moves = _Moves(
        _stride(max((_largest_pid(m) for m in models), default=0)),
        _stride(max((_largest(rows.columns[key]) for key in ID_COLUMNS), default=0)),
        1 + _largest(rows.columns["device"]),
    )
    tables = {
        "name": _merged([m.names for m in models]),
        "cat": _merged([m.categories for m in models]),
        "tid": _merged([m.tids for m in models]),
    }
    events, sparse = _event_columns(models, rows, moves, tables)
    model = TraceModel(
        events=events,
        memory=_memory_rows(models, rows.first, moves),
        names=tables["name"][0],
        categories=tables["cat"][0],
        pids=[moves.pid(p, k) for k, m in enumerate(models) for p in m.pids],
        tids=tables["tid"][0],
        args_blob=b"".join(bytes(m.args_blob[: _args_bytes(m)]) for m in models),
        sparse=sparse,
    )
    _keyed_by_process(model, models, moves)
    return RankBatch(
        model,
        rows.first,
        moves.pid_stride,
        moves.id_stride,
        moves.device_stride,
        [m.header for m in models],
        [list(m.warnings) for m in models],
        [m.partial for m in models],
        tables["name"][1],
    )


class _Rows:
    """The ranks' rows side by side, before anything is moved: each event column as one
    array of its declared type (a column a rank keeps sparse made dense), and each row's
    rank. A column is joined in a few calls whatever K is (K ranks of ~200 rows: the
    calls, not the rows, are the cost)."""

    def __init__(self, models: list[TraceModel]) -> None:
        sizes = [len(m) for m in models]
        self.first = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.rank = np.repeat(np.arange(len(models), dtype=np.int64), sizes)
        self.columns = {
            key: _concat([m.full_column(key) for m in models], declared)
            for key, declared in EVENT_COLUMNS.items()
        }

    def refusal(self) -> str | None:
        """Why the rows cannot be kept apart (None: they can)."""
        for key in ID_COLUMNS:
            zero = np.flatnonzero(self.columns[key] == 0)
            if zero.size:
                rank = int(self.rank[zero[0]])
                return f"model {rank} has {key} 0, which some stages read as none, others as an id"
        gpu = kind_mask(self.columns["kind"], GPU_ACTIVITY_KINDS)
        unnamed = np.flatnonzero(gpu & (self.columns["device"] < 0))
        if unnamed.size:
            rank = int(self.rank[unnamed[0]])
            return f"model {rank} has GPU work whose device is named only by its process id"
        return None

    def codes(self, key: str, merged: tuple[list[Any], list[np.ndarray]]) -> np.ndarray:
        """Column `key`'s codes into its merged table (`_merged`: the table, and each
        rank's codes into it)."""
        own = merged[1]
        first = np.cumsum([0] + [len(codes) for codes in own[:-1]])
        return np.concatenate(own)[self.columns[key] + first[self.rank]]

    def offsets(self, key: str, by: list[int]) -> np.ndarray:
        """Column `key` with rank k's values moved by `by[k]`."""
        return self.columns[key] + np.asarray(by, dtype=np.int64)[self.rank]

    def moved(self, key: str, stride: int) -> np.ndarray:
        """Column `key` with rank k's values moved by k strides where they hold one."""
        values = self.columns[key]
        return np.where(values >= 0, values + self.rank * stride, values)


class _Moves(msgspec.Struct, frozen=True):
    pid_stride: int
    id_stride: int
    device_stride: int

    def pid(self, pid: Any, k: int) -> Any:
        """Rank k's process id `pid` moved: a number (or its text) by k strides, away
        from zero; a text (a profiler's own spans, "Traces") marked with the rank."""
        if k == 0:
            return pid
        number = _pid_number(pid)
        if number is None:
            return f"{pid}#{k}"
        moved = number + k * self.pid_stride if number >= 0 else number - k * self.pid_stride
        return str(moved) if isinstance(pid, str) else moved


def _event_columns(
    models: list[TraceModel],
    rows: _Rows,
    moves: _Moves,
    tables: dict[str, tuple[list[Any], list[np.ndarray]]],
) -> tuple[dict[str, np.ndarray], dict[str, SparseColumn]]:
    """The batch's event columns, and those kept sparse: name, category and thread codes
    into the merged tables, process codes into the tables side by side, ids and devices
    moved, args' ends counted in the joined args."""
    columns = {
        **{key: rows.codes(key, merged) for key, merged in tables.items()},
        "pid": rows.offsets("pid", np.cumsum([0] + [len(m.pids) for m in models[:-1]]).tolist()),
        "args_end": rows.offsets(
            "args_end", np.cumsum([0] + [_args_bytes(m) for m in models[:-1]]).tolist()
        ),
        "device": rows.moved("device", moves.device_stride),
        **{key: rows.moved(key, moves.id_stride) for key in ID_COLUMNS},
    }
    events: dict[str, np.ndarray] = {}
    sparse: dict[str, SparseColumn] = {}
    size = int(rows.first[-1])
    for key, declared in EVENT_COLUMNS.items():
        column = _narrowed(key, columns.get(key, rows.columns[key]).astype(declared))
        fill = SPARSE_COLUMNS.get(key)
        if fill is None:
            events[key] = column
            continue
        at = np.flatnonzero(has_value(column, fill))
        held = at.size * (np.dtype(row_type(size)).itemsize + column.dtype.itemsize)
        if dense_is_smaller(held, size, column.dtype.itemsize):  # the load's rule
            events[key] = column
        else:
            sparse[key] = SparseColumn(at.astype(row_type(size)), column[at], fill, size)
    return events, sparse


def _pid_number(pid: Any) -> int | None:
    """A process id as a number (an int, or its text), else None."""
    if isinstance(pid, int) and not isinstance(pid, bool):
        return pid
    if isinstance(pid, str) and pid.lstrip("-").isdigit():
        return int(pid)
    return None


def _largest_pid(model: TraceModel) -> int:
    numbers = [abs(n) for n in map(_pid_number, model.pids) if n is not None]
    return max(numbers, default=0)


def _stride(largest: int) -> int:
    """The least power of ten above `largest`: moved values read as rank and value."""
    stride = 10
    while stride <= largest:
        stride *= 10
    return stride


def _largest(column: np.ndarray) -> int:
    return int(column.max()) if column.size else 0


def _merged(tables: list[list[Any]]) -> tuple[list[Any], list[np.ndarray]]:
    """One table of the values of `tables` (names, categories, thread ids), in order of
    first use, and each table's codes into it."""
    index: dict[Any, int] = {}
    codes: list[np.ndarray] = []
    for i, table in enumerate(tables):
        if i and table == tables[i - 1]:  # ranks of one job often intern alike: one compare
            codes.append(codes[-1])
            continue
        codes.append(np.array([index.setdefault(t, len(index)) for t in table], dtype=np.int64))
    return list(index), codes


def _args_bytes(model: TraceModel) -> int:
    ends = model.events["args_end"]
    return int(ends[-1]) if len(ends) else 0


def _concat(parts: list[np.ndarray], dtype: str) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype)


def _narrowed(key: str, column: np.ndarray) -> np.ndarray:
    """The column in its narrow type where every value fits it, as a load keeps it."""
    narrow = NARROW_COLUMNS.get(key)
    if narrow is None:
        return column
    if column.size == 0 or fits_integer_type(column, np.dtype(narrow)):
        return column.astype(narrow)
    return column


def _memory_rows(
    models: list[TraceModel], first_rows: np.ndarray, moves: _Moves
) -> dict[str, np.ndarray]:
    """The memory rows of every rank, pointing at the batch's rows, devices moved."""
    out: dict[str, np.ndarray] = {}
    for key in models[0].memory if models else ():
        parts = [m.memory[key] for m in models]
        if key == "row":
            parts = [p.astype(np.int64) + first_rows[k] for k, p in enumerate(parts)]
        elif key == "device_id":
            parts = [
                _moved(p.astype(np.int64), k * moves.device_stride) for k, p in enumerate(parts)
            ]
        out[key] = _concat(parts, str(models[0].memory[key].dtype))
    return out


def _moved(values: np.ndarray, by: int) -> np.ndarray:
    """`values` moved by `by` where they hold one (>= 0; -1 is none)."""
    return np.where(values >= 0, values + by, values) if by else values


def _keyed_by_process(batch: TraceModel, models: list[TraceModel], moves: _Moves) -> None:
    """The ranks' process and thread names, labels and sort indices, keyed by the moved
    process ids."""
    for k, model in enumerate(models):
        batch.process_names.update(_moved_keys(model.process_names, k, moves))
        batch.process_labels.update(_moved_keys(model.process_labels, k, moves))
        batch.process_sort.update(_moved_keys(model.process_sort, k, moves))
        batch.thread_names.update(_moved_keys(model.thread_names, k, moves))
        batch.thread_sort.update(_moved_keys(model.thread_sort, k, moves))


V = TypeVar("V")


def _moved_keys(own: dict[str, V], k: int, moves: _Moves) -> dict[str, V]:
    """A dict keyed by process (`str(pid)`) or thread (`"pid/tid"`) of rank k, its keys
    moved as its pids are."""
    out = {}
    for key, value in own.items():
        pid, slash, tid = key.partition("/")
        out[f"{_moved_key(pid, k, moves)}{slash}{tid}"] = value
    return out


def _moved_key(pid: str, k: int, moves: _Moves) -> str:
    """A process key (`str(pid)`) of rank k, moved as its pid is."""
    return str(moves.pid(pid, k))
