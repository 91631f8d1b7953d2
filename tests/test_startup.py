"""A cold `kinetoscope report` of one small trace pays for what it uses only: the process
pools' multiprocessing, the sockets of Dask and of the handler's worker names, and the
modules of routes a report never answers are not imported, its records are made without
a dataclass's class-creation cost, and the process's fast exit (past the interpreter's
teardown) still writes all of its output and its exit status."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from corpus import corpus_path

BERT = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"

IMPORTED = """
import contextlib, io, sys
from kinetoscope.__main__ import main
with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())):
    code = main(["report", sys.argv[1], "--format", "json", "--no-cache"])
unused = (
    "multiprocessing",
    "concurrent.futures.process",
    "socket",
    # what only other routes and the server read: their types, the file route's download,
    # and the package data's reader (`importlib.resources`, zipfile) where a path does
    "kinetoscope.analysis.diff.types",
    "kinetoscope.analysis.trends.types",
    "kinetoscope.api.downloads",
    "importlib.resources",
    "zipfile",
    # OpenSSL's hashes, whose load is ~3 ms: the cache's key is the builtin blake2b
    "_hashlib",
)
print(code, *[name for name in unused if name in sys.modules])
"""


DATACLASSES = """
import contextlib, dataclasses, io, sys
made = []
create = dataclasses._process_class
def recorded(cls, *args, **kwargs):
    made.append(cls.__qualname__)
    return create(cls, *args, **kwargs)
dataclasses._process_class = recorded
from kinetoscope.__main__ import main
with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())):
    code = main(["report", sys.argv[1], "--format", "json", "--no-cache"])
print(code, *sorted(made))
"""

# A dataclass costs ~0.5 ms to create (its methods compiled from text), a msgspec Struct
# ~0.01 ms: a report's ~60 records as dataclasses were ~35 ms of a small trace's report.
# These two stay dataclasses: the model's own dict holds its derived tables, and the
# trace view packs the host ranges by their fields.
DATACLASSES_KEPT = ["HostRanges", "TraceModel"]


def _logdir(tmp_path: Path) -> Path:
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    shutil.copy(corpus_path(BERT), run / "worker0.1.pt.trace.json.gz")
    return tmp_path / "logs"


def test_a_report_of_one_trace_imports_no_process_pool_nor_sockets(tmp_path: Path) -> None:
    logdir = _logdir(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTED, str(logdir)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["0"]  # exit status 0 and none of the modules imported


def test_a_report_creates_no_dataclass_beyond_the_model(tmp_path: Path) -> None:
    logdir = _logdir(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", DATACLASSES, str(logdir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["0", *DATACLASSES_KEPT]


def test_the_fast_exit_writes_the_whole_report_and_its_status(tmp_path: Path) -> None:
    logdir = _logdir(tmp_path)
    command = [sys.executable, "-m", "kinetoscope", "report"]
    proc = subprocess.run(
        [*command, str(logdir), "--format", "json", "--no-cache"], capture_output=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)  # all of it: the whole document decodes
    assert report["status"]["state"] == "ready"
    assert report["overview"]["step_count"] > 0
    missing = subprocess.run(
        [*command, str(tmp_path / "nothing here")], capture_output=True, text=True, timeout=300
    )
    assert missing.returncode != 0
    assert "kinetoscope" in missing.stderr and not missing.stdout


def test_the_fast_exit_of_a_run_summarised_in_worker_processes_ends(tmp_path: Path) -> None:
    """From PROCESS_POOL_MIN_RANKS ranks the summaries are computed in a process pool;
    its idle workers must not keep the finished report from exiting."""
    from builders import rank_job
    from kinetoscope.store.pools import PROCESS_POOL_MIN_RANKS

    rank_job(tmp_path / "logs" / "job", PROCESS_POOL_MIN_RANKS, steps=1, kernels_per_step=2)
    command = [sys.executable, "-m", "kinetoscope", "report", str(tmp_path / "logs")]
    proc = subprocess.run(
        [*command, "--view", "distributed", "--format", "json", "--no-cache"],
        capture_output=True,
        timeout=120,  # it hung for ever before
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(json.loads(proc.stdout)["distributed"]["ranks"]) == PROCESS_POOL_MIN_RANKS


VIEW_MODULES = """
import contextlib, io, sys
from kinetoscope.__main__ import main
with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())):
    code = main(["report", sys.argv[1], "--format", "json"])
views = ("overview", "operators", "serving")
print(code, *[v for v in views if f"kinetoscope.analysis.{v}.view" in sys.modules])
"""


def test_a_report_imports_the_modules_of_the_views_it_computes_only(tmp_path: Path) -> None:
    """A cold report imports a view's module as the view computes: the views the trace
    supports (BERT has no serving markers); a report of a cached trace answers from the
    cache and imports none of them."""
    logdir = _logdir(tmp_path)
    env = {"KINETOSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    seen = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", VIEW_MODULES, str(logdir)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **env},
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        seen.append(proc.stdout.split())
    assert seen == [["0", "overview", "operators"], ["0"]]


GC_AT_EXIT = """
import atexit, gc, sys
from kinetoscope.__main__ import run
atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 10000, file=sys.stderr))
sys.argv = ["kinetoscope", "report", sys.argv[1], "--format", "json", "--no-cache"]
run()
"""


def test_the_entry_freezes_what_the_imports_made_and_collects_after(tmp_path: Path) -> None:
    """`run` imports the door without the cyclic collector and freezes what the imports
    made (no later collection walks it); the collector is on again for the command."""
    logdir = _logdir(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", GC_AT_EXIT, str(logdir)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["status"]["state"] == "ready"
    assert proc.stderr.split() == ["True", "True"]
