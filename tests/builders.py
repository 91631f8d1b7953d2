"""Builders for small Kineto traces with known answers."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinetoscope.ingest.build import build_model
from kinetoscope.store.model import TraceModel

CPU_PID, CPU_TID = 100, 100
GPU_PID = 0


@dataclass
class TraceBuilder:
    """Adds events with the 2.x category names; `write` makes a trace file."""

    events: list[dict[str, Any]] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=lambda: {"schemaVersion": 1})
    _next_id: int = 1

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def op(
        self, name: str, ts: float, dur: float, tid: int = CPU_TID, cat: str = "cpu_op", **args: Any
    ) -> int:
        ext = args.pop("external_id", None) or self.new_id()
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": CPU_PID,
                "tid": tid,
                "ts": ts,
                "dur": dur,
                "args": {"External id": ext, **args},
            }
        )
        return ext

    def step(self, number: int, ts: float, dur: float) -> int:
        return self.op(f"ProfilerStep#{number}", ts, dur, cat="user_annotation")

    def annotation(self, name: str, ts: float, dur: float, tid: int = CPU_TID) -> int:
        return self.op(name, ts, dur, tid=tid, cat="user_annotation")

    def python(self, name: str, ts: float, dur: float, tid: int = CPU_TID) -> None:
        """A `python_function` frame (`with_stack=True`); `nn.Module: Name_i` for a module."""
        self.events.append(
            {
                "ph": "X",
                "cat": "python_function",
                "name": name,
                "pid": CPU_PID,
                "tid": tid,
                "ts": ts,
                "dur": dur,
                "args": {},
            }
        )

    def launch(
        self,
        ts: float,
        dur: float,
        external_id: int,
        kind: str = "kernel",
        gpu_ts: float = 0.0,
        gpu_dur: float = 0.0,
        name: str = "k",
        device: int = 0,
        stream: int = 7,
        runtime: str = "cudaLaunchKernel",
        **gpu_args: Any,
    ) -> int:
        """A runtime call on the CPU and the GPU activity it launched."""
        corr = self.new_id()
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": runtime,
                "pid": CPU_PID,
                "tid": CPU_TID,
                "ts": ts,
                "dur": dur,
                "args": {"External id": external_id, "correlation": corr},
            }
        )
        self.events.append(
            {
                "ph": "X",
                "cat": kind,
                "name": name,
                "pid": GPU_PID + device,
                "tid": stream,
                "ts": gpu_ts,
                "dur": gpu_dur,
                "args": {
                    "External id": external_id,
                    "correlation": corr,
                    "device": device,
                    "stream": stream,
                    **gpu_args,
                },
            }
        )
        return corr

    def memory(
        self,
        ts: float,
        nbytes: int,
        addr: int,
        total_allocated: int,
        total_reserved: int = 0,
        device_type: int = 1,
        device_id: int = 0,
        tid: int = CPU_TID,
    ) -> None:
        self.events.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": CPU_PID,
                "tid": tid,
                "ts": ts,
                "args": {
                    "Bytes": nbytes,
                    "Addr": addr,
                    "Device Type": device_type,
                    "Device Id": device_id,
                    "Total Allocated": total_allocated,
                    "Total Reserved": total_reserved,
                },
            }
        )

    def write(self, path: Path, gz: bool = False) -> Path:
        doc = dict(self.header)
        doc["traceEvents"] = self.events
        data = json.dumps(doc).encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        return path

    def model(self, tmp_path: Path, name: str = "w.pt.trace.json") -> TraceModel:
        return build_model(str(self.write(tmp_path / name)))
