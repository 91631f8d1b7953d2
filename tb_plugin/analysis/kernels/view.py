"""Kernel view: GPU kernels per name (or per name and launching operator).

- A row per (kernel name, device) with `group_by=name`: a kernel that ran on two GPUs of
  one process (nn.DataParallel) gives one row per device. With `group_by=op`, a row per
  (kernel name, device, launching op, grid, block, registers per thread, shared memory):
  the old plugin's "kernel + op" table, whose key also held the launch configuration.
- Launching op: the op that owns the kernel's runtime call in the op tree (`optree.py`:
  `correlation` → runtime call → op), the same op whose device self time the kernel
  counts in; `op_name` is null when no op launched it (or only a ProfilerStep range).
- Mean `blocks per SM` and `est. achieved occupancy %` are weighted by duration over the
  calls that carry the value (null when none does); the old plugin counted a missing
  value as 0. With `group_by=name`, `grid`, `block`, `registers_per_thread` and
  `shared_memory` are those of the group's longest call.
- Launch configuration comes from the kernel's args, or from its launching runtime call
  when the kernel has none (AMD/ROCm traces put grid, block and shared memory there).
- `tensor_cores_used`: what the kernel taxonomy (`taxonomy.py`) says of the group: true,
  false, or null when it cannot tell (never false for "not known"); `work`: communication,
  gemm, attention, conv or other. `tensor_core_pct` is the matrix-core time over the time
  of kernels whose use is known; the unknown time is given beside it. On AMD devices the
  matrix units are MFMA cores: `matrix_core_name` says what to call them.
- `launch_delay_mean_us`, `launch_delay_p90_us`: from the start of the launch call to the
  kernel's start (`gpu_idle/delay.py`: exact ns, p90 by docs/metrics.md#percentiles; only
  the first kernel of a graph replay has one); null when no call of the group has a linked
  launch.
- Graph replays (`graph_replay.py`): a replayed kernel's launching op is the op that
  captured it when the capture was profiled, else its graph-launch call; with
  `group_by=op` a row says `replayed` (its kernels ran in a graph replay), and
  `graph_replay` sums it up (null when the trace replays no graph) and says, per graph
  left unmatched, why (`unmatched`).
- Occupancy 0 means the trace does not know it (graph replays, some CUPTI versions): such
  calls are left out of the mean like calls without the value.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.errors import ViewParamError
from ...model.trace_model import TraceModel
from ..core.common import distinct, gpu_device_ids, launches_of, unique_rows
from ..core.devices import device_identity, matrix_core_name, trace_vendor
from ..core.graph_annotations import Annotations, annotation_columns
from ..core.graph_replay import GraphReplay, graph_replay, has_graph_launches
from ..core.kernel_classes import kernel_classes, matrix_share
from ..core.launch_delay import grouped_delay, launch_delays_of
from ..core.replay_ops import replay_summary
from ..core.roofline.metrics import fields, grouped, roofs
from ..core.source_frames import SourceFrame, grouped_capture_frames
from ..core.taxonomy import MATRIX_UNKNOWN, MATRIX_YES, WORKS
from ..core.trusted_rows import untrusted_mask
from .compiled import CompiledKernel, compiled_columns
from .cupti_fields import CuptiFields, cupti_fields
from .launches import Config, kernel_costs, launch_configs, launching_ops, tree_positions
from .types import AnnotationsNote, KernelRow, KernelsParams, KernelsView

GROUP_BY = ("name", "op")


def _r(x: float) -> float:
    return round(float(x), 3)


def _us_of_ns(ns: float) -> float | None:
    return None if np.isnan(ns) else round(float(ns) / 1000.0, 3)


def kernels(
    model: TraceModel, group_by: str = "name", device: int | None = None, stream: int | None = None
) -> KernelsView:
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {', '.join(GROUP_BY)}")
    ev = model.events
    classes = kernel_classes(model)
    rows, matrix, work = classes.rows, classes.matrix, classes.work
    devs = gpu_device_ids(model, rows)
    streams = model.column_at("stream", rows)
    all_devices = sorted({int(d) for d in distinct(devs) if d >= 0})
    all_streams = sorted({int(s) for s in distinct(streams) if s >= 0})
    keep = np.ones(rows.size, dtype=bool)
    if device is not None:
        keep &= devs == device
    if stream is not None:
        keep &= streams == stream
    rows, devs, streams = rows[keep], devs[keep], streams[keep]
    matrix, work = matrix[keep], work[keep]
    dur = ev["dur"][rows].astype(np.float64)
    replay = graph_replay(model) if has_graph_launches(model) else None
    groups = _group(model, rows, devs, streams, matrix, work, group_by, replay)
    out_rows = [_kernel_row(model, groups, i, group_by) for i in range(len(groups.total))]
    # Longest first; equal totals by what the rows are, not by the file's event order.
    out_rows.sort(key=_row_order)
    tc_time, no_time, unknown_time, share = matrix_share(dur, matrix)
    return {
        "group_by": group_by,
        "device": device,
        "stream": stream,
        "rows": out_rows,
        "kernel_count": int(rows.size),
        "total_us": _r(float(dur.sum())),
        "tensor_core_time_us": _r(tc_time),
        "non_tensor_core_time_us": _r(no_time),
        "tensor_core_pct": round(100.0 * share, 2) if share is not None else None,
        "tensor_core_unknown_time_us": _r(unknown_time),
        "matrix_core_name": matrix_core_name(trace_vendor(model)),
        "devices": all_devices,
        "device_labels": [device_identity(model, d).short_label for d in all_devices],
        "streams": all_streams,
        "graph_replay": replay_summary(model, replay, rows),
        "left_out_events": _left_out_kernels(model),
        "queued_times": groups.cupti.queued_times,
        "graph_annotations": _annotations_note(groups.annotations[1]),
        "roofs": roofs(model),
    }


def _annotations_note(found: Annotations | None) -> AnnotationsNote | None:
    """Where the kernels' CUDA-graph annotations came from (None: no graph replays)."""
    return None if found is None else {"source": found.source, "unread": found.unread}


def _left_out_kernels(model: TraceModel) -> int:
    """Kernel events the rows above leave out (trace health: copies, ts 0, off-clock)."""
    every = model.complete_rows(Kind.KERNEL)
    return int(untrusted_mask(model)[every].sum())


class _Groups(msgspec.Struct):
    """Kernel calls grouped by (name, device) or (name, device, op, launch configuration);
    per group (the arrays) its key, call count, times and what its calls agree on."""

    key: np.ndarray  # one row per group: name code, device (, op code, config index)
    calls: np.ndarray
    total: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mean_bps: np.ndarray
    mean_occ: np.ndarray
    matrix: np.ndarray  # unknown if any call is unknown, else no if any is no, else yes
    work: np.ndarray
    eligible: np.ndarray  # any call's launching op is tensor-core eligible
    stream_lo: np.ndarray
    stream_hi: np.ndarray
    configs: list[Config]  # the representative launch configuration per group
    op_names: list[str]  # op name codes past the model's names: capture-time ops
    delay: tuple[np.ndarray, np.ndarray]  # launch delay mean and p90, ns (NaN: none known)
    roof: dict[str, np.ndarray]  # the roofline sums (roofline/metrics.grouped)
    compiled: list[CompiledKernel | None]  # Inductor kernels: fused ops, source frames
    captured: list[list[SourceFrame] | None]  # graph-replayed kernels: the capture's frames
    cupti: CuptiFields  # priority, occupancy limit, queue wait
    # CUDA-graph kernel annotations: per group its labels, and where they came from
    annotations: tuple[list[list[str] | None], Annotations | None]


def _group(
    model: TraceModel,
    rows: np.ndarray,
    devs: np.ndarray,
    streams: np.ndarray,
    matrix: np.ndarray,
    work: np.ndarray,
    group_by: str,
    replay: GraphReplay | None,
) -> _Groups:
    ev = model.events
    at_gpu = tree_positions(model, rows)
    op_code, op_eligible, replayed, extra_ops = launching_ops(model, rows, replay, at_gpu)
    names = ev["name"][rows].astype(np.int64)
    dur = ev["dur"][rows].astype(np.float64)
    configs: list[Config] = []
    if group_by == "op":  # the launch configuration is part of the key
        cfg, configs = launch_configs(model, rows, launches_of(model, rows))
        uniq, group = _keyed(np.stack([names, devs, op_code, cfg, replayed], axis=1))
    else:
        uniq, group = _keyed(np.stack([names, devs], axis=1))
    n = uniq.shape[0]
    lo, hi = _extent(group, dur, n, np.inf)
    occ = model.column_at("occupancy", rows).astype(np.float64)
    occ[occ <= 0] = np.nan  # 0: the trace does not know
    group_matrix = np.full(n, MATRIX_YES, dtype=np.int64)
    np.minimum.at(group_matrix, group, matrix.astype(np.int64))
    group_work = np.zeros(n, dtype=np.int64)
    np.maximum.at(group_work, group, work.astype(np.int64))
    stream_lo, stream_hi = _extent(group, streams, n, np.iinfo(np.int64).max)
    longest = _longest_earliest(group, dur, ev["ts"][rows]) if n else np.zeros(0, np.int64)
    if group_by == "name" and n:
        rep_cfg = _longest_call_configs(model, rows[longest])
    else:
        rep_cfg = [configs[int(uniq[i, 3])] for i in range(n)]
    return _Groups(
        key=uniq,
        calls=np.bincount(group, minlength=n),
        total=np.bincount(group, weights=dur, minlength=n),
        lo=lo,
        hi=hi,
        mean_bps=_weighted(
            model.column_at("blocks_per_sm", rows).astype(np.float64), group, dur, n
        ),
        mean_occ=_weighted(occ, group, dur, n),
        matrix=group_matrix,
        work=group_work,
        eligible=np.bincount(group, weights=op_eligible, minlength=n) > 0,
        stream_lo=stream_lo,
        stream_hi=stream_hi,
        configs=rep_cfg,
        op_names=extra_ops,
        delay=grouped_delay(launch_delays_of(model, rows), group, n),
        roof=grouped(kernel_costs(model, rows, at_gpu), dur, group, n),
        compiled=compiled_columns(model, rows, group, n),
        captured=grouped_capture_frames(model, rows, group, n, replay),
        cupti=cupti_fields(model, rows, group, longest, n),
        annotations=annotation_columns(model, rows, group, dur, n, replay is not None),
    )


def _keyed(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of `key` and each row's index among them."""
    if key.shape[0]:
        return unique_rows(key)
    return np.empty((0, key.shape[1]), np.int64), np.empty(0, np.int64)


def _extent(group: np.ndarray, values: np.ndarray, n: int, big: Any) -> tuple[Any, Any]:
    """Per group, the least and the greatest of its values (`big`, -1 or -big: none)."""
    lo = np.full(n, big)
    hi = np.full(n, -big if isinstance(big, float) else -1)
    # In the extremes' own type: ufunc.at casting each value (streams are int32) took 30x.
    values = values.astype(lo.dtype, copy=False)
    np.minimum.at(lo, group, values)
    np.maximum.at(hi, group, values)
    return lo, hi


def _weighted(values: np.ndarray, group: np.ndarray, dur: np.ndarray, n: int) -> np.ndarray:
    """Per group, the duration-weighted mean of the known values (a plain mean when all
    the calls last zero); NaN when none is known."""
    has = np.isfinite(values)
    num = np.bincount(group[has], weights=values[has] * dur[has], minlength=n)
    den = np.bincount(group[has], weights=dur[has], minlength=n)
    cnt = np.bincount(group[has], minlength=n)
    out = np.full(n, np.nan)
    pos = den > 0
    out[pos] = num[pos] / den[pos]
    flat = (den == 0) & (cnt > 0)
    if flat.any():
        s = np.bincount(group[has], weights=values[has], minlength=n)
        out[flat] = s[flat] / cnt[flat]
    return out


def _row_order(row: KernelRow) -> tuple[float, str, int, str, str, str]:
    return (
        -row["total_us"],
        row["name"],
        row["device"] if row["device"] is not None else -1,
        row.get("op_name") or "",
        str(row["grid"]),
        str(row["block"]),
    )


def _longest_call_configs(model: TraceModel, longest: np.ndarray) -> list[Config]:
    """The launch configuration of each group's longest call (name groups mix them; of
    equally long calls the earliest, whatever order the file lists them in: `longest`,
    their rows)."""
    codes, distinct = launch_configs(model, longest, launches_of(model, longest))
    return [distinct[c] for c in codes.tolist()]


def _longest_earliest(group: np.ndarray, dur: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Per group present (ascending), the position of its longest call, of equally long
    ones the earliest, of those the last listed: the last of each group in the order
    `np.lexsort((-ts, dur, group))` gives, read off with three grouped reductions, not
    that sort (the sort where a time is NaN, which it orders last)."""
    if np.isnan(dur).any() or np.isnan(ts).any():
        order = np.lexsort((-ts, dur, group))
        return order[np.r_[np.flatnonzero(np.diff(group[order])), order.size - 1]]
    n = int(group.max()) + 1 if group.size else 0
    longest = np.full(n, -np.inf)
    np.maximum.at(longest, group, dur)
    at = np.flatnonzero(dur == longest[group])
    earliest = np.full(n, np.inf)
    np.minimum.at(earliest, group[at], ts[at])
    at = at[ts[at] == earliest[group[at]]]
    last = np.full(n, -1, dtype=np.int64)
    np.maximum.at(last, group[at], at)
    return last[last >= 0]


def _kernel_row(model: TraceModel, g: _Groups, i: int, group_by: str) -> KernelRow:
    dev = int(g.key[i, 1])
    grid, block, regs, smem = g.configs[i]
    one_stream = g.stream_lo[i] == g.stream_hi[i] and g.stream_hi[i] >= 0
    row: dict[str, Any] = {  # keys in wire order: op_name (group_by=op) after stream
        "name": model.names[int(g.key[i, 0])],
        "device": dev if dev >= 0 else None,
        "stream": int(g.stream_lo[i]) if one_stream else None,
    }
    if group_by == "op":
        oc = int(g.key[i, 2])
        base = len(model.names)
        row["op_name"] = (
            (model.names[oc] if oc < base else g.op_names[oc - base]) if oc >= 0 else None
        )
        row["replayed"] = bool(g.key[i, 4])
    bps, occ = g.mean_bps[i], g.mean_occ[i]
    row.update(
        {
            "calls": int(g.calls[i]),
            "total_us": _r(g.total[i]),
            "mean_us": _r(g.total[i] / max(g.calls[i], 1)),
            "min_us": _r(g.lo[i]),
            "max_us": _r(g.hi[i]),
            "blocks_per_sm": None if np.isnan(bps) else round(float(bps), 4),
            "occupancy_pct": None if np.isnan(occ) else round(float(occ), 3),
            "registers_per_thread": regs,
            "shared_memory": smem,
            "grid": list(grid) if grid else None,
            "block": list(block) if block else None,
            "tensor_cores_used": None
            if g.matrix[i] == MATRIX_UNKNOWN
            else bool(g.matrix[i] == MATRIX_YES),
            "op_tensor_core_eligible": bool(g.eligible[i]),
            "work": WORKS[int(g.work[i])],
            "launch_delay_mean_us": _us_of_ns(g.delay[0][i]),
            "launch_delay_p90_us": _us_of_ns(g.delay[1][i]),
            "priority": g.cupti.priority[i],
            "occupancy_limited_by": g.cupti.limited_by[i],
            "queue_mean_us": _us_of_ns(g.cupti.queue_mean_ns[i]),
            "graph_annotations": g.annotations[0][i],
            **fields(g.roof, i),
        }
    )
    if g.compiled[i] is not None:
        row.update(g.compiled[i])  # type: ignore[arg-type]
    if g.captured[i] is not None:
        row["captured_source"] = g.captured[i]
    return cast(KernelRow, row)


def kernels_view(model: TraceModel, params: KernelsParams) -> KernelsView:

    group_by = params.get("group_by") or "name"
    if group_by not in GROUP_BY:
        raise ViewParamError(f"group_by must be one of {', '.join(GROUP_BY)}, not {group_by!r}")
    return kernels(model, group_by, params.get("device"), params.get("stream"))
