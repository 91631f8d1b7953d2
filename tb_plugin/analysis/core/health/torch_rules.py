"""The six rules of PyTorch's own trace validator (`torch/profiler/_trace_validator.py`,
"derived from production issues"), each a health check counting what the validator
counts, the same way (its categories and names exactly, no tolerance), so that a trace's
checks summed per rule equal the validator's violations per rule:

- `check_gpu_kernel_causality`: per `External id`, the earliest `kernel` starts before the
  earliest `cuda_runtime` `cudaLaunchKernel` (the id is the op's: an op's first kernel
  against its first launch). `kernel_before_launch` is the finer check (each GPU
  activity against its own launch call, by correlation, with a 1 µs tolerance);
- `check_stream_wait_corr_id_populated`: a "Stream Wait Event" / "Event Sync" with no
  `wait_on_cuda_event_record_corr_id`, or one below 0;
- `check_stream_sync_overlap`: a "Stream Sync" starting while a `kernel` of its device
  and stream runs (each such kernel counts);
- `check_stream_wait_corr_id_in_past`: a "Stream Wait Event" whose record id names no
  `cudaEventRecord` (by its External id or correlation), or one that starts after it;
- `check_nccl_metadata`: a `record_param_comms` without `Collective name`, `dtype`,
  `In msg nelems`, `Out msg nelems` or `Group size`;
- `check_backward_seq_id_uniqueness`: an autograd `Sequence number` shared by
  `autograd::engine::evaluate_function:` ranges of two different backward ops (each
  such number counts once).

Each returns a `Finding` whose rows are the offending events (for examples) and whose
count is the validator's."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from ....model.categories import Phase
from ....model.trace_model import TraceModel
from .checks import Finding

_NONE = np.empty(0, dtype=np.int64)
RECORD_NAMES = (
    "cudaEventRecord",
    "cudaEventRecord_ptsz",
    "cudaEventRecordWithFlags",
    "cudaEventRecordWithFlags_ptsz",
)
NCCL_FIELDS = ("Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size")
EVALUATE = "autograd::engine::evaluate_function:"


def _complete(model: TraceModel) -> np.ndarray:
    return model.events["ph"] == Phase.COMPLETE


def _in_category(model: TraceModel, *categories: str) -> np.ndarray:
    """Per row, whether its category is one of these, exactly as written."""
    codes = [i for i, c in enumerate(model.categories) if c in categories]
    return np.isin(model.events["cat"], codes) if codes else np.zeros(len(model), bool)


def _named(model: TraceModel, *names: str) -> np.ndarray:
    codes = [c for c in (model.name_code(n) for n in names) if c >= 0]
    return np.isin(model.events["name"], codes) if codes else np.zeros(len(model), bool)


def _earliest_by(key: np.ndarray, ts: np.ndarray, rows: np.ndarray) -> dict[int, tuple[float, int]]:
    """Per key, the earliest (ts, row); the first in file order of equal ones."""
    out: dict[int, tuple[float, int]] = {}
    order = np.lexsort((rows, ts))
    for k, t, r in zip(key[order].tolist(), ts[order].tolist(), rows[order].tolist()):
        if k not in out:
            out[k] = (t, r)
    return out


def gpu_kernel_causality(model: TraceModel) -> Finding:
    ev = model.events
    base = _complete(model)
    launches = np.flatnonzero(
        base & _in_category(model, "cuda_runtime") & _named(model, "cudaLaunchKernel")
    )
    kernels = np.flatnonzero(base & _in_category(model, "kernel"))
    ext = model.full_column("external_id")
    launches, kernels = launches[ext[launches] >= 0], kernels[ext[kernels] >= 0]
    if kernels.size == 0 or launches.size == 0:
        return Finding(_NONE)
    first_launch = _earliest_by(ext[launches], ev["ts"][launches], launches)
    first_kernel = _earliest_by(ext[kernels], ev["ts"][kernels], kernels)
    late = [
        row
        for key, (t, row) in first_kernel.items()
        if key in first_launch and t < first_launch[key][0]
    ]
    return Finding(np.sort(np.array(late, dtype=np.int64)))


class _Sync(msgspec.Struct, gc=False):
    kind: Any = msgspec.field(default=None, name="cuda_sync_kind")
    record: Any = msgspec.field(default=None, name="wait_on_cuda_event_record_corr_id")
    device: Any = None
    stream: Any = None


def _syncs(model: TraceModel) -> tuple[np.ndarray, list[_Sync]]:
    """Complete events whose args carry a `cuda_sync_kind` (cuda_sync events)."""
    rows = np.flatnonzero(_complete(model) & _in_category(model, "cuda_sync"))
    return rows, model.args_of(rows, _Sync)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def stream_wait_corr_id_populated(model: TraceModel) -> Finding:
    rows, args = _syncs(model)
    kinds = ("Stream Wait Event", "Event Sync")
    bad = [r for r, a in zip(rows.tolist(), args) if a.kind in kinds and _unset(a.record)]
    return Finding(np.array(bad, dtype=np.int64))


def _unset(record: Any) -> bool:
    """Absent, or below 0: the validator's "invalid" record id."""
    if record is None:
        return True
    n = _int(record)
    return n is not None and n < 0


def stream_sync_overlap(model: TraceModel) -> Finding:
    rows, args = _syncs(model)
    syncs = [(r, a) for r, a in zip(rows.tolist(), args) if a.kind == "Stream Sync"]
    if not syncs:
        return Finding(_NONE)
    ev = model.events
    kernels = np.flatnonzero(_complete(model) & _in_category(model, "kernel"))
    device, stream = _raw_ids(model, kernels)
    start = ev["ts"][kernels]
    end = start + ev["dur"][kernels]
    flagged, count = [], 0
    for row, a in syncs:
        t = float(ev["ts"][row])
        on = (device == _key(a.device)) & (stream == _key(a.stream))
        n = int((on & (start < t) & (t < end)).sum())
        if n:
            flagged.append(row)
            count += n
    return Finding(np.array(flagged, dtype=np.int64), count=count)


class _Ids(msgspec.Struct, gc=False):
    device: Any = None
    stream: Any = None


def _key(value: Any) -> str:
    return repr(value)


def _raw_ids(model: TraceModel, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's `device` and `stream` args as written (repr: None where absent)."""
    args = model.args_of(rows, _Ids)
    device = np.array([_key(a.device) for a in args], dtype=object)
    stream = np.array([_key(a.stream) for a in args], dtype=object)
    return device, stream


class _Corr(msgspec.Struct, gc=False):
    external: Any = msgspec.field(default=None, name="External id")
    correlation: Any = None


def stream_wait_corr_id_in_past(model: TraceModel) -> Finding:
    rows, args = _syncs(model)
    waits: list[tuple[int, int]] = []
    for r, a in zip(rows.tolist(), args):
        ref = _int(a.record) if a.kind == "Stream Wait Event" else None
        if ref is not None and ref >= 0:
            waits.append((r, ref))
    if not waits:
        return Finding(_NONE)
    ev = model.events
    records = np.flatnonzero(
        _complete(model)
        & _in_category(model, "cuda_runtime", "cuda_driver")
        & _named(model, *RECORD_NAMES)
    )
    recorded_at: dict[int, float] = {}
    for row, c in zip(records.tolist(), model.args_of(records, _Corr)):
        t = float(ev["ts"][row])
        for cid in (_int(c.external), _int(c.correlation)):
            if cid is not None and (cid not in recorded_at or t < recorded_at[cid]):
                recorded_at[cid] = t
    bad = [r for r, ref in waits if recorded_at.get(ref, np.inf) > float(ev["ts"][r])]
    return Finding(np.array(bad, dtype=np.int64))


class _Keys(msgspec.Struct, gc=False):
    """Which of the required fields the args hold (each as written, any value)."""

    name: Any = msgspec.field(default=msgspec.UNSET, name="Collective name")
    dtype: Any = msgspec.UNSET
    in_n: Any = msgspec.field(default=msgspec.UNSET, name="In msg nelems")
    out_n: Any = msgspec.field(default=msgspec.UNSET, name="Out msg nelems")
    group: Any = msgspec.field(default=msgspec.UNSET, name="Group size")


def nccl_metadata(model: TraceModel) -> Finding:
    rows = np.flatnonzero(_complete(model) & _named(model, "record_param_comms"))
    if rows.size == 0:
        return Finding(_NONE)
    bad = [
        r
        for r, a in zip(rows.tolist(), model.args_of(rows, _Keys))
        if any(getattr(a, f) is msgspec.UNSET for f in _Keys.__struct_fields__)
    ]
    return Finding(np.array(bad, dtype=np.int64))


class _Seq(msgspec.Struct, gc=False):
    seq: Any = msgspec.field(default=None, name="Sequence number")
    seq_num: Any = None


def backward_seq_id_uniqueness(model: TraceModel) -> Finding:
    codes = [i for i, n in enumerate(model.names) if EVALUATE in n]
    if not codes:
        return Finding(_NONE)
    rows = np.flatnonzero(_complete(model) & np.isin(model.events["name"], codes))
    ops: dict[int, dict[str, int]] = {}
    for row, a in zip(rows.tolist(), model.args_of(rows, _Seq)):
        # As the validator reads it: "Sequence number", else (absent, null or 0) seq_num.
        seq = _int(a.seq or a.seq_num)
        if seq is None:
            continue
        name = model.names[int(model.events["name"][row])]
        op = name.split(":", 1)[-1].strip()
        ops.setdefault(seq, {}).setdefault(op, row)
    shared = [seen for seen in ops.values() if len(seen) > 1]
    flagged = sorted(row for seen in shared for row in seen.values())
    return Finding(np.array(flagged, dtype=np.int64), count=len(shared))
