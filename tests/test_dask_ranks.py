"""Per-rank summaries on a real Dask cluster: a `dask.distributed.LocalCluster` of two
worker processes started here. The distributed view it gives equals the in-process one,
through `analyze_run`, the CLI (`--dask`) and the plugin (`KINETOSCOPE_DASK_SCHEDULER`)."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import rank_job
from conftest import PluginClient
from corpus import corpus_path
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.cli.main import EXIT_USAGE, main
from kinetoscope.ingest.discovery import Run, scan_logdir
from kinetoscope.store.dask_ranks import DaskRanks
from kinetoscope.store.pool_settings import DASK_ENV
from kinetoscope.store.run_context import RunContext

distributed = pytest.importorskip("distributed")

DDP_PAIR = "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def tasks_run_on(address: str) -> int:
    """How many per-rank summary tasks (`file_summary`) the cluster's scheduler has seen
    finish."""
    with distributed.Client(address) as client:
        log = client.run_on_scheduler(
            lambda dask_scheduler: [key for key, *_ in dask_scheduler.transition_log]
        )
    return len({key for key in log if str(key).startswith("file_summary")})


def relabelled_corpus_job(folder: Path, ranks: int) -> Path:
    """`ranks` copies of the corpus' 2-rank DDP pair, the rank in the file name (these
    2021 traces have no `distributedInfo`): worker{r} is a copy of worker{r % 2}."""
    folder.mkdir(parents=True)
    for rank in range(ranks):
        source = corpus_path(f"{DDP_PAIR}/worker{rank % 2}_round1.pt.trace.json.gz")
        shutil.copyfile(source, folder / f"worker{rank}_round1.pt.trace.json.gz")
    return folder


def the_run(folder: Path) -> Run:
    (run,) = scan_logdir(str(folder))
    return run


def as_json(view: dict[str, Any]) -> Any:
    return json.loads(msgspec.json.encode(view))


@pytest.mark.slow
@pytest.mark.parametrize("source", ["corpus", "builders"])
def test_the_cluster_gives_the_in_process_view(tmp_path: Path, scheduler: str, source: str) -> None:
    if source == "corpus":
        run = the_run(relabelled_corpus_job(tmp_path / "job", 8))
    else:
        run = the_run(rank_job(tmp_path / "job", 12, steps=3, kernels_per_step=20))
    in_process = as_json(analyze_run(RunContext.of(run)))  # the default pool: 2 spawned processes
    before = tasks_run_on(scheduler)
    dask = DaskRanks(scheduler)
    try:
        on_cluster = as_json(analyze_run(RunContext.of(run, executor=dask)))
    finally:
        dask.shutdown()
    assert on_cluster == in_process and on_cluster["errors"] == []
    assert len(on_cluster["ranks"]) == len(run.workers)
    assert tasks_run_on(scheduler) - before == len(run.workers)


@pytest.mark.slow
def test_a_runs_whatif_on_the_cluster(
    tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's what-if over rank summaries on the cluster: one task a rank (its summary
    under the change, which holds its recorded steps too), the answer the in-process one."""
    from kinetoscope.analysis.critical_path import run as critical_path_run

    monkeypatch.setattr(critical_path_run, "FULL_GRAPH_RANKS", 0)
    run = the_run(rank_job(tmp_path / "job", 6, steps=3, kernels_per_step=10))
    change = {"rank_all": 1, "factor": 0.5}
    in_process = as_json(critical_path_run.run_whatif(RunContext((run,), None, change)))
    before = tasks_run_on(scheduler)
    dask = DaskRanks(scheduler)
    try:
        context = RunContext((run,), None, change, executor=dask)
        on_cluster = as_json(critical_path_run.run_whatif(context))
    finally:
        dask.shutdown()
    assert on_cluster == in_process and on_cluster["method"] == "summaries"
    assert on_cluster["saving_us"] > 0 and on_cluster["errors"] == []
    assert tasks_run_on(scheduler) - before == len(run.workers)


@pytest.mark.slow
def test_cli_with_dask(tmp_path: Path, scheduler: str, capsys: pytest.CaptureFixture[str]) -> None:
    rank_job(tmp_path / "logs" / "job", 10, steps=2, kernels_per_step=10)
    report = ["report", str(tmp_path / "logs"), "--format", "json", "--view", "distributed"]
    assert main([*report, "--no-cache"]) == 0
    in_process = json.loads(capsys.readouterr().out)
    before = tasks_run_on(scheduler)
    assert main([*report, "--no-cache", "--dask", scheduler]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == in_process
    assert "ranks summarised 10/10" in captured.err
    # Rank 0's trace is the one the report opened: its summary comes from the CLI's store
    # (parsed once), the other 9 from the cluster.
    assert tasks_run_on(scheduler) - before == 9
    # `local`: a cluster of its own, started and closed by the command.
    assert main([*report, "--dask", "local"]) == 0
    assert json.loads(capsys.readouterr().out) == in_process


@pytest.mark.slow
def test_plugin_with_the_scheduler_in_the_environment(
    tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    logdir = tmp_path / "logs"
    rank_job(logdir / "job", 9, steps=2, kernels_per_step=10)
    expected = as_json(analyze_run(RunContext.of(the_run(logdir))))
    monkeypatch.setenv(DASK_ENV, scheduler)
    before = tasks_run_on(scheduler)
    client = PluginClient(logdir)
    try:
        assert isinstance(client.plugin.store.pools.executor, DaskRanks)
        # The span the page opens first (rank 0's) starts loading with the plugin: its
        # summary then comes from the plugin's store (parsed once), the other 8 from the
        # cluster.
        first = the_run(logdir).workers[0].spans[0].path
        deadline = time.monotonic() + 120
        while not client.plugin.store.holds(first):
            assert time.monotonic() < deadline, "the first span never started loading"
            time.sleep(0.02)
        while (response := client.get("distributed", run="job")).status_code == 202:
            assert time.monotonic() < deadline, "the distributed view never got ready"
            time.sleep(0.1)
        assert response.status_code == 200
        assert response.get_json() == expected
    finally:
        client.close()
        client.plugin.store.pools.executor.shutdown()
    assert tasks_run_on(scheduler) - before == 8


def test_without_dask_installed_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    rank_job(tmp_path / "logs" / "job", 2, steps=1, kernels_per_step=2)
    report = ["report", str(tmp_path / "logs"), "--format", "json", "--dask", "local"]
    assert main(report) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "pip install 'kinetoscope[dask]'" in err and "--dask" in err
    # The plugin stays up; the distributed view's job fails saying what to install.
    monkeypatch.setenv(DASK_ENV, "tcp://127.0.0.1:1")
    client = PluginClient(tmp_path / "logs")
    try:
        deadline = time.monotonic() + 30
        while (response := client.get("distributed", run="job")).status_code == 202:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert response.status_code == 500
        assert "pip install 'kinetoscope[dask]'" in response.get_data(as_text=True)
    finally:
        client.close()
