"""Operator view: host and device time per operator name (or name + input shape), and the
call stacks that led to an operator.

Rows are the host ranges of the op tree (`optree.py` has the nesting, self/total and
attribution rules): aten ops and `record_function` / `user_annotation` ranges, not
ProfilerStep#N, not a same-named child folded into its parent. Unlike the old plugin we
keep `enumerate(DataLoader)#...`, `Optimizer.*` and `DataParallel.forward` ranges as rows
(it hid them); they do not change any other row. Graph replays: a replayed kernel matched
to its capture counts in the device time of the op that captured it (`replay_ops.py`),
and in its row's `replayed_us`; an op called only in the capture has a row of 0 calls, no
host time and null roofline fields (its work is in the capture's trace).

Call stacks come from the `Call stack` arg (2021-22 traces, `file(line): func;...`,
innermost frame first) or, in 2.x traces recorded with `with_stack=True`, from the
`python_function` events enclosing the op on its thread (the old plugin ignored those).
Frames are listed innermost first (the frame that called the op comes first).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.errors import ViewParamError
from ...model.trace_model import TraceModel
from ..core.common import complete_rows, unique_inverse
from ..core.optree import OpTree, op_tree
from ..core.python_stacks import (
    Frame,
    StackArgs,
    has_call_stack,
    parse_frame,
    python_groups,
    python_stacks,
)
from ..core.replay_ops import ReplayedOps, replayed_ops
from ..core.roofline.metrics import empty_fields, fields, grouped, roofs
from ..core.roofline.work import node_costs, take
from .types import (
    CallStacksParams,
    CallStacksView,
    OperatorRow,
    OperatorsParams,
    OperatorsView,
)

GROUP_BY = ("name", "shape")
NO_KERNELS_CPU = "this trace has no GPU kernels (CPU-only profile)"
NO_KERNELS_GPU = (
    "this trace has no GPU kernel events (the profiler did not record GPU activity, "
    "e.g. CUPTI range-profiler mode)"
)
_DIMS_KEY = re.compile(rb'"Input [Dd]ims" *: *(\[[\[\]0-9, \t\r\n-]*\])')


# --- shared pieces --------------------------------------------------------------------


def _r(x: float) -> float:
    return round(float(x), 3)


def _stats(tree: OpTree, nodes: np.ndarray, group: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Per-group sums over `nodes` (node indices) grouped by `group` (0..n-1)."""

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=values[nodes], minlength=n)

    return {
        "calls": np.bincount(group, minlength=n),
        "host_self": total(tree.host_self),
        "host_total": total(tree.host_total),
        "device_self": total(tree.device_self),
        "device_total": total(tree.device_total),
        "tc_self": total(tree.tc_self),
        "tc_total": total(tree.tc_total),
        "tc_eligible": np.bincount(group, weights=tree.tc_eligible[nodes], minlength=n) > 0,
    }


def _row_fields(s: dict[str, np.ndarray], i: int) -> dict[str, Any]:
    calls = int(s["calls"][i])
    div = max(calls, 1)
    return {
        "calls": calls,
        "host_self_us": _r(s["host_self"][i]),
        "host_total_us": _r(s["host_total"][i]),
        "device_self_us": _r(s["device_self"][i]),
        "device_total_us": _r(s["device_total"][i]),
        "host_self_avg_us": _r(s["host_self"][i] / div),
        "host_total_avg_us": _r(s["host_total"][i] / div),
        "device_self_avg_us": _r(s["device_self"][i] / div),
        "device_total_avg_us": _r(s["device_total"][i] / div),
        "tensor_core_eligible": bool(s["tc_eligible"][i]),
        "tensor_core_self_us": _r(s["tc_self"][i]),
        "tensor_core_total_us": _r(s["tc_total"][i]),
    }


def kernel_absent_reason(model: TraceModel) -> str | None:
    if complete_rows(model, Kind.KERNEL).size:
        return None
    gpu_hints = (
        model.device_properties()
        or complete_rows(model, Kind.RUNTIME, Kind.DRIVER, Kind.MEMCPY, Kind.MEMSET).size
    )
    return NO_KERNELS_GPU if gpu_hints else NO_KERNELS_CPU


def shape_codes(model: TraceModel, rows: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """A code per row for its input shape (`Input Dims`, legacy `Input dims`), and the
    decoded shape of each code (None when the op has none). Whitespace is ignored."""
    index_rows, index_codes, shapes = _shape_index(model)
    pos = np.searchsorted(index_rows, rows)
    pc = np.minimum(pos, max(index_rows.size - 1, 0))
    found = (pos < index_rows.size) & (index_rows[pc] == rows) if index_rows.size else pos < 0
    codes = np.full(rows.size, len(shapes) - 1, dtype=np.int64)  # last code: no shape
    codes[found] = index_codes[pc[found]]
    return codes, shapes


def _shape_index(model: TraceModel) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Rows with an input shape, their shape codes, and the shapes (last: None). One regex
    pass over the raw args (the dims are lists of ints only), memoised on the model."""
    return model.derived("_shape_index", _build_shape_index)


def _build_shape_index(model: TraceModel) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    by_raw: dict[bytes, int] = {}
    positions: list[int] = []
    raw_codes: list[int] = []
    for offset, m in model.scan_args(_DIMS_KEY):
        positions.append(offset)
        raw_codes.append(by_raw.setdefault(m.group(1), len(by_raw)))
    canon: dict[str, int] = {}
    shapes: list[Any] = []
    remap = np.empty(len(by_raw), dtype=np.int64)
    for raw, code in by_raw.items():
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            value = None
        key = json.dumps(value, separators=(",", ":"))
        if key not in canon:
            canon[key] = len(shapes)
            shapes.append(value)
        remap[code] = canon[key]
    shapes.append(None)
    rows = np.searchsorted(model.events["args_end"], np.array(positions, dtype=np.int64), "right")
    codes = remap[np.array(raw_codes, dtype=np.int64)] if raw_codes else np.empty(0, np.int64)
    rows, first = np.unique(rows, return_index=True)
    return rows, codes[first], shapes


def parse_shape_param(text: str) -> Any:
    """The `input_shape` request parameter: the JSON of a row's `input_shape`."""
    return json.loads(text)


def callstacks(
    model: TraceModel, name: str, input_shape: Any = None, by_shape: bool = False
) -> CallStacksView:
    """The distinct call stacks of the calls of one operator (of one input shape when
    `by_shape`), each with the row statistics of its calls; stacks with the most device
    time, then host time, first. Calls without a recorded stack are one entry with no
    frames."""
    tree = op_tree(model)
    code = model.name_code(name)
    nodes = np.flatnonzero(tree.op_mask & (model.events["name"][tree.rows] == code))
    if by_shape and nodes.size:
        codes, shapes = shape_codes(model, tree.rows[nodes])
        want = json.dumps(input_shape, separators=(",", ":"))
        match = [i for i, s in enumerate(shapes) if json.dumps(s, separators=(",", ":")) == want]
        nodes = nodes[np.isin(codes, match)]
    out: CallStacksView = {
        "name": name,
        "input_shape": input_shape if by_shape else None,
        "source": None,
        "calls": int(nodes.size),
        "stacks": [],
    }
    if nodes.size == 0:
        return out
    frames_of: list[list[Frame]]
    stacks = python_stacks(model, tree)
    if stacks is not None:
        out["source"] = "python_function"
        group, frames_of = python_groups(stacks, nodes)
    else:
        by_text: dict[bytes, int] = {}
        group = np.fromiter(
            (
                by_text.setdefault(bytes(a.stack), len(by_text))
                for a in model.iter_args(tree.rows[nodes], StackArgs)
            ),
            dtype=np.int64,
            count=nodes.size,
        )
        frames_of = []
        for raw in by_text:
            text = msgspec.json.decode(raw) if len(raw) > 2 else ""
            parts = [p for p in str(text or "").split(";") if p.strip()]
            frames_of.append([parse_frame(p) for p in parts])
        if any(frames_of):
            out["source"] = "call_stack_arg"
    s = _stats(tree, nodes, group, len(frames_of))
    order = np.lexsort((-s["host_total"], -s["device_self"]))
    out["stacks"] = [
        {"frames": frames_of[i], **_row_fields(s, i)}  # type: ignore[typeddict-item]
        for i in order.tolist()
        if s["calls"][i] > 0
    ]
    return out


# --- the view -----------------------------------------------------------------------------


def operators(model: TraceModel, group_by: str = "name") -> OperatorsView:
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {', '.join(GROUP_BY)}")
    tree = op_tree(model)
    nodes = np.flatnonzero(tree.op_mask)
    names = model.events["name"][tree.rows[nodes]]
    stack_flags, stack_source = has_call_stack(model, tree, nodes)
    shapes: list[Any] = []
    if group_by == "shape" and nodes.size:
        shape, shapes = shape_codes(model, tree.rows[nodes])
        key = names.astype(np.int64) * np.int64(max(len(shapes), 1)) + shape
    else:
        key = names.astype(np.int64)
    uniq, group = unique_inverse(key)
    n = uniq.size
    s = _stats(tree, nodes, group, n)
    replay = replayed_ops(model, tree, group_by == "shape", _shapes_of)
    if replay is not None:
        s["device_self"] -= np.bincount(group, weights=replay.moved[nodes], minlength=n)
        s["tc_self"] -= np.bincount(group, weights=replay.moved_tc[nodes], minlength=n)
    # An op's work over its device total time (its children's kernels included).
    # Only calls with work add to the roofline sums: the others need not be copied.
    costs = node_costs(model)
    costed = np.isfinite(costs.flops[nodes]) | np.isfinite(costs.bytes[nodes])
    work = nodes[costed]
    roof = grouped(take(costs, work), tree.device_total[work], group[costed], n)
    with_stack = np.bincount(group, weights=stack_flags, minlength=n) > 0
    order = np.lexsort((-s["host_self"], -s["device_self"]))
    rows: list[OperatorRow] = []
    width = max(len(shapes), 1)
    for i in order.tolist():
        k = int(uniq[i])
        row: OperatorRow = {
            "name": model.names[k // width if group_by == "shape" else k],
            **_row_fields(s, i),  # type: ignore[typeddict-item]
            **fields(roof, i),
            "has_call_stack": bool(with_stack[i]),
            "replayed_us": 0.0,
        }
        if group_by == "shape":
            row["input_shape"] = shapes[k % width] if shapes else None
        rows.append(row)
    if replay is not None:
        rows = _with_replays(rows, replay, group_by)
    return {
        "group_by": group_by,
        "rows": rows,
        "op_count": int(nodes.size),
        "host_self_us": _r(s["host_self"].sum()),
        "device_self_us": _r(
            s["device_self"].sum() + (_added_time(replay) if replay is not None else 0.0)
        ),
        "call_stack_source": stack_source,
        "kernel_view_absent_reason": kernel_absent_reason(model),
        "roofs": roofs(model),
    }


def _shapes_of(model: TraceModel, rows: np.ndarray) -> list[Any]:
    codes, shapes = shape_codes(model, rows)
    return [shapes[c] for c in codes.tolist()]


def _added_time(replay: ReplayedOps) -> float:
    return float(sum(entry[0] for entry in replay.added.values()))


def _with_replays(rows: list[OperatorRow], replay: ReplayedOps, group_by: str) -> list[OperatorRow]:
    """The rows with each capturing op's replayed kernel time added (a row of 0 calls
    for an op this trace never calls), sorted again by device then host self time."""
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        shape = json.dumps(row.get("input_shape"), separators=(",", ":"))
        by_key[(row["name"], shape if group_by == "shape" else "")] = row  # type: ignore[assignment]
    out: list[dict[str, Any]] = list(by_key.values())
    zero = {k: np.zeros(1) for k in ("calls", "host_self", "host_total", "tc_self", "tc_total")}
    zero.update(device_self=np.zeros(1), device_total=np.zeros(1), tc_eligible=np.zeros(1, bool))
    for key, (device, tc, shape) in replay.added.items():
        entry = by_key.get(key)
        if entry is None:
            # Called in the capture, not in this trace: no host time, no work known here.
            entry = {"name": key[0], **_row_fields(zero, 0), **empty_fields()}
            entry.update(has_call_stack=False, replayed_us=0.0)
            if group_by == "shape":
                entry["input_shape"] = shape
            out.append(entry)
        div = max(entry["calls"], 1)
        entry["replayed_us"] = _r(entry["replayed_us"] + device)
        for part in ("device_self", "device_total"):
            entry[f"{part}_us"] = _r(entry[f"{part}_us"] + device)
            entry[f"{part}_avg_us"] = _r(entry[f"{part}_us"] / div)
        entry["tensor_core_self_us"] = _r(entry["tensor_core_self_us"] + tc)
        entry["tensor_core_total_us"] = _r(entry["tensor_core_total_us"] + tc)
        entry["tensor_core_eligible"] = entry["tensor_core_eligible"] or tc > 0
        if key in replay.where:
            entry["captured_at"] = replay.where[key]
    out.sort(key=lambda r: (-r["device_self_us"], -r["host_self_us"]))
    return out  # type: ignore[return-value]


# --- request parameters ---------------------------------------------------------------------


def group_by_param(params: OperatorsParams) -> str:
    """The operators' grouping a request asks for: name (the default) or shape."""
    group_by = params.get("group_by") or "name"
    if group_by not in GROUP_BY:
        raise ViewParamError(f"group_by must be one of {', '.join(GROUP_BY)}, not {group_by!r}")
    return str(group_by)


def operators_view(model: TraceModel, params: OperatorsParams) -> OperatorsView:
    return operators(model, group_by_param(params))


def callstacks_view(model: TraceModel, params: CallStacksParams) -> CallStacksView:
    name = params.get("name")
    if not name:
        raise ViewParamError("name (the operator name) is required")
    text = params.get("input_shape")
    if text in (None, ""):
        return callstacks(model, name)
    try:
        shape = parse_shape_param(text)
    except ValueError:
        raise ViewParamError(
            f"input_shape must be JSON, as in the operator rows: {text!r}"
        ) from None
    return callstacks(model, name, shape, by_shape=True)
