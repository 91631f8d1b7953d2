"""Memory of a many-rank run's distributed view: per-rank work is load → summarise →
drop, so the peak does not grow with the number of ranks. A memory-shape test (16 vs 64
ranks of the same size, measured in a fresh process by its peak RSS), not a timing test."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
from builders import rank_job
from kinetoscope.cli.main import main
from kinetoscope.cli.progress import RankProgress
from kinetoscope.store.pools import PROCESS_POOL_MIN_RANKS, WorkerPools

# Holding every model would add ~48 ranks' models between 16 and 64 ranks (> 150 MB
# at this size); load → summarise → drop adds only summaries (a few KB a rank).
RANK_SHAPE = {"steps": 20, "kernels_per_step": 400}
MARGIN_MB = 40

MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time
    from concurrent.futures import ThreadPoolExecutor
    from kinetoscope.ingest.discovery import scan_logdir
    from kinetoscope.analysis.distributed.rank_summaries import analyze_run
    from kinetoscope.store.run_jobs import RunJobs
    from kinetoscope.store.trace_store import TraceStore

    if __name__ == "__main__":
        (run,) = scan_logdir(sys.argv[1])
        executor = ThreadPoolExecutor(2) if sys.argv[2] == "threads" else None
        store = TraceStore(None, executor=executor)  # as the plugin: the store's jobs
        job = RunJobs(store).job("distributed", analyze_run, run, None)
        while job.state == "loading":
            time.sleep(0.05)
        view = json.loads(job.result)
        store.pools.close(wait=True)  # workers reaped: RUSAGE_CHILDREN counts them
        store.close()
        peak = lambda who: resource.getrusage(who).ru_maxrss // 1024  # MB (Linux: KB)
        print(json.dumps({
            "ranks": len(view["ranks"]),
            "errors": view["errors"],
            "self_mb": peak(resource.RUSAGE_SELF),
            "worker_mb": peak(resource.RUSAGE_CHILDREN),
        }))
    """
)


def peaks(tmp_path: Path, ranks: int, pool: str) -> dict[str, int]:
    run = rank_job(tmp_path / f"job{ranks}", ranks, **RANK_SHAPE)
    script = tmp_path / "measure.py"
    script.write_text(MEASURE)
    done = subprocess.run(
        [sys.executable, str(script), str(run), pool],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    out: dict[str, int] = json.loads(done.stdout)
    assert out["ranks"] == ranks and out["errors"] == []
    return out


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["threads", "processes"])
def test_peak_memory_does_not_grow_with_the_ranks(tmp_path: Path, pool: str) -> None:
    """`threads`: a user's thread pool, everything in this process (the store must not
    keep a big run's models); `processes`: the default pool from 8 ranks on (the server
    process holds summaries only, each worker one rank at a time)."""
    few, many = peaks(tmp_path, 16, pool), peaks(tmp_path, 64, pool)
    assert many["self_mb"] - few["self_mb"] < MARGIN_MB, (few, many)
    if pool == "processes":
        assert many["worker_mb"] - few["worker_mb"] < MARGIN_MB, (few, many)


def test_the_user_sets_how_many_ranks_are_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINETOSCOPE_RANK_WORKERS", "3")
    pools = WorkerPools(load_workers=0)
    try:
        processes, threads = pools.for_ranks(PROCESS_POOL_MIN_RANKS), pools.for_ranks(2)
        assert isinstance(processes, ProcessPoolExecutor) and processes._max_workers == 3
        assert isinstance(threads, ThreadPoolExecutor) and threads._max_workers == 3
    finally:
        pools.close(wait=True)
    monkeypatch.setenv("KINETOSCOPE_RANK_WORKERS", "0")  # not positive: the default, 2
    assert WorkerPools(load_workers=0).rank_workers == 2


def test_cli_prints_the_ranks_summarised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rank_job(tmp_path / "logs" / "job", 3, steps=1, kernels_per_step=2)
    assert main(["report", str(tmp_path / "logs"), "--format", "json", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)["distributed"]["ranks"]) == 3
    # Not a terminal: the last count always, and at most one line every 2 s before it.
    assert captured.err.splitlines()[-1] == "kinetoscope: run 'job': ranks summarised 3/3"


def test_progress_on_a_terminal_rewrites_one_line() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    progress = RankProgress("job", screen)
    for done in range(1, 4):
        progress(done, 3)
    assert (
        screen.getvalue()
        == "".join(f"\rkinetoscope: run 'job': ranks summarised {d}/3" for d in (1, 2, 3)) + "\n"
    )
