"""Builders for small Kineto traces with known answers."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinetoscope.ingest.build import build_model
from kinetoscope.model.trace_model import TraceModel

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

    def python(
        self,
        name: str,
        ts: float,
        dur: float,
        tid: int = CPU_TID,
        args: dict[str, Any] | None = None,
    ) -> None:
        """A `python_function` frame (`with_stack=True`); `nn.Module: Name_i` for a module;
        `args` as written (`{"Python id": 2, "Python parent id": 1}`)."""
        self.events.append(
            {
                "ph": "X",
                "cat": "python_function",
                "name": name,
                "pid": CPU_PID,
                "tid": tid,
                "ts": ts,
                "dur": dur,
                "args": dict(args or {}),
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
        tid: int = CPU_TID,
        **gpu_args: Any,
    ) -> int:
        """A runtime call on the CPU (thread `tid`) and the GPU activity it launched."""
        corr = self.runtime(runtime, ts, dur, tid=tid, **{"External id": external_id})
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

    def runtime(
        self, name: str, ts: float, dur: float = 1.0, tid: int = CPU_TID, **args: Any
    ) -> int:
        """A runtime call alone (a graph launch, a captured launch); its correlation id."""
        corr = self.new_id()
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": name,
                "pid": CPU_PID,
                "tid": tid,
                "ts": ts,
                "dur": dur,
                "args": {**args, "correlation": corr},
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


def collective_rank(
    rank: int, world: int, steps: int = 4, kernels_per_step: int = 50
) -> TraceBuilder:
    """One rank of a `world`-rank NCCL job: per step, `kernels_per_step` matmuls launched
    by `aten::mm`, then one all_reduce (`record_param_comms` with its Seq) whose kernel
    overlaps nothing. Every rank records the same times; `distributedInfo` says the rank."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}
    step_us = 10.0 * kernels_per_step + 200
    for step in range(steps):
        start = step * step_us
        t.step(step + 1, start, step_us)
        for k in range(kernels_per_step):
            at = start + 10 * k
            mm = t.op("aten::mm", at, 5, **{"Input Dims": [[64, 64], [64, 64]]})
            t.launch(at + 1, 2, mm, gpu_ts=at + 3, gpu_dur=6, name="volta_sgemm_128x64_nn")
        at = start + 10 * kernels_per_step
        comm = t.op(
            "record_param_comms",
            at,
            20,
            **{"Collective name": "allreduce", "In msg nelems": 4096, "Out msg nelems": 4096},
            **{"dtype": "Float"},
            **{"Group size": world, "Process Group Name": "0", "Seq": step},
        )
        t.launch(
            at + 2,
            3,
            comm,
            gpu_ts=at + 10,
            gpu_dur=150,
            name="ncclKernel_AllReduce_RING_LL_Sum_float",
            stream=20,
        )
    return t


def rank_job(folder: Path, ranks: int, **shape: int) -> Path:
    """A run folder of `ranks` traces `rank{r}.pt.trace.json`, the same events relabelled
    per rank (`distributedInfo.rank` and the file name): a many-rank job for little time."""
    folder.mkdir(parents=True, exist_ok=True)
    trace = collective_rank(0, ranks, **shape)
    for rank in range(ranks):
        trace.header["distributedInfo"]["rank"] = rank
        trace.write(folder / f"rank{rank}.pt.trace.json")
    return folder


# A job of which each rank's file holds a different subset of the calls (sampled or
# filtered ranks, 2022-style args: `nccl:*` ops with `Input Dims`, no `Seq`). Per call: its
# type, elements (float), end, and per rank its start (absent: not in that rank's file).
# Every rank ends a call at its end (+2 µs on odd ranks: the last ring step).
SAMPLED_CALLS: list[tuple[str, int, float, dict[int, float]]] = [
    ("all_reduce", 1000, 1000.0, {0: 500.0, 2: 700.0}),
    ("all_reduce", 2000, 2000.0, {0: 1500.0, 1: 1200.0}),
    ("all_reduce", 1000, 3000.0, {0: 2600.0, 2: 2500.0}),
    ("all_reduce", 3000, 4000.0, {0: 3100.0, 1: 3600.0}),
    ("all_reduce", 2000, 5000.0, {0: 4500.0, 1: 4400.0, 2: 4700.0}),
    ("all_reduce", 500, 6000.0, {1: 5900.0}),
    ("all_gather", 4096, 7000.0, {0: 6500.0, 1: 6800.0, 2: 6600.0}),
]
SAMPLED_WORLD = 8
NCCL_KERNELS = {
    "broadcast": "ncclKernel_Broadcast_RING_LL_Sum_float",
    "all_reduce": "ncclKernel_AllReduce_RING_LL_Sum_float",
    "all_gather": "ncclKernel_AllGather_RING_LL_Sum_float",
}


Call = tuple[str, int, float, dict[int, float]]


def sampled_rank(
    rank: int,
    calls: list[Call] | None = None,
    world: int = SAMPLED_WORLD,
    ends: dict[tuple[int, int], float] | None = None,
    steps: list[tuple[int, float, float]] | None = None,
) -> TraceBuilder:
    """One rank of `calls` (SAMPLED_CALLS): one step holding its calls, or `steps` (number,
    start, duration), each an `nccl:*` op (an all_gather inside `c10d::_allgather_base_`
    of (output, input) = (8 x n, n) elements) launching its kernel. `ends[(call index,
    rank)]` overrides a call's end on one rank (a broadcast's root that leaves early)."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}
    for number, start, duration in steps or [
        (1, 0.0, 1000.0 + max(c[2] for c in calls or SAMPLED_CALLS))
    ]:
        t.step(number, start, duration)
    for index, (kind, nelems, end, starts) in enumerate(calls or SAMPLED_CALLS):
        if rank not in starts:
            continue
        end = (ends or {}).get((index, rank), end + 2.0 * (rank % 2))
        at = starts[rank] - 50
        if kind == "all_gather":
            dims = [[SAMPLED_WORLD * nelems], [nelems]]
            t.op("c10d::_allgather_base_", at - 5, 30, **{"Input Dims": dims})
        name = "nccl:_all_gather_base" if kind == "all_gather" else f"nccl:{kind}"
        op = t.op(name, at, 20, **{"Input Dims": [[nelems]], "Input type": ["float"]})
        t.launch(
            at + 5,
            3,
            op,
            gpu_ts=starts[rank],
            gpu_dur=end - starts[rank],
            name=NCCL_KERNELS[kind],
            stream=20,
        )
    return t


def sampled_job(folder: Path) -> Path:
    """SAMPLED_CALLS as a run folder of three rank files."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in range(3):
        sampled_rank(rank).write(folder / f"rank{rank}.pt.trace.json")
    return folder
