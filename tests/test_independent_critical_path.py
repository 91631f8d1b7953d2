"""The run-level critical path of the recorded 2-rank gloo job (tests/data/whatif_gloo)
against `tests/independent/critical_path.py`, which recomputes from the raw JSON who
arrived last at each all_reduce, each rank's transfer after that, and the job's steps:
the path's steps are the checker's, each step's compute on the path is the last-arriving
rank's, and each collective segment on the path is a transfer the checker finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from independent import critical_path as checker
from kinetoscope.analysis.critical_path.run import run_critical_path
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext

DATA = Path(__file__).parent / "data" / "whatif_gloo"


@pytest.mark.parametrize("variant", ["baseline", "compute_rank0_fifth", "update_double"])
def test_the_path_across_ranks_agrees_with_the_raw_json(variant: str) -> None:
    files = sorted((DATA / variant).glob("rank*.pt.trace.json.gz"))
    job = checker.read_job(files)
    run = next(r for r in scan_logdir(str(DATA)) if r.name == variant)
    path = run_critical_path(RunContext((run,), None, {}))
    assert [s["step"] for s in path["steps"]] == job.step_names
    assert [s["step_us"] for s in path["steps"]] == pytest.approx(job.step_us, abs=0.01)
    transfers = {round(c.transfer(r), 1) for c in job.calls for r in (0, 1)}
    for i, step in enumerate(path["steps"]):
        one = run_critical_path(RunContext((run,), None, {"step": step["step"]}))
        assert sum(s["dur_us"] for s in one["segments"]) == pytest.approx(step["step_us"], abs=0.05)
        # The compute on the path is that of the rank that arrived last at the step's call.
        call = next(
            c
            for c in job.calls
            if job.step_start[i] <= max(c.starts) < job.step_start[i] + job.step_us[i]
        )
        compute = {s["rank"] for s in one["segments"] if s["name"] == "whatif::compute"}
        assert compute == {call.last}, step["step"]
        for s in one["segments"][1:]:  # the first may be cut at the step's start
            if s["kind"] == "collective":
                assert round(s["dur_us"], 1) in transfers, s
