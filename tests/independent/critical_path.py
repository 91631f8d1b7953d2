"""The facts a 2-rank CPU job's critical path must show, recomputed from the raw trace
JSON (no kinetoscope import): each rank's `gloo:*` collectives on one clock (their
`baseTimeNanoseconds` + ts), the n-th of each rank being one call; who arrived last at
each, and each rank's transfer after that last arrival; and the job's steps (a job's step
n ends when its last rank's `ProfilerStep#n` ends, and starts where step n-1 ended, the
first where its first rank started it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .raw import RawTrace, read_raw


@dataclass
class Call:
    """One collective call across ranks: per rank its start and end (µs, job clock)."""

    starts: list[float]
    ends: list[float]

    @property
    def last(self) -> int:
        """The rank that arrived last."""
        return max(range(len(self.starts)), key=lambda r: self.starts[r])

    def transfer(self, rank: int) -> float:
        return self.ends[rank] - max(self.starts)


@dataclass
class Job:
    calls: list[Call]
    step_names: list[str]
    step_us: list[float]  # the job's steps, as the module doc says
    step_start: list[float]  # job clock


def _clock(trace: RawTrace) -> float:
    return float(trace.header.get("baseTimeNanoseconds", 0)) / 1000.0


def read_job(files: list[Path]) -> Job:
    traces = [read_raw(f) for f in files]
    origins = [_clock(t) for t in traces]
    base = min(origins)
    per_rank_calls, steps = [], []
    for trace, origin in zip(traces, origins):
        shift = origin - base
        gloo = sorted(
            (e for e in trace.complete() if str(e.get("name", "")).startswith("gloo:")),
            key=lambda e: e["ts"],
        )
        per_rank_calls.append([(e["ts"] + shift, e["ts"] + e["dur"] + shift) for e in gloo])
        mine = {
            e["name"]: (e["ts"] + shift, e["ts"] + e["dur"] + shift)
            for e in trace.complete()
            if str(e.get("name", "")).startswith("ProfilerStep#")
        }
        steps.append(mine)
    n = min(len(c) for c in per_rank_calls)
    calls = [
        Call([c[i][0] for c in per_rank_calls], [c[i][1] for c in per_rank_calls]) for i in range(n)
    ]
    names = sorted(set.intersection(*(set(s) for s in steps)), key=lambda s: int(s.split("#")[1]))
    step_us, step_start, previous = [], [], float("-inf")
    for name in names:
        end = max(s[name][1] for s in steps)
        start = max(min(s[name][0] for s in steps), previous)
        step_us.append(end - start)
        step_start.append(start)
        previous = end
    return Job(calls, names, step_us, step_start)
