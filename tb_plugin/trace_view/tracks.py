"""Which track each event is drawn on, and how tracks are named and ordered.

A track is one (process, thread) of the file as written (`pid`, `tid`; a GPU stream is a
thread of its device's process). Python frames (`python_function`) get a track of their
own beside the thread's operators, so a deep Python stack can be folded away without
hiding the operators. Values are compared as text, so a `tid` written once as `7` and
once as `"7"` is one track.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analysis.core.common import unique_inverse
from ..analysis.core.devices import device_identities, device_identity
from ..analysis.core.rocm_streams import stream_ids_are_queues
from ..ingest.values import lenient_int
from ..model.categories import Kind, Phase, kind_mask
from ..model.trace_model import TraceModel

GPU_KINDS = (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.GPU_USER_ANNOTATION)
HOST_KINDS = (Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.RUNTIME, Kind.DRIVER, Kind.SYNC)
# Never drawn as slices: flows are arrows, memory and counters are counter tracks.
NOT_SLICES = (Kind.FLOW, Kind.MEMORY, Kind.COUNTER)

LANE_MAIN, LANE_PYTHON = 0, 1
_GPU_PROCESS_SORT = 5_000_000  # where libkineto puts GPU processes (5000000 + device)
_LAST = 1 << 40


@dataclass
class Track:
    index: int
    pid: Any
    tid: Any
    lane: int
    kind: str  # "cpu", "gpu", "python" or "other"
    label: str
    process: str
    device: int | None
    stream: int | None
    sort_key: tuple[Any, ...]

    @property
    def id(self) -> str:
        return f"t{self.index}"


def slice_rows(model: TraceModel) -> np.ndarray:
    """Rows drawn on slice tracks: complete events and plain instants with a time."""
    ev = model.events
    kind, ph = ev["kind"], ev["ph"]
    drawable = (ph == Phase.COMPLETE) & ~kind_mask(kind, NOT_SLICES)
    drawable |= (ph == Phase.INSTANT) & (kind == Kind.INSTANT)
    drawable &= np.isfinite(ev["ts"])
    return np.flatnonzero(drawable)


def _canonical_codes(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes of the model's pid (or tid) table → codes of their text form."""
    index: dict[str, int] = {}
    firsts: list[Any] = []
    out = np.empty(len(values), dtype=np.int64)
    for i, value in enumerate(values):
        text = "" if value is None else str(value)
        code = index.get(text)
        if code is None:
            code = len(firsts)
            index[text] = code
            firsts.append(value)
        out[i] = code
    return out, firsts


def _mode(values: np.ndarray) -> int | None:
    values = values[values >= 0]
    if values.size == 0:
        return None
    uniq, counts = np.unique(values, return_counts=True)
    return int(uniq[np.argmax(counts)])


def assign_tracks(model: TraceModel, rows: np.ndarray) -> tuple[np.ndarray, list[Track]]:
    """Track index of each of `rows`, and the tracks in display order (index = position)."""
    ev = model.events
    pid_canon, pid_values = _canonical_codes(model.pids)
    tid_canon, tid_values = _canonical_codes(model.tids)
    kind = ev["kind"][rows]
    lane = (kind == Kind.PYTHON).astype(np.int64)
    n_tid = max(len(tid_values), 1)
    key = (pid_canon[ev["pid"][rows]] * n_tid + tid_canon[ev["tid"][rows]]) * 2 + lane
    uniq, inverse = unique_inverse(key)

    # Per-track kind counts in one pass: (track, kind) histogram.
    n_kinds = int(max(Kind)) + 1
    hist = np.bincount(inverse * n_kinds + kind, minlength=len(uniq) * n_kinds).reshape(
        len(uniq), n_kinds
    )
    gpu_count = hist[:, list(GPU_KINDS)].sum(axis=1)
    host_count = hist[:, list(HOST_KINDS)].sum(axis=1)
    order_rows = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order_rows], np.arange(len(uniq) + 1))

    gpu_pids = {int(k // 2 // n_tid) for k, g in zip(uniq.tolist(), gpu_count.tolist()) if g}
    host_pids = {int(k // 2 // n_tid) for k, h in zip(uniq.tolist(), host_count.tolist()) if h}
    # One host process: the home of host threads written on a device's pid (the Python
    # tracer writes a thread it met before the profiler started, tqdm's monitor, as pid 0).
    only_host = host_pids - gpu_pids
    home = pid_values[only_host.pop()] if len(only_host) == 1 else None
    drafts: list[Track] = []
    for t, k in enumerate(uniq.tolist()):
        pid_value = pid_values[k // 2 // n_tid]
        tid_value = tid_values[(k // 2) % n_tid]
        track_lane = k % 2
        total = int(bounds[t + 1] - bounds[t])
        device = stream = None
        if track_lane == LANE_PYTHON:
            track_kind = "python"
        elif gpu_count[t] * 2 >= total and gpu_count[t]:
            track_kind = "gpu"
            mine = rows[order_rows[bounds[t] : bounds[t + 1]]]
            device, stream = _gpu_track_place(model, mine, pid_value, tid_value)
        else:
            track_kind = "cpu" if host_count[t] else "other"
        is_gpu_process = (k // 2 // n_tid) in gpu_pids
        track = _describe(model, t, pid_value, tid_value, track_lane, track_kind, device,
                          stream, is_gpu_process=is_gpu_process)  # fmt: skip
        if is_gpu_process and track_kind != "gpu" and home is not None:
            track = _moved_home(model, track, home)
        drafts.append(track)
    order = sorted(range(len(drafts)), key=lambda i: drafts[i].sort_key)
    position = np.empty(len(drafts), dtype=np.int64)
    position[order] = np.arange(len(drafts))
    tracks = [drafts[i] for i in order]
    for i, track in enumerate(tracks):
        track.index = i
    return position[inverse] if len(drafts) else inverse.astype(np.int64), tracks


def _gpu_track_place(
    model: TraceModel, mine: np.ndarray, pid_value: Any, tid_value: Any
) -> tuple[int | None, int | None]:
    """A GPU track's device and stream: what most of its events say, else its pid/tid."""
    device = _mode(model.column_at("device", mine).astype(np.int64))
    stream = _mode(model.column_at("stream", mine))
    if device is None:
        device = lenient_int(pid_value)
    if stream is None:
        stream = lenient_int(tid_value)
    return device, stream


def _process_label(model: TraceModel, pid_text: str) -> str:
    """The process's label; libkineto's default "GPU N" (written for every backend whose
    plugin gives no device info, XPU's too) replaced by device N's own ("XPU 0")."""
    label = model.process_labels.get(pid_text, "")
    device = lenient_int(pid_text)
    if label.strip() == f"GPU {device}" and device is not None:
        ident = device_identities(model).get(device)
        if ident is not None:
            return ident.short_label
    return label


def _moved_home(model: TraceModel, track: Track, home: Any) -> Track:
    """A host thread written on a device's pid, drawn in the host process (after its own
    threads), its label saying the pid it was written with."""
    host = _describe(model, track.index, home, track.tid, track.lane, track.kind, None, None,
                     is_gpu_process=False)  # fmt: skip
    host.pid = track.pid
    host.label += f" (written as pid {track.pid})"
    host.sort_key = host.sort_key[:3] + (_LAST,) + host.sort_key[4:]
    return host


def _describe(
    model: TraceModel,
    index: int,
    pid: Any,
    tid: Any,
    lane: int,
    kind: str,
    device: int | None,
    stream: int | None,
    is_gpu_process: bool,
) -> Track:
    pid_text, tid_text = str(pid), str(tid)
    thread_key = f"{pid_text}/{tid_text}"
    process_name = model.process_names.get(pid_text, "")
    process_label = _process_label(model, pid_text)
    process = " ".join(
        p for p in (process_label, process_name, f"({pid_text})" if pid_text else "") if p
    )
    thread_name = model.thread_names.get(thread_key, "").strip()
    if kind == "gpu":
        # "GPU 0 stream 7", "XPU 0 stream 3", "accelerator 2 stream 5" (devices.py)
        word = device_identity(model, device).kind_word if device is not None else "device"
        queue_or_stream = "HSA queue" if stream_ids_are_queues(model) else "stream"
        label = f"{word} {device if device is not None else pid_text} {queue_or_stream} "
        label += f"{stream if stream is not None else tid_text}"
        if thread_name and not thread_name.lower().startswith("stream"):
            label += f" ({thread_name})"
    else:
        label = thread_name or (
            f"thread {tid_text}" if lenient_int(tid) is not None else (tid_text or "(no thread)")
        )
        if lane == LANE_PYTHON:
            label += " · Python"
    pid_int = lenient_int(pid)
    tid_int = lenient_int(tid)
    default_process = (
        _GPU_PROCESS_SORT + (device if device is not None else (pid_int or 0))
        if is_gpu_process
        else (pid_int if pid_int is not None else _LAST)
    )
    process_sort = model.process_sort.get(pid_text, default_process)
    thread_sort = model.thread_sort.get(thread_key, tid_int if tid_int is not None else _LAST)
    sort_key = (
        process_sort,
        pid_int if pid_int is not None else _LAST,
        pid_text,
        thread_sort,
        tid_text,
        0 if lane == LANE_PYTHON else 1,  # the Python frames above the operators they call
    )
    return Track(index, pid, tid, lane, kind, label, process, device, stream, sort_key)
