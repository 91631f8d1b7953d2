"""Builders for CUDA caching allocator snapshots with known answers, in the layout
`torch.cuda.memory._snapshot()` documents (`Segment` of `Block`s, `device_traces` of
`TraceEntry`s, frames as {filename, line, name})."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

T0_US = 1_700_000_000_000_000  # epoch microseconds, as torch records `time_us`


def frame(name: str, filename: str, line: int, **fx: str) -> dict[str, Any]:
    return {"name": name, "filename": filename, "line": line, **fx}


@dataclass
class SnapshotBuilder:
    segments: list[dict[str, Any]] = field(default_factory=list)
    traces: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def segment(
        self,
        device: int,
        address: int,
        total_size: int,
        blocks: list[dict[str, Any]],
        stream: int = 0,
    ) -> None:
        """`blocks`: from `block()`; the segment's totals are summed from them."""
        active = [b for b in blocks if b["state"] != "inactive"]
        self.segments.append(
            {
                "device": device,
                "address": address,
                "total_size": total_size,
                "allocated_size": sum(
                    b["size"] for b in blocks if b["state"] == "active_allocated"
                ),
                "active_size": sum(b["size"] for b in active),
                "requested_size": sum(b["requested_size"] for b in active),
                "stream": stream,
                "segment_type": "large",
                "segment_pool_id": (0, 0),
                "is_expandable": False,
                "frames": [],
                "blocks": blocks,
            }
        )

    @staticmethod
    def block(
        address: int,
        size: int,
        state: str = "active_allocated",
        frames: list[dict[str, Any]] | None = None,
        requested: int | None = None,
    ) -> dict[str, Any]:
        return {
            "address": address,
            "size": size,
            "requested_size": size if requested is None else requested,
            "state": state,
            "frames": frames or [],
        }

    def entry(
        self,
        device: int,
        action: str,
        addr: int,
        size: int,
        t_us: int,
        stream: int = 0,
        frames: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> None:
        self.traces.setdefault(device, []).append(
            {
                "action": action,
                "addr": addr,
                "size": size,
                "stream": stream,
                "time_us": T0_US + t_us,
                "compile_context": "N/A",
                "user_metadata": "",
                "frames": frames or [],
                **extra,
            }
        )

    def free(self, device: int, addr: int, size: int, t_us: int, **kw: Any) -> None:
        """`free_requested` then `free_completed` at the same time, as torch records a
        free with no other stream using the block."""
        self.entry(device, "free_requested", addr, size, t_us, **kw)
        self.entry(device, "free_completed", addr, size, t_us, **kw)

    def snapshot(self) -> dict[str, Any]:
        count = max(self.traces, default=-1) + 1
        return {
            "segments": self.segments,
            "device_traces": [self.traces.get(d, []) for d in range(count)],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""},
            "external_annotations": [],
        }

    def write(self, path: Path, protocol: int = 5) -> Path:
        path.write_bytes(pickle.dumps(self.snapshot(), protocol=protocol))
        return path


# The stacks of `known_snapshot` (innermost frame first).
TRAIN = frame("train", "train.py", 1)
FORWARD = frame("forward", "model.py", 5)
S1 = [
    frame("alloc_c", "model.py", 10, fx_node_op="call_function", fx_node_name="mm_1"),
    FORWARD,
    TRAIN,
]
S2 = [frame("alloc_d", "model.py", 20), TRAIN]
S3 = [frame("alloc_f", "data.py", 3)]


def known_snapshot() -> SnapshotBuilder:
    """Device 0 with a history; device 1 with segments only. Levels (bytes asked for):
    before the history A 100 + B 50 + H 32 = 182 (A and H alive at the end, never
    allocated in the history; B freed in it); t10 +C 200 = 382; t20 +D 300 = 682; t25 a
    1024-byte segment; t30 -B = 632; t40 +E 200 = 832 (the peak: A, H no stack 132;
    C + E stack S1 400; D stack S2 300); t50 D's free requested, t60 completed = 532;
    t70 an OOM asking 10**12 with 12345 free; t80 +F 64 on stream 7 = 596; t85 H's free
    requested, never completed. At the end: C's block is 256 (asked 200), so allocated
    100 + 256 + 200 + 64 = 620, active + H 32 = 652, reserved 8192 + 1024 = 9216."""
    b = SnapshotBuilder()
    b.entry(0, "alloc", 0x3000, 200, 10, frames=S1)
    b.entry(0, "alloc", 0x4000, 300, 20, frames=S2)
    b.entry(0, "segment_alloc", 0x9000, 1024, 25, stream=7, frames=S3)
    b.free(0, 0x2000, 50, 30, frames=S2)
    b.entry(0, "alloc", 0x5000, 200, 40, frames=S1)
    b.entry(0, "free_requested", 0x4000, 300, 50, frames=S2)
    b.entry(0, "free_completed", 0x4000, 300, 60, frames=S2)
    b.entry(0, "oom", 0, 10**12, 70, frames=S3, device_free=12345)
    b.entry(0, "alloc", 0x9000, 64, 80, stream=7, frames=S3)
    b.entry(0, "free_requested", 0x7000, 32, 85)
    blocks = [
        b.block(0x1000, 100),
        b.block(0x3000, 256, frames=S1, requested=200),
        b.block(0x5000, 200, frames=S1),
        b.block(0x7000, 32, state="active_pending_free"),
        b.block(0x8000, 1000, state="inactive"),
    ]
    b.segment(0, 0x1000, 8192, blocks)
    b.segment(
        0, 0x9000, 1024, [b.block(0x9000, 64, frames=S3), b.block(0x9040, 960, "inactive")], 7
    )
    b.segment(1, 0x20000, 2048, [b.block(0x20000, 512), b.block(0x20200, 1536, "inactive")])
    return b
