"""Which runs of a logdir are the same workload, so the trend compares like with like.

A logdir often holds runs of different models (the demo's cnn, mlp and ddp_gloo; a sweep
of model sizes): comparing their step times names "regressions" between unrelated runs.
Two runs are the same workload when they ran on the same kind and number of devices with
the same number of workers, and ran mostly the same ops: the Jaccard similarity of their
significant op names (ops holding at least `SIGNIFICANT_SHARE` of the run's op time) is at
least `SAME_WORKLOAD`. Names, not times: a regression changes how long an op takes, not
which ops run, so a slower run stays in its workload.

Runs are taken in trace start order; each joins the workload whose latest run it is most
similar to (a model that changes slowly stays one workload), else starts a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .summary import TraceSummary

SIGNIFICANT_SHARE = 0.01
SAME_WORKLOAD = 0.5


@dataclass(frozen=True)
class Fingerprint:
    device_type: str
    device_count: int
    workers: int
    ops: frozenset[str]


def fingerprint(summary: TraceSummary) -> Fingerprint:
    """What a run ran: its device kind and count, its workers and its significant ops
    (kernels when it recorded no op time)."""
    times = summary.ops or summary.kernels
    total = sum(times.values())
    ops = frozenset(k for k, v in times.items() if total > 0 and v >= SIGNIFICANT_SHARE * total)
    return Fingerprint(summary.device_type, len(summary.devices), summary.workers, ops)


def similarity(a: Fingerprint, b: Fingerprint) -> float:
    """0 for different devices or workers, else the Jaccard similarity of the op names (1
    when neither recorded any)."""
    if (a.device_type, a.device_count, a.workers) != (b.device_type, b.device_count, b.workers):
        return 0.0
    union = a.ops | b.ops
    return len(a.ops & b.ops) / len(union) if union else 1.0


def group_workloads(runs: Sequence[TraceSummary | None]) -> list[int | None]:
    """Each run's workload (0, 1, ... in order of first appearance); None for a run
    without a summary (it failed)."""
    latest: list[Fingerprint] = []  # each workload's latest run
    out: list[int | None] = []
    for summary in runs:
        if summary is None:
            out.append(None)
            continue
        mine = fingerprint(summary)
        scores = [similarity(mine, other) for other in latest]
        best = max(range(len(scores)), key=lambda i: scores[i], default=None)
        if best is None or scores[best] < SAME_WORKLOAD:
            latest.append(mine)
            out.append(len(latest) - 1)
        else:
            latest[best] = mine
            out.append(best)
    return out


def workload_label(summary: TraceSummary) -> str:
    """A workload in words: its devices and workers, and its three biggest ops."""
    top = sorted((summary.ops or summary.kernels).items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    devices = f"{len(summary.devices)} × {summary.devices[0]}" if summary.devices else "CPU"
    workers = f", {summary.workers} workers" if summary.workers > 1 else ""
    ops = ", ".join(name for name, _ in top) or "no ops"
    return f"{devices}{workers}: {ops}"
