"""Built traces for the critical path and what-if tests, each with answers worked out by
hand in its doc (µs, on one clock: the ranks share `baseTimeNanoseconds`).

Every GPU step is device-bound unless said: the host launches everything within the step's
first 100 µs (its ProfilerStep range), and the step ends with its last GPU activity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from kinetoscope.analysis.distributed import rank_summaries
from kinetoscope.store import pools
from synthetic_job import Layout, write_traces

BASE_NS = 1_700_000_000_000_000_000
STEP_GAP = 1000.0  # steps start this far apart
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
COMM_ARGS = {
    "Collective name": "allreduce",
    "In msg nelems": 4096,
    "Out msg nelems": 4096,
    "dtype": "Float",
    "Group size": 2,
    "Process Group Name": "0",
}


def group_job(folder: Path) -> Path:
    """16 ranks (TP 2, PP 2, DP 4), 3 steps, one slow rank and one slow TP group: each
    step's path crosses ranks at the groups' collectives."""
    return write_traces(Layout(2, 2, 4, steps=3, slow_ranks={5}, slow_groups={"2"}), folder)


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The traces a run's summaries read from now on: in threads, where they can be
    counted (a process pool's workers would read where this list is not)."""
    monkeypatch.setattr(pools, "PROCESS_POOL_MIN_RANKS", 1 << 20)
    monkeypatch.setattr(rank_summaries, "PROCESS_POOL_MIN_RANKS", 1 << 20)
    read: list[str] = []
    reader = rank_summaries._model_of
    monkeypatch.setattr(rank_summaries, "_model_of", lambda p, *a: read.append(p) or reader(p, *a))
    return read


def _rank_header(t: TraceBuilder, rank: int, world: int) -> None:
    t.header["baseTimeNanoseconds"] = BASE_NS
    t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}


# --- 1. a kernel on the critical path of one rank only ------------------------------------

GEMM = "gemm_big"
GEMM_US = (600.0, 200.0)  # rank 0's is longer: rank 1 waits in the all_reduce
TRANSFER_US = 100.0
POST_US = 50.0
ONE_RANK_STEPS = 3


def one_rank_job(folder: Path, steps: bool = True, rank_header: bool = True) -> Path:
    """Two ranks, three steps. Per step at t0 = n*STEP_GAP, on each rank, one stream:
    `gemm_big` [t0+20, t0+20+G_r], the all_reduce from there to the last arrival +
    TRANSFER_US, then `post` (POST_US). Rank 0 arrives at t0+620, rank 1 at t0+220: the
    all_reduce ends at t0+720 on both, `post` at t0+770: every step is 770 µs.

    - gemm_big x0.5 (both ranks): arrivals 320 and 120, end 420, step 470 (saves 300);
    - gemm_big x0.5 on rank 1 only: it was waiting anyway: 770 (no change);
    - gemm_big x0.25 on rank 0 only: 170 < 220: rank 1 is now last: end 320, step 370;
    - collective all_reduce x0.5: the transfer 100 -> 50: step 720.
    The critical path of a step: rank 0's gemm (600), the transfer (100) and `post` (50)
    on either rank (both end together), and the 20 µs launch delay before the gemm.
    `steps=False`: no step recorded (the views take the whole trace as one step);
    `rank_header=False`: no `distributedInfo` (ranks from the file names only)."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        t = TraceBuilder()
        if rank_header:
            _rank_header(t, rank, 2)
        for n in range(ONE_RANK_STEPS):
            t0 = n * STEP_GAP
            if steps:
                t.step(n + 1, t0, 100.0)
            mm = t.op("aten::mm", t0 + 10, 20)
            t.launch(t0 + 12, 5, mm, gpu_ts=t0 + 20, gpu_dur=GEMM_US[rank], name=GEMM)
            comm = t.op("record_param_comms", t0 + 40, 20, **COMM_ARGS, Seq=n)
            arrive = t0 + 20 + GEMM_US[rank]
            end = t0 + 20 + max(GEMM_US) + TRANSFER_US
            t.launch(t0 + 42, 5, comm, gpu_ts=arrive, gpu_dur=end - arrive, name=ALLREDUCE)
            add = t.op("aten::add", t0 + 60, 10)
            t.launch(t0 + 62, 5, add, gpu_ts=end, gpu_dur=POST_US, name="post")
        t.write(folder / f"rank{rank}.pt.trace.json")
    return folder


# --- 2. a collective that hides a kernel ------------------------------------------------------

K1_US = 200.0
HIDDEN_US = 300.0
HIDE_TRANSFER_US = 400.0


def _stream_wait(t: TraceBuilder, record_at: float, wait_at: float, gpu_at: float) -> None:
    """cudaEventRecord on stream 7, cudaStreamWaitEvent of stream 20, and the cuda_sync
    event that says stream 20 waited for stream 7's work up to the record."""
    record = t.runtime("cudaEventRecord", record_at, 1.0)
    wait = t.runtime("cudaStreamWaitEvent", wait_at, 1.0)
    t.events.append(
        {
            "ph": "X",
            "cat": "cuda_sync",
            "name": "Stream Wait Event",
            "pid": 0,
            "tid": 20,
            "ts": gpu_at,
            "dur": 0.0,
            "args": {
                "cuda_sync_kind": "Stream Wait Event",
                "wait_on_stream": 7,
                "wait_on_cuda_event_record_corr_id": record,
                "correlation": wait,
                "stream": 20,
                "device": 0,
            },
        }
    )


def hidden_job(folder: Path, record_waits: bool = True) -> Path:
    """Two identical ranks, one step. Stream 7: `k1` [20, 220]. Stream 20 waits for it
    (a recorded cudaStreamWaitEvent, unless `record_waits` is False) and runs the
    all_reduce [220, 620] (both ranks arrive together: all transfer). Stream 8: `hidden`
    [60, 360], under the all_reduce. The step is 620 µs.

    - hidden x0.5: still under the all_reduce: 620 (no change);
    - hidden x2: [60, 660]: it now sets the end: 660;
    - k1 x0.5: the all_reduce runs [120, 520], hidden ends 360: 520;
    - collective all_reduce x0.5: the transfer 400 -> 200: ends 420, hidden 360: 420.
    Without the recorded wait, the all_reduce's dependency on `k1` is unknown: it keeps
    its recorded delay after its launch, so k1 x0.5 predicts no change (and says so)."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        t = TraceBuilder()
        _rank_header(t, rank, 2)
        t.step(1, 0.0, 100.0)
        mm = t.op("aten::mm", 10, 10)
        t.launch(12, 5, mm, gpu_ts=20, gpu_dur=K1_US, name="k1")
        if record_waits:
            _stream_wait(t, 18, 30, 220)
        else:
            t.runtime("cudaEventRecord", 18, 1.0)
            t.runtime("cudaStreamWaitEvent", 30, 1.0)
        comm = t.op("record_param_comms", 35, 10, **COMM_ARGS, Seq=0)
        end = 220 + HIDE_TRANSFER_US
        t.launch(37, 5, comm, gpu_ts=220, gpu_dur=end - 220, name=ALLREDUCE, stream=20)
        other = t.op("aten::mul", 50, 10)
        t.launch(52, 5, other, gpu_ts=60, gpu_dur=HIDDEN_US, name="hidden", stream=8)
        t.write(folder / f"rank{rank}.pt.trace.json")
    return folder


# --- 3. a host-bound step ---------------------------------------------------------------------


def host_bound_trace() -> TraceBuilder:
    """One rank, two steps of 1,000 µs at 0 and 1,000. Each: the DataLoader's `__next__`
    [+0, +300], `aten::conv2d` [+310, +710] (launching a 10 µs kernel at +320), then the
    host waits in `cudaStreamSynchronize` [+720, +760] for the 20 µs `reduce` kernel it
    launched at +712 (which runs [+730, +750]: it returned 10 µs after), then
    `aten::item` [+770, +1000]. The step is the host's: 1,000 µs.

    - aten::conv2d x0.5: 200 less on the host: 800 (the kernels follow their launches);
    - the DataLoader's op x0: 700;
    - kernel `reduce` x3 ([+730, +790]): the sync returns at +800: 1,040;
    - kernel `conv_kernel` x0.5: 1,000 (no change)."""
    t = TraceBuilder()
    t.header["baseTimeNanoseconds"] = BASE_NS
    for n in range(2):
        t0 = n * STEP_GAP
        t.step(n + 1, t0, STEP_GAP)
        t.op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0, 300)
        conv = t.op("aten::conv2d", t0 + 310, 400)
        t.launch(t0 + 320, 5, conv, gpu_ts=t0 + 330, gpu_dur=10, name="conv_kernel")
        red = t.op("aten::sum", t0 + 711, 3)
        t.launch(t0 + 712, 1, red, gpu_ts=t0 + 730, gpu_dur=20, name="reduce")
        t.runtime("cudaStreamSynchronize", t0 + 720, 40.0)
        t.op("aten::item", t0 + 770, 230)
    return t


# --- 4. a graph-replayed step -----------------------------------------------------------------

REPLAYED = [("graph_k1", 100.0), ("graph_k2", 200.0), ("graph_k3", 100.0)]


def graph_trace() -> TraceBuilder:
    """One rank: a capture of three kernels (ops `aten::linear`, `aten::gelu`,
    `aten::linear`, matched by `graph node id`) in [0, 80], then one step at 200 whose
    host launches the graph at 220 (`cudaGraphLaunch`, one correlation id for all
    kernels), and the kernels run back to back from 230: [230, 330], [330, 530],
    [530, 630]. The step is 430 µs.

    - kernel graph_k2 x0.5: 330;
    - op aten::gelu x0.5 (its captured kernel graph_k2): 330;
    - op aten::linear x0.5 (graph_k1 and graph_k3): 330."""
    t = TraceBuilder()
    t.header["baseTimeNanoseconds"] = BASE_NS
    t.runtime("cudaStreamBeginCapture", 0, 1.0)
    for i, op in enumerate(["aten::linear", "aten::gelu", "aten::linear"]):
        ext = t.op(op, 10 + 20 * i, 8)
        t.runtime("cudaLaunchKernel", 12 + 20 * i, 2.0, **{"External id": ext}, **_node(i))
    t.runtime("cudaStreamEndCapture", 80, 1.0)
    t.step(1, 200.0, 50.0)
    corr = t.runtime("cudaGraphLaunch", 220, 5.0)
    at = 230.0
    for i, (name, dur) in enumerate(REPLAYED):
        t.events.append(_replayed_kernel(name, at, dur, corr, i))
        at += dur
    return t


def _node(i: int) -> dict[str, Any]:
    return {"graph node id": 100 + i}


def _replayed_kernel(name: str, ts: float, dur: float, corr: int, i: int) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": dur,
        "args": {"correlation": corr, "device": 0, "stream": 7, **_node(i)},
    }
