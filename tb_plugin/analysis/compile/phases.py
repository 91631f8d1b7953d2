"""The compile phases of a log: torch's `dynamo_timed` chromium events (`B`/`E` pairs on one
stack, instants for cache hits and misses) paired into intervals, each with its compile id.

A phase's payload is `{"name", "ts" (epoch µs, `time.time_ns() / 1000`), "args"
(`compile_id` for a begin, a copy of the compile's metrics for the end of `dynamo`), "ph",
"cat": "dynamo_timed", "tid": 0, "pid": 0}`. Every event of a process shares one tid, so
begins and ends nest as a stack; an end whose begin was lost (a skipped line) closes the
innermost open begin of its name, or is dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

MAX_EVENTS = 20_000  # phases a log keeps for the trace view (the rest are counted)
# The phase whose interval is the compile of a frame: `dynamo` in every torch since
# the chromium events began (`entire_frame_compile` inside it).
FRAME_PHASE = "dynamo"
ENTIRE_PHASE = "entire_frame_compile"  # what `entire_frame_compile_time_s` times
BACKWARD_PHASE = "entire_backward_compile"
CUDAGRAPH_RECORD = "CUDAGraphNode.record"


@dataclass
class Phase:
    name: str
    compile_id: str | None
    start_us: float
    dur_us: float
    depth: int


@dataclass
class Phases:
    """A log's phases: the kept ones, how many in all, and per compile id the intervals of
    its `dynamo`, `entire_frame_compile` and backward phases and how many CUDA graphs it
    recorded."""

    kept: list[Phase] = field(default_factory=list)
    total: int = 0
    frames: dict[str, tuple[float, float]] = field(default_factory=dict)
    entire: dict[str, tuple[float, float]] = field(default_factory=dict)
    backward: dict[str, tuple[float, float]] = field(default_factory=dict)
    cudagraph_records: dict[str, int] = field(default_factory=dict)
    skipped: int = 0  # payloads that were not a chromium event (damaged)
    _open: list[tuple[str, str | None, float]] = field(default_factory=list)

    def add(self, payload: str, envelope_id: str | None) -> bool:
        """One event's payload; False when it is not one (not JSON, no name or time)."""
        try:
            event = msgspec.json.decode(payload)
        except (msgspec.DecodeError, RecursionError):
            return False
        if not isinstance(event, dict):
            return False
        name, ts, ph = event.get("name"), event.get("ts"), event.get("ph")
        if not isinstance(name, str) or not isinstance(ts, (int, float)) or isinstance(ts, bool):
            return False
        cid = _event_compile_id(event.get("args"), envelope_id)
        if ph == "B":
            self._open.append((name, cid, float(ts)))
        elif ph == "E":
            self._close(name, float(ts), cid)
        elif ph in ("i", "I", "n"):
            self._keep(Phase(name, cid, float(ts), 0.0, len(self._open)))
        return True

    def _close(self, name: str, end: float, cid: str | None) -> None:
        for at in range(len(self._open) - 1, -1, -1):
            if self._open[at][0] == name:
                break
        else:
            return  # no begin: its line was lost
        _, begin_id, start = self._open[at]
        del self._open[at:]
        cid = begin_id or cid
        self._keep(Phase(name, cid, start, max(end - start, 0.0), at))
        if cid is None:
            return
        if name == FRAME_PHASE:
            self.frames.setdefault(cid, (start, end))
        elif name == ENTIRE_PHASE:
            self.entire.setdefault(cid, (start, end))
        elif name == BACKWARD_PHASE:
            self.backward.setdefault(cid, (start, end))
        elif name == CUDAGRAPH_RECORD:
            self.cudagraph_records[cid] = self.cudagraph_records.get(cid, 0) + 1

    def _keep(self, phase: Phase) -> None:
        self.total += 1
        if len(self.kept) < MAX_EVENTS:
            self.kept.append(phase)


def _event_compile_id(args: Any, envelope_id: str | None) -> str | None:
    """The event's `compile_id` arg ("None" when torch had none), else its record's."""
    if isinstance(args, dict):
        cid = args.get("compile_id")
        if isinstance(cid, str) and cid not in ("", "None"):
            return cid
    return envelope_id
