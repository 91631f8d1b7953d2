"""Cross-stream waits and the autograd handoff, from the raw trace JSON (no kinetoscope
import), by other means than the product's inference:

- `recorded_waits`: the waits a trace's `cuda_sync` "Stream Wait Event" events name (the
  truth where a trace recorded them; HTA's reading): the last activity of `wait_on_stream`
  launched before the record call (`wait_on_cuda_event_record_corr_id`), and the first
  activity of the waiting stream launched after the wait call. Stripped of those events
  (`without_sync_events`), a trace is what the default settings record, and the product's
  inference must find the same pairs.
- `violations`: which of a set of claimed waits (pairs of correlation ids) the raw JSON
  contradicts: not two activities of one device on two streams, the waited one ending
  after the waiting one started, no record call between the waited activity's launch and
  a wait call before the waiting one's launch.
- `backward_bursts`: the backward thread's bursts, found by interleaving: the autograd
  functions of a thread other than the step thread, split wherever a step-thread op
  starts between two of them; a burst the step thread is idle around (no op of it
  overlaps the burst) is a handoff."""

from __future__ import annotations

import bisect
import json
import re
from pathlib import Path
from typing import Any

from .raw import RawTrace, ns

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
CALL_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
SLACK_NS = 500  # device times rounded apart by less than this are in order


Key = tuple[int, Any]  # an activity: (its correlation id, its device)


def _calls(trace: RawTrace) -> dict[int, dict[str, Any]]:
    out = {}
    for e in trace.complete(*CALL_CATS):
        corr = (e.get("args") or {}).get("correlation")
        if isinstance(corr, int):
            out[corr] = e
    return out


def gpu_activities(trace: RawTrace) -> dict[Key, dict[str, Any]]:
    """GPU activities by (correlation, device): one call may launch on several devices
    (`nn.DataParallel`'s cudaLaunchCooperativeKernelMultiDevice)."""
    out = {}
    for e in trace.complete(*GPU_CATS):
        corr = (e.get("args") or {}).get("correlation")
        if isinstance(corr, int):
            out[(corr, _stream(e)[0])] = e
    return out


def _stream(e: dict[str, Any]) -> Any:
    args = e.get("args") or {}
    return (args.get("device", e.get("pid")), args.get("stream", e.get("tid")))


def recorded_waits(trace: RawTrace) -> set[tuple[Key, Key]]:
    calls = _calls(trace)
    launched = [
        (ns(calls[k[0]]["ts"]), k, e) for k, e in gpu_activities(trace).items() if k[0] in calls
    ]
    out = set()
    for e in trace.complete("cuda_sync"):
        args = e.get("args") or {}
        if args.get("cuda_sync_kind") != "Stream Wait Event":
            continue
        record = calls.get(args.get("wait_on_cuda_event_record_corr_id"))
        wait = calls.get(args.get("correlation"))
        if record is None or wait is None:
            continue
        device = args.get("device")
        on = [x for x in launched if _stream(x[2]) == (device, args.get("wait_on_stream"))]
        held = [x for x in launched if _stream(x[2]) == (device, args.get("stream"))]
        before = [x for x in on if x[0] <= ns(record["ts"])]
        after = [x for x in held if x[0] >= ns(wait["ts"])]
        if before and after:
            out.add((max(before)[1], min(after)[1]))
    return out


def without_sync_events(trace: RawTrace, out: Path) -> Path:
    """The trace as the default settings record it: no `cuda_sync` event."""
    events = [e for e in trace.events if e.get("cat") != "cuda_sync"]
    out.write_text(json.dumps({**trace.header, "traceEvents": events}))
    return out


def violations(trace: RawTrace, pairs: set[tuple[Key, Key]]) -> list[tuple[Key, Key, str]]:
    calls = _calls(trace)
    gpu = gpu_activities(trace)
    records: dict[Any, list[int]] = {}
    waits: dict[Any, list[int]] = {}
    for e in trace.complete(*CALL_CATS):
        name, thread = str(e.get("name", "")), (e.get("pid"), e.get("tid"))
        if name.startswith(("cudaEventRecord", "hipEventRecord")):
            records.setdefault(e.get("pid"), []).append(ns(e["ts"]))
        elif name.startswith(("cudaStreamWaitEvent", "hipStreamWaitEvent")):
            waits.setdefault(thread, []).append(ns(e["ts"]))
    out = []
    for k, n in sorted(pairs):
        a, b = gpu[k], gpu[n]
        (dev_a, s_a), (dev_b, s_b) = _stream(a), _stream(b)
        if dev_a != dev_b or s_a == s_b:
            out.append((k, n, "not two streams of one device"))
        elif ns(a["ts"]) + ns(a["dur"]) > ns(b["ts"]) + SLACK_NS:
            out.append((k, n, "the waited activity ends after the waiting one starts"))
        elif not _record_then_wait(calls[k[0]], calls[n[0]], records, waits):
            out.append((k, n, "no record after the waited launch and wait before the other"))
    return out


def _record_then_wait(
    waited_launch: dict[str, Any],
    waiting_launch: dict[str, Any],
    records: dict[Any, list[int]],
    waits: dict[Any, list[int]],
) -> bool:
    t0, t1 = ns(waited_launch["ts"]), ns(waiting_launch["ts"])
    thread = (waiting_launch.get("pid"), waiting_launch.get("tid"))
    recorded = [t for t in records.get(waited_launch.get("pid"), []) if t > t0]
    if not recorded:
        return False
    return any(min(recorded) < w < t1 for w in waits.get(thread, []))


_AUTOGRAD = re.compile(r"(Backward\d*$)|(^autograd::engine::evaluate_function)")
OP_CATS = {"cpu_op", "Operator", "user_annotation"}


def backward_bursts(trace: RawTrace) -> int:
    """How many bursts of the backward threads the step thread is idle around."""
    ops = [e for e in trace.complete(*OP_CATS)]
    steps = [e for e in ops if str(e.get("name", "")).startswith("ProfilerStep#")]
    if not steps:
        return 0
    main = (steps[0].get("pid"), steps[0].get("tid"))
    train = sorted(
        (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        for e in ops
        if (e.get("pid"), e.get("tid")) == main and e not in steps
    )
    starts = [t for t, _ in train]
    backward: dict[Any, list[tuple[int, int]]] = {}
    for e in ops:
        thread = (e.get("pid"), e.get("tid"))
        if thread != main and _AUTOGRAD.search(str(e.get("name", ""))):
            backward.setdefault(thread, []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    count = 0
    for spans in backward.values():
        for lo, hi in _split(sorted(spans), starts):
            if not any(a < hi and b > lo for a, b in train):
                count += 1
    return count


def _split(spans: list[tuple[int, int]], cuts: list[int]) -> list[tuple[int, int]]:
    """Runs of `spans` (sorted by start) with no cut (a step-thread op's start) between
    a run's first start and a span's start: (first start, last end) of each run."""
    out: list[tuple[int, int]] = []
    for lo, hi in spans:
        if out and bisect.bisect_right(cuts, lo) == bisect.bisect_right(cuts, out[-1][0]):
            out[-1] = (out[-1][0], max(out[-1][1], hi))
            continue
        out.append((lo, hi))
    return out
