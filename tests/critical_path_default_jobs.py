"""Built traces in the shapes the profiler's default settings record, each also with the
`cuda_sync` events a full recording adds, with answers worked out by hand (µs; the ranks
share `baseTimeNanoseconds`). The default shape names a cross-stream wait only as a
`cudaEventRecord` then a `cudaStreamWaitEvent` call; the autograd backward thread's handoff
is never recorded."""

from __future__ import annotations

from pathlib import Path

from builders import TraceBuilder
from critical_path_jobs import ALLREDUCE, BASE_NS, COMM_ARGS

SEND_RECV = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"


def _header(t: TraceBuilder, rank: int, world: int) -> None:
    t.header["baseTimeNanoseconds"] = BASE_NS
    t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}


def wait_between_streams(
    t: TraceBuilder,
    record_at: float,
    wait_at: float,
    recorded_stream: int,
    waiting_stream: int,
    gpu_at: float,
    sync_events: bool,
) -> None:
    """A cudaEventRecord of `recorded_stream`, then a cudaStreamWaitEvent of
    `waiting_stream`; with `sync_events`, the cuda_sync event that says so."""
    record = t.runtime("cudaEventRecord", record_at, 1.0)
    wait = t.runtime("cudaStreamWaitEvent", wait_at, 1.0)
    if not sync_events:
        return
    t.events.append(
        {
            "ph": "X",
            "cat": "cuda_sync",
            "name": "Stream Wait Event",
            "pid": 0,
            "tid": waiting_stream,
            "ts": gpu_at,
            "dur": 0.0,
            "args": {
                "cuda_sync_kind": "Stream Wait Event",
                "wait_on_stream": recorded_stream,
                "wait_on_cuda_event_record_corr_id": record,
                "correlation": wait,
                "stream": waiting_stream,
                "device": 0,
            },
        }
    )


# --- 1. a DDP step: the all_reduce's stream waits for the GEMM, the copy for the all_reduce

DDP_GEMM_US = (300.0, 900.0)  # rank 1's is longer: rank 0 waits in the all_reduce
DDP_TRANSFER_US = 100.0


def ddp_job(folder: Path, sync_events: bool) -> Path:
    """Two ranks, one step [0, 100] of host time. Stream 7: `gemm` [20, 20+G_r]. Stream 20
    waits for it (a record at 14, the wait at 16, the all_reduce launched at 18) and runs
    the all_reduce from the GEMM's end to the last arrival + DDP_TRANSFER_US: [20+G_r,
    1020] on both. Stream 7 then waits for the all_reduce (a record at 24, right after its
    launch; the wait at 26, as DDP's bucket copies wait for their all_reduce) and runs
    `grad_copy` [1022, 1042] (2 µs after: the wait's latency) and `sgd_update` [1042,
    1092]. The step is 1092 µs.

    - gemm x0.5 on rank 1: it arrives at 470, the all_reduce ends 570, the copy runs
      [572, 592], the update [592, 642]: 642;
    - gemm x0.5 on rank 0: it waits anyway: 1092;
    - collective all_reduce x0.5: the transfer 100 -> 50: 1042;
    - kernel sgd_update x2: 1142."""
    folder.mkdir(parents=True, exist_ok=True)
    end = 20 + max(DDP_GEMM_US) + DDP_TRANSFER_US
    for rank in (0, 1):
        t = TraceBuilder()
        _header(t, rank, 2)
        t.step(1, 0.0, 100.0)
        gemm_end = 20 + DDP_GEMM_US[rank]
        mm = t.op("aten::mm", 9, 5)
        t.launch(10, 2, mm, gpu_ts=20, gpu_dur=DDP_GEMM_US[rank], name="gemm")
        wait_between_streams(t, 14, 16, 7, 20, gemm_end, sync_events)
        comm = t.op("record_param_comms", 17, 6, **COMM_ARGS, Seq=0)
        t.launch(18, 2, comm, gpu_ts=gemm_end, gpu_dur=end - gemm_end, name=ALLREDUCE, stream=20)
        wait_between_streams(t, 24, 26, 20, 7, end + 2, sync_events)
        copy = t.op("aten::copy_", 27, 5)
        t.launch(28, 2, copy, gpu_ts=end + 2, gpu_dur=20, name="grad_copy")
        add = t.op("aten::add_", 35, 5)
        t.launch(36, 2, add, gpu_ts=end + 22, gpu_dur=50, name="sgd_update")
        t.write(folder / f"rank{rank}.pt.trace.json")
    return folder


# --- 2. a kernel that waits for a point-to-point transfer recorded long before -------------


def send_recv_trace(sync_events: bool) -> TraceBuilder:
    """One rank, one step [0, 300]. Stream 20: the SendRecv [20, 4920], recorded at 12 just
    after its launch. Stream 7: `embed` [30, 130]; the wait call at 200 (long after the
    record: a DLRM's all-to-all output is waited for when it is needed); `mlp` launched at
    210 starts 2 µs after the SendRecv ends: [4922, 5022]. The step is 5022 µs.

    - kernel SendRecv x0.5: it ends 2470, mlp [2472, 2572]: 2572;
    - kernel embed x0.5: 5022 (no change)."""
    t = TraceBuilder()
    _header(t, 0, 2)
    t.step(1, 0.0, 300.0)
    comm = t.op("record_param_comms", 9, 5, **{**COMM_ARGS, "Collective name": "send"}, Seq=0)
    t.launch(10, 2, comm, gpu_ts=20, gpu_dur=4900, name=SEND_RECV, stream=20)
    embed = t.op("aten::embedding", 25, 8)
    t.launch(26, 2, embed, gpu_ts=30, gpu_dur=100, name="embed")
    wait_between_streams(t, 12, 200, 20, 7, 4922, sync_events)
    mm = t.op("aten::addmm", 205, 10)
    t.launch(210, 2, mm, gpu_ts=4922, gpu_dur=100, name="mlp")
    return t


# --- 3. the autograd backward thread --------------------------------------------------------

TRAIN_TID, BACKWARD_TID = 100, 200
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def backward_thread_trace() -> TraceBuilder:
    """One rank, one step [0, 3500], host-bound. The training thread: the DataLoader [10,
    1010], `aten::linear` [1020, 1120] (its kernel [1030, 1050]), `aten::ones_like` [1130,
    1150] (backward's seed), then idle until `Optimizer.step#SGD.step` [2900, 3400]. The
    backward thread: `LinearBackward0` [1800, 2300] (its kernel [1810, 1840]): it starts
    650 µs after the seed and the training thread goes on 600 µs after it ends (the
    engine's wake-ups, slower than a fixed 500 µs window allows). The step is 3500 µs.

    - the DataLoader x0.5: everything after it 500 µs earlier: 3000;
    - LinearBackward0 x0.5: backward ends 2050, the optimizer [2650, 3150]: 3250;
    - aten::linear x0.5: 3450."""
    t = TraceBuilder()
    t.header["baseTimeNanoseconds"] = BASE_NS
    t.step(1, 0.0, 3500.0)
    t.op(DATALOADER, 10, 1000)
    linear = t.op("aten::linear", 1020, 100)
    t.launch(1022, 5, linear, gpu_ts=1030, gpu_dur=20, name="fwd_gemm")
    t.op("aten::ones_like", 1130, 20)
    backward = t.op("LinearBackward0", 1800, 500, tid=BACKWARD_TID, **{"Sequence number": 7})
    t.launch(1802, 5, backward, gpu_ts=1810, gpu_dur=30, name="bwd_gemm", tid=BACKWARD_TID)
    t.op("Optimizer.step#SGD.step", 2900, 500)
    return t
