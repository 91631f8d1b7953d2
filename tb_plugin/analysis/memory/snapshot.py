"""The `memory_snapshot` view: what a CUDA caching allocator snapshot says, per device.

Pure functions of the decoded snapshot (`ingest.snapshot.read_snapshot`; the layout is
`torch.cuda.memory._snapshot()`'s: `segments` of `blocks`, `device_traces` of
`TraceEntry`s). Per device:
- `allocated_bytes_at_snapshot`: bytes of blocks in use (`active_allocated`) when the
  snapshot was taken; `active_bytes_at_snapshot` adds blocks waiting on other streams to
  be freed; `reserved_bytes`: the segments' `total_size`; what is reserved and not active
  is cached but free (`inactive_bytes`, fragmentation, with the largest such block).
- `peak_allocated_bytes`, `peak_time_us`: the highest active level of the history replay
  (`snapshot_history`) and when it was first reached (epoch microseconds, as torch
  records them); None when the snapshot holds no history (recording was off). The
  history counts the bytes each allocation asked for (its entries' `size`); a block may
  be rounded up past that (`allocated_bytes_at_snapshot` counts whole blocks, as
  `torch.cuda.memory_allocated` does), so the replay ends at
  `requested_bytes_at_snapshot`.
- `top_stacks_at_peak`: the allocations alive at the peak grouped by stack, largest first
  (`snapshot_frames`); `icicle`: the same, as a tree from the outermost frame.
- `ooms`: the `oom` entries, each with the bytes asked for and `device_free`, the free
  device memory the driver reported.
"""

from __future__ import annotations

from typing import Any, Optional, TypedDict

import numpy as np

from .curve import downsample
from .snapshot_columns import MAX_ADDRESS, MAX_BYTES
from .snapshot_frames import (
    IcicleNode,
    SnapshotFrame,
    StackBytes,
    frame_views,
    group_by_stack,
    icicle,
    top_stacks,
)
from .snapshot_history import Allocation, Replay, replay, time_of

VERSION = "2"
ACTIVE_STATES = ("active_allocated", "active_pending_free", "active_awaiting_free")
CHART_WIDTH = 1000  # pixel buckets of the timelines (each keeps its min and max)
# Lists of one answer, cut (each with its count of what was left out):
MAX_DEVICES = 64  # devices of one snapshot (`devices_total`)
MAX_OOMS = 100  # OOM events of one device (`oom_count`: all)
MAX_STREAMS = 64  # per-stream timelines of one device (`streams_total`)


class OomEvent(TypedDict):
    time_us: Optional[float]
    stream: Optional[int]
    requested_bytes: Optional[int]
    device_free: Optional[int]  # free device memory the driver reported; None: not recorded
    frames: list[SnapshotFrame]
    frames_cut: int  # frames beyond snapshot_frames.MAX_FRAMES, left out


class StreamTimeline(TypedDict):
    stream: Optional[int]
    t_us: list[Optional[float]]
    active_bytes: list[int]


class Timeline(TypedDict):
    """A step curve: each value holds until the next time."""

    t_us: list[Optional[float]]
    active_bytes: list[int]
    reserved_bytes: list[int]
    points: int  # points of the full curve
    downsampled: bool
    streams: list[StreamTimeline]  # MAX_STREAMS at most, by stream number
    streams_total: int


class SnapshotDevice(TypedDict):
    device: int
    peak_allocated_bytes: Optional[int]
    peak_time_us: Optional[float]
    allocated_bytes_at_snapshot: int
    reserved_bytes: int
    oom_count: int
    top_stacks_at_peak: list[StackBytes]
    active_bytes_at_snapshot: int
    requested_bytes_at_snapshot: int  # what the active blocks were asked for (history units)
    inactive_bytes: int  # reserved, not active: cached free memory (fragmentation)
    largest_inactive_block_bytes: int
    segments: int
    history_entries: int
    skipped_entries: int  # entries with a wrong shape, or inconsistent with the rest
    baseline_bytes: int  # active before the first history entry
    first_time_us: Optional[float]
    last_time_us: Optional[float]
    timeline: Timeline
    icicle: list[IcicleNode]
    ooms: list[OomEvent]  # the first MAX_OOMS; oom_count counts them all


class SegmentTotals(TypedDict):
    reserved: int
    allocated: int
    active: int
    requested: int
    largest_inactive: int
    count: int


def device_numbers(snapshot: dict[str, Any]) -> list[int]:
    """Every device that has segments or history, by number."""
    segments, traces = _parts(snapshot)
    devices = {d for s in segments if (d := _device(s)) is not None}
    devices |= {d for d, t in enumerate(traces) if isinstance(t, list) and t}
    return sorted(devices)


def device_views(snapshot: dict[str, Any]) -> list[SnapshotDevice]:
    """One view per device that has segments or history, by device number (the first
    MAX_DEVICES of them)."""
    segments, traces = _parts(snapshot)
    by_device: dict[int, list[dict[str, Any]]] = {}
    for segment in segments:
        device = _device(segment)
        if device is not None:
            by_device.setdefault(device, []).append(segment)
    out = []
    for device in device_numbers(snapshot)[:MAX_DEVICES]:
        trace = traces[device] if device < len(traces) else []
        out.append(device_view(device, by_device.get(device, []), trace))
    return out


def _parts(snapshot: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    segments = snapshot.get("segments")
    segments = [s for s in segments if isinstance(s, dict)] if isinstance(segments, list) else []
    traces = snapshot.get("device_traces")
    return segments, traces if isinstance(traces, list) else []


def _device(segment: dict[str, Any]) -> int | None:
    device = segment.get("device")
    return device if type(device) is int and 0 <= device < MAX_ADDRESS else None


def work_items(snapshot: dict[str, Any], limit: int) -> int:
    """What summarising the snapshot walks: every block of every segment, every entry of
    every device's history (walked a few times over), every frame of every OOM. A file
    that shares one list among many places (a reference costs it 2 bytes) describes far
    more of these than its size can hold honestly: `api.snapshots` compares the two.
    Counting stops once past `limit` (its own walk is bounded by it)."""
    segments, traces = _parts(snapshot)
    items = len(segments)
    for segment in segments:
        blocks = segment.get("blocks")
        items += len(blocks) if isinstance(blocks, list) else 0
    for trace in traces:
        if not isinstance(trace, list):
            continue
        items += 3 * len(trace)
        if items > limit:
            return items
        for entry in trace:
            if isinstance(entry, dict) and entry.get("action") == "oom":
                frames = entry.get("frames")
                items += len(frames) if isinstance(frames, list) else 0
    return items


def device_view(device: int, segments: list[dict[str, Any]], trace: Any) -> SnapshotDevice:
    totals, live_at_end = segment_totals(segments)
    history = replay(trace, live_at_end, totals["reserved"])
    has_history = history.entries > 0
    peak = history.peak_index if has_history else None
    at_peak = history.at_peak if peak is not None else []
    groups = group_by_stack((a.size, a.frames) for a in at_peak)
    return {
        "device": device,
        "peak_allocated_bytes": int(history.active[peak]) if peak is not None else None,
        "peak_time_us": _time(history.times[peak]) if peak is not None else None,
        "allocated_bytes_at_snapshot": totals["allocated"],
        "reserved_bytes": totals["reserved"],
        "oom_count": len(history.ooms),
        "top_stacks_at_peak": top_stacks(groups),
        "active_bytes_at_snapshot": totals["active"],
        "requested_bytes_at_snapshot": totals["requested"],
        "inactive_bytes": totals["reserved"] - totals["active"],
        "largest_inactive_block_bytes": totals["largest_inactive"],
        "segments": totals["count"],
        "history_entries": history.entries,
        "skipped_entries": history.skipped,
        "baseline_bytes": sum(a.size for a in history.baseline.values()),
        "first_time_us": history.time_range[0] if history.time_range else None,
        "last_time_us": history.time_range[1] if history.time_range else None,
        "timeline": timeline(history) if has_history else _empty_timeline(),
        "icicle": icicle(groups),
        "ooms": [oom_view(e) for e in history.ooms[:MAX_OOMS]],
    }


def entry_times(trace: Any) -> list[float]:
    entries = trace if isinstance(trace, list) else []
    times = (time_of(e) for e in entries if isinstance(e, dict))
    return [t for t in times if t is not None]


def _time(t: float) -> float | None:
    return None if np.isnan(t) else float(t)


def segment_totals(segments: list[dict[str, Any]]) -> tuple[SegmentTotals, dict[int, Allocation]]:
    """Bytes reserved, allocated, active and the largest free block, from the blocks
    (sizes that are not ints count as 0), and the active blocks by address."""
    totals: SegmentTotals = {
        "reserved": 0,
        "allocated": 0,
        "active": 0,
        "requested": 0,
        "largest_inactive": 0,
        "count": 0,
    }
    live: dict[int, Allocation] = {}
    for segment in segments:
        totals["count"] += 1
        totals["reserved"] += _size(segment.get("total_size"))
        stream = segment.get("stream") if type(segment.get("stream")) is int else None
        blocks = segment.get("blocks")
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            size, state = _size(block.get("size")), block.get("state")
            if state in ACTIVE_STATES:
                totals["active"] += size
                if state == "active_allocated":
                    totals["allocated"] += size
                # The history records the bytes asked for; the block may be larger.
                asked = block.get("requested_size")
                asked = asked if type(asked) is int and 0 <= asked <= size else size
                totals["requested"] += asked
                address = block.get("address")
                if type(address) is int and 0 <= address < MAX_ADDRESS:
                    live[address] = Allocation(asked, stream, block.get("frames"))
            else:
                totals["largest_inactive"] = max(totals["largest_inactive"], size)
    return totals, live


def _size(value: Any) -> int:
    return value if type(value) is int and 0 < value <= MAX_BYTES else 0


def oom_view(entry: dict[str, Any]) -> OomEvent:
    def number(key: str) -> int | None:
        value = entry.get(key)
        return value if type(value) is int and abs(value) < MAX_ADDRESS else None

    frames, cut = frame_views(entry.get("frames"))
    return {
        "time_us": time_of(entry),
        "stream": number("stream"),
        "requested_bytes": number("size"),
        "device_free": number("device_free"),
        "frames": frames,
        "frames_cut": cut,
    }


def timeline(history: Replay) -> Timeline:
    """The device's active and reserved levels, and each stream's active level, kept at
    each pixel bucket's extremes (`curve.downsample`)."""
    times = history.times
    # Entries without a time stand at their predecessor's (their order is known).
    t = _filled(history.times)
    active, reserved = history.active, history.reserved
    keep = downsample(t, [active, reserved], CHART_WIDTH) if t.size else np.arange(0)
    streams: list[StreamTimeline] = []
    ordered = sorted(history.per_stream, key=lambda s: (s is None, s or 0))
    for stream in ordered[:MAX_STREAMS]:
        at, v = history.per_stream[stream]
        picked = downsample(t[at], [v], CHART_WIDTH) if at.size else at
        streams.append(
            {
                "stream": stream,
                "t_us": _times(times[at[picked]]),
                "active_bytes": v[picked].tolist(),
            }
        )
    return {
        "t_us": _times(times[keep]),
        "active_bytes": active[keep].tolist(),
        "reserved_bytes": reserved[keep].tolist(),
        "points": int(t.size),
        "downsampled": bool(keep.size < t.size),
        "streams": streams,
        "streams_total": len(ordered),
    }


def _times(times: np.ndarray) -> list[float | None]:
    return [None if t != t else t for t in times.tolist()]  # NaN: no time


def _filled(times: np.ndarray) -> np.ndarray:
    """NaN replaced by the last time before it (0 before the first)."""
    known = ~np.isnan(times)
    last = np.maximum.accumulate(np.where(known, np.arange(times.size), -1))
    return np.where(last >= 0, times[np.maximum(last, 0)], 0.0)


def _empty_timeline() -> Timeline:
    return {
        "t_us": [],
        "active_bytes": [],
        "reserved_bytes": [],
        "points": 0,
        "downsampled": False,
        "streams": [],
        "streams_total": 0,
    }
