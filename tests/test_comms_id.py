"""Collectives matched by `Comms Id` (issue 71): PyTorch 2.12+ writes on each collective a
hash of its group, sequence number, point-to-point flag, rank start/stride and world
size; Kineto copies it as `Comms Id`. Where a job splits a communicator and the new one
reuses the group's name, its sequence numbers start again, so group + `Seq` pairs a call
with one of the old communicator's; `Comms Id` tells them apart. Traces without it keep
their answers (the expected-view tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from kinetoscope.analysis.distributed.matching import instances, match_instances
from kinetoscope.analysis.distributed.summary import summarize_rank

LATE_US = 50.0  # rank 1 enters every call this much after rank 0
STEP_US = 1000.0


def _rank(rank: int, with_ids: bool) -> TraceBuilder:
    """4 steps, one all_reduce each, group "0" in all of them: steps 1-2 on the first
    communicator (Seq 0, 1), steps 3-4 on a second that reuses the name (Seq 0, 1 again)."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    for step in range(4):
        start = step * STEP_US
        t.step(step + 1, start, STEP_US - 10)
        at = start + 100 + (LATE_US if rank == 1 else 0.0)
        args = {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024}
        args |= {"dtype": "Float", "Group size": 2, "Process Group Name": "0", "Seq": step % 2}
        if with_ids:
            args["Comms Id"] = 9_000_000_000_000_000_000 + 17 * (step // 2) + step % 2
        comm = t.op("record_param_comms", at, 20, **args)
        end = start + 400.0  # the call ends together on both ranks
        t.launch(
            at + 2,
            3,
            comm,
            gpu_ts=at + 10,
            gpu_dur=end - at - 10,
            name="ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            stream=20,
        )
    return t


def _matched(tmp_path: Path, with_ids: bool) -> tuple[np.ndarray, np.ndarray]:
    folder = tmp_path / ("ids" if with_ids else "plain")
    folder.mkdir()
    summaries = [
        summarize_rank(_rank(r, with_ids).model(folder, f"rank{r}.pt.trace.json")) for r in (0, 1)
    ]
    inst = instances(summaries)
    match_instances(inst)
    return np.bincount(inst.match)[inst.match], inst.wait


def test_a_reused_group_name_is_told_apart_by_comms_id(tmp_path: Path) -> None:
    members, wait = _matched(tmp_path, with_ids=True)
    assert members.tolist() == [2] * 8  # each call: one instance a rank
    assert sorted(wait.tolist()) == [0.0] * 4 + [LATE_US] * 4  # rank 0 waits for rank 1


def test_without_it_group_and_seq_pair_calls_of_two_communicators(tmp_path: Path) -> None:
    members, wait = _matched(tmp_path, with_ids=False)
    assert members.tolist() == [4] * 8  # what group + Seq can say: both communicators' calls
    assert wait.max() > LATE_US  # and a wait for a call of another step


@pytest.mark.parametrize("text", [True, False])
def test_comms_id_is_read_as_written(tmp_path: Path, text: bool) -> None:
    from kinetoscope.analysis.core.comms import extract

    t = _rank(0, with_ids=True)
    if text:
        for event in t.events:
            if "Comms Id" in event.get("args", {}):
                event["args"]["Comms Id"] = str(event["args"]["Comms Id"])
    ids = extract(t.model(tmp_path)).comms_id
    assert ids.tolist() == [9_000_000_000_000_000_000 + 17 * (s // 2) + s % 2 for s in range(4)]


def test_a_batched_p2p_kernel_without_record_param_comms_is_a_call(tmp_path: Path) -> None:
    """PyTorch's batched P2P (`batch_isend_irecv`) writes no `record_param_comms`
    (pytorch#194693): the kernel alone says it is a send/recv; its bytes and group are
    unknown (-1, ""), not zero, and the two ranks' kernels are one call (by end time)."""
    from kinetoscope.analysis.core.comms import extract

    summaries = []
    for rank in (0, 1):
        t = TraceBuilder()
        t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
        for step in range(3):
            start = step * STEP_US
            t.step(step + 1, start, STEP_US - 10)
            op = t.op("c10d::batch_isend_irecv", start + 200, 20)
            late = LATE_US if rank == 1 else 0.0
            name = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
            t.launch(
                start + 205,
                3,
                op,
                gpu_ts=start + 300 + late,
                gpu_dur=200 - late,
                name=name,
                stream=30,
            )
        model = t.model(tmp_path, f"rank{rank}.pt.trace.json")
        found = extract(model)
        assert found.kind == ["send_recv"] * 3 and found.pg == [""] * 3
        assert found.nbytes.tolist() == [-1.0] * 3 and found.seq.tolist() == [-1] * 3
        summaries.append(summarize_rank(model))
    inst = instances(summaries)
    match_instances(inst)
    assert np.bincount(inst.match).tolist() == [2, 2, 2]
    assert inst.wait.tolist() == [LATE_US] * 3 + [0.0] * 3
