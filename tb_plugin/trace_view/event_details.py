"""The `event` route: one event's details (args, call stack, enclosing events) and the
events linked to it: its launch or GPU activity, its forward or backward op, flows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import msgspec
import numpy as np

from ..analysis.core.health.view import checks_of_row
from ..model.categories import GPU_ACTIVITY_KINDS, LAUNCH_KINDS, Kind, Phase
from ..model.errors import ViewParamError
from ..model.trace_model import TraceModel
from .index import TimelineIndex
from .links import enclosing, flow_pairs, flows_of_event, links, sequence_partner, track_lookup
from .params import EventParams
from .tracks import LANE_PYTHON
from .workers import TimelineNotFound, WorkerTrace


class Frame(TypedDict):
    name: str
    row: int | None


class Link(TypedDict):
    relation: str  # gpu_activity, launcher, cpu_op, backward, forward, flow_out, flow_in
    category: str
    row: int
    name: str
    ts: float
    dur: float
    track: str | None


class EventView(TypedDict):
    row: int
    name: str
    category: str
    kind: str
    phase: str
    ts: float
    dur: float
    pid: str
    tid: str
    process: str
    thread: str
    track: str | None
    depth: int | None
    args: dict[str, Any]
    input_shapes: list[Any] | None
    call_stack: list[Frame]
    call_stack_source: str | None
    ancestors: list[Frame]
    flows: list[Link]
    health: list[str]  # ids of the `health` checks that flag this event


def _one(workers: Sequence[WorkerTrace]) -> WorkerTrace:
    if len(workers) != 1:
        raise ViewParamError("this route takes one worker")
    return workers[0]


def _row(params: EventParams, model: TraceModel) -> int:
    row = params.get("row")
    if row is None:
        raise ViewParamError("missing parameter: row")
    if not 0 <= row < len(model):
        raise TimelineNotFound(f"no event row {row} (the trace has {len(model)})")
    return row


def _decode_args(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return {"(unparsed)": raw.decode("utf-8", "replace")}
    return value if isinstance(value, dict) else {"(value)": value}


def event(workers: Sequence[WorkerTrace], params: EventParams) -> EventView:
    worker = _one(workers)
    model, index = worker.model, worker.index
    row = _row(params, model)
    ev = model.events
    pos = index.position(row)
    pid, tid = model.pids[ev["pid"][row]], model.tids[ev["tid"][row]]
    args = _decode_args(model.raw_args(row))
    stack, source = _call_stack(worker, args, row, pos)
    track = None
    depth = None
    ancestors: list[Frame] = []
    if pos >= 0:
        track = worker.track_of(pos)
        depth = int(index.depth[pos])
        ancestors = _ancestors(model, index, pos)
    shapes = args.get("Input Dims", args.get("Input dims"))
    return {
        "row": row,
        "name": model.names[ev["name"][row]],
        "category": model.categories[ev["cat"][row]],
        "kind": Kind(int(ev["kind"][row])).name.lower(),
        "phase": Phase(int(ev["ph"][row])).name.lower(),
        "ts": float(ev["ts"][row]) + worker.offset,
        "dur": float(ev["dur"][row]),
        "pid": str(pid),
        "tid": str(tid),
        "process": model.process_names.get(str(pid), ""),
        "thread": model.thread_names.get(f"{pid}/{tid}", ""),
        "track": track,
        "depth": depth,
        "args": args,
        "input_shapes": shapes if isinstance(shapes, list) else None,
        "call_stack": stack,
        "call_stack_source": source,
        "ancestors": ancestors,
        "flows": _event_links(worker, row, pos, args),
        "health": checks_of_row(model, row),
    }


def _ancestors(model: TraceModel, index: TimelineIndex, pos: int) -> list[Frame]:
    chain: list[Frame] = []
    at = int(index.parent[pos])
    while at >= 0 and len(chain) < 1000:
        row = int(index.row[at])
        chain.append({"name": model.names[index.name[at]], "row": row})
        at = int(index.parent[at])
    return chain[::-1]


def _call_stack(
    worker: WorkerTrace, args: dict[str, Any], row: int, pos: int
) -> tuple[list[Frame], str | None]:
    """Innermost frame first: the `Call stack` arg, else the Python frames running on the
    event's thread at its start."""
    text = args.get("Call stack")
    if isinstance(text, str) and text:
        return [{"name": f, "row": None} for f in text.split(";") if f], "args"
    model, index = worker.model, worker.index
    ev = model.events
    key = (str(model.pids[ev["pid"][row]]), str(model.tids[ev["tid"][row]]), LANE_PYTHON)
    python = track_lookup(model, index).get(key)
    if python is None:
        return [], None
    at = int(enclosing(model, index, np.array([python]), np.array([float(ev["ts"][row])]))[0])
    if at == pos:
        at = int(index.parent[at])
    frames: list[Frame] = []
    while at >= 0 and len(frames) < 1000:
        frames.append({"name": model.names[index.name[at]], "row": int(index.row[at])})
        at = int(index.parent[at])
    return frames, ("python" if frames else None)


# (relation, row, category) of an event linked to another; an empty category is the
# linked event's own.
Found = list[tuple[str, int, str]]


def _event_links(worker: WorkerTrace, row: int, pos: int, args: dict[str, Any]) -> list[Link]:
    model = worker.model
    ev = model.events
    kind = int(ev["kind"][row])
    found = _correlated(worker, row, kind)
    flows, has_fwdbwd = _flow_links(worker, pos)
    found += flows
    number = args.get("Sequence number")
    if not has_fwdbwd and kind == Kind.CPU_OP and isinstance(number, int):
        backward = args.get("Fwd thread id") not in (None, 0)  # 2021: 0 on forward ops
        partner = sequence_partner(model, worker.index, number, backward, float(ev["ts"][row]))
        if partner >= 0:
            found.append(("forward" if backward else "backward", partner, "Sequence number"))
    out: list[Link] = []
    seen: set[int] = set()
    for relation, other_row, category in found:
        if other_row in seen or other_row == row:
            continue
        seen.add(other_row)
        out.append(_link(worker, relation, other_row, category))
    return out


def _correlated(worker: WorkerTrace, row: int, kind: int) -> Found:
    """A launch's GPU activity, an op's GPU activity, or a GPU activity's launch and op."""
    model = worker.model
    table = links(model, worker.index)
    correlation = int(model.column_at("correlation", row))
    external = int(model.column_at("external_id", row))
    if kind in LAUNCH_KINDS:
        return [
            ("gpu_activity", r, "")
            for r in table.gpu_by_correlation.rows_with(correlation).tolist()
        ]
    if kind in (Kind.CPU_OP, Kind.USER_ANNOTATION):
        return [("gpu_activity", r, "") for r in table.gpu_by_external.rows_with(external).tolist()]
    if kind in GPU_ACTIVITY_KINDS:
        launchers = table.launch_by_correlation.rows_with(correlation)
        runtime = launchers[model.events["kind"][launchers] == Kind.RUNTIME]
        # one launch: the runtime call, not also the driver call under it (same id)
        launchers = (runtime if runtime.size else launchers).tolist()
        ops = table.op_by_external.rows_with(external).tolist()
        return [("launcher", r, "") for r in launchers] + [("cpu_op", r, "") for r in ops]
    return []


def _flow_links(worker: WorkerTrace, pos: int) -> tuple[Found, bool]:
    """The events at the other end of the event's flows; and whether one is fwdbwd."""
    if pos < 0:
        return [], False
    model, index = worker.model, worker.index
    pairs = flow_pairs(model, index)
    found: Found = []
    has_fwdbwd = False
    for pair, is_src in flows_of_event(model, index, pos):
        other_track = pairs.dst_track[pair] if is_src else pairs.src_track[pair]
        other_ts = pairs.dst_ts[pair] if is_src else pairs.src_ts[pair]
        other = int(enclosing(model, index, np.array([other_track]), np.array([other_ts]))[0])
        if other < 0:
            continue
        category = model.categories[int(pairs.cat[pair])]
        if category.lower() == "fwdbwd":
            has_fwdbwd = True
            relation = "backward" if is_src else "forward"
        else:
            relation = "flow_out" if is_src else "flow_in"
        found.append((relation, int(index.row[other]), category))
    return found, has_fwdbwd


def _link(worker: WorkerTrace, relation: str, row: int, category: str) -> Link:
    model = worker.model
    ev = model.events
    pos = worker.index.position(row)
    return {
        "relation": relation,
        "category": category or model.categories[ev["cat"][row]],
        "row": row,
        "name": model.names[ev["name"][row]],
        "ts": float(ev["ts"][row]) + worker.offset,
        "dur": float(ev["dur"][row]),
        "track": worker.track_of(pos) if pos >= 0 else None,
    }
