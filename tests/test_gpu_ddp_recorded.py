"""The one-GPU DDP job over NCCL recorded on an H200 (tests/data/gpu_ddp, its README): with
one rank NCCL launches nothing, so c10d's 48 cross-stream waits hold nothing; they are
counted so (from the raw JSON: every GPU activity on one stream), with the sync events and
without them, and none is said to be a wait that could not be placed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from kinetoscope.analysis.critical_path.run import run_critical_path
from recorded_jobs import job_context

JOB = Path(__file__).parent / "data" / "gpu_ddp"
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


@pytest.mark.parametrize("run", ["sync", "default"])
def test_waits_on_a_stream_that_ran_no_work_hold_nothing(run: str) -> None:
    (trace,) = (JOB / run).glob("*.pt.trace.json.gz")
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    streams = {e["args"]["stream"] for e in events if e.get("cat") in GPU_CATS}
    waits = sum(e.get("name") == "cudaStreamWaitEvent" for e in events)
    assert len(streams) == 1 and waits == 48
    path = run_critical_path(job_context(JOB, run))
    said = " ".join(path["assumptions"])
    assert "48 cudaStreamWaitEvent calls without a cuda_sync event that names" in said
    assert "0 cross-stream waits inferred" in said
    assert "48 held nothing that shows" in said
    assert "could not be placed" not in said
    assert "6 bursts of the autograd backward thread linked" in said
