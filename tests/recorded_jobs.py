"""The recorded what-if experiments (tests/data/whatif_gloo, whatif_shapes, gpu_streams,
gpu_training): a job's folder holds a subfolder per run (the baseline and each change
really made) and `measured.json`, the recording script's knobs, changes and wall-clock
steps."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext


def measured_file(job: Path) -> dict[str, Any]:
    return json.loads((job / "measured.json").read_text())


def job_context(job: Path, run: str, params: dict[str, Any] | None = None) -> RunContext:
    """One run of the job's folder, as the run-level views take it."""
    found = {r.name: r for r in scan_logdir(str(job))}
    return RunContext((found[run],), None, params or {})


def predicted_median(view: Any) -> float:
    """A what-if's median step, the number the experiments hold against the measured one."""
    return statistics.median(s["predicted_us"] for s in view["steps"])
