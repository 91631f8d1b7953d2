"""Cloud logdirs against a real S3 API: moto's standalone server on 127.0.0.1, reached
through s3fs exactly as a user's bucket is (endpoint from `AWS_ENDPOINT_URL`)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from corpus import corpus_path
from kinetoscope.cli.main import EXIT_LOAD, main
from kinetoscope.ingest import storage
from kinetoscope.ingest.discovery import Run, scan_logdir, target_runs
from kinetoscope.ingest.storage import file_identity
from kinetoscope.ingest.watcher import LogdirWatcher
from kinetoscope.store import trace_store
from kinetoscope.store.cache import DiskCache, cache_key, default_cache_dir
from kinetoscope.store.trace_store import TraceStore
from tensorboard_launch import TensorBoard
from test_discovery import named_file_folder
from test_tensorboard_process import get_json

moto_server = pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

_ENV = {
    "AWS_ACCESS_KEY_ID": "kinetoscope-test",
    "AWS_SECRET_ACCESS_KEY": "kinetoscope-test",
    "AWS_DEFAULT_REGION": "us-east-1",
}
_buckets = itertools.count()


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server for this module; the environment points fsspec's S3 at it."""
    # Port 0: the server binds a port the system picks (one found free before could be
    # taken first, as it was once for TensorBoard: tests/tensorboard_launch.py).
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    # A filesystem cached by an earlier module still points at that module's (stopped)
    # server: every instance made from here on reads this endpoint.
    s3fs.S3FileSystem.clear_instance_cache()
    saved = {k: os.environ.get(k) for k in [*_ENV, "AWS_ENDPOINT_URL"]}
    os.environ.update(_ENV, AWS_ENDPOINT_URL=endpoint)
    try:
        yield endpoint
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    """A fresh, empty bucket per test: `s3://name`."""
    import fsspec

    name = f"kinetoscope-{next(_buckets)}"
    fsspec.filesystem("s3").mkdir(name)
    return f"s3://{name}"


def upload(local: Path, url: str) -> None:
    """Every file under `local` to the same relative keys under `url`."""
    import fsspec

    fs = fsspec.filesystem("s3")
    for path in sorted(local.rglob("*")):
        if path.is_file():
            fs.pipe(f"{url}/{path.relative_to(local).as_posix()}", path.read_bytes())


def small_trace(kernel_us: float = 40) -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0, 100)
    op = t.op("aten::mm", 10, 50)
    t.launch(20, 5, op, gpu_ts=30, gpu_dur=kernel_us)
    return t


def write(trace: TraceBuilder, path: Path, gz: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    trace.write(path, gz=gz)


def make_logdir(root: Path) -> Path:
    """Two runs (one nested), two workers, a hidden folder and a JSON that is no trace."""
    write(small_trace(), root / "a" / "worker0.1.pt.trace.json.gz", gz=True)
    write(small_trace(30), root / "a" / "worker1.1.pt.trace.json")
    write(small_trace(20), root / "b" / "c" / "host_7.json.gz", gz=True)
    write(small_trace(), root / ".hidden" / "w.pt.trace.json")
    (root / "a" / "config.json").write_text('{"lr": 0.1}')
    return root


def shape(runs: tuple[Run, ...]) -> list[Any]:
    return [
        (r.name, [(w.name, [(s.name, s.file, s.size) for s in w.spans]) for w in r.workers])
        for r in runs
    ]


def test_listing_matches_the_same_files_on_disk(tmp_path: Path, bucket: str) -> None:
    local = make_logdir(tmp_path / "logs")
    upload(local, f"{bucket}/logs")
    remote = scan_logdir(f"{bucket}/logs/")
    assert shape(remote) == shape(scan_logdir(str(local)))
    assert [r.name for r in remote] == ["a", "b/c"]
    span = remote[0].workers[0].spans[0]
    assert span.path == f"{bucket}/logs/a/worker0.1.pt.trace.json.gz"
    assert storage.stat(span.path).etag  # the store's ETag keys the cache


def test_a_trace_named_alone_lists_its_own_folder_only(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on disk: its run, its `torch_trace/` logs, and two listings one level deep
    (not one of everything under its folder)."""
    trace = named_file_folder(tmp_path / "logs")
    upload(tmp_path / "logs", f"{bucket}/logs")
    depths: list[int | None] = []
    list_files = storage.list_files

    def recorded(folder: str, maxdepth: int | None = None) -> list[tuple[str, Any]]:
        depths.append(maxdepth)
        return list_files(folder, maxdepth)

    monkeypatch.setattr(storage, "list_files", recorded)
    (remote,) = target_runs(f"{bucket}/logs/{trace.name}")
    (local,) = target_runs(str(trace))
    assert depths == [1, 1]
    assert shape((remote,)) == shape((local,))
    assert [c.file for c in remote.compile_logs] == [c.file for c in local.compile_logs]
    assert len(remote.compile_logs) == 1
    # A folder with no `torch_trace/`: listing that folder finds nothing, not an error.
    (deeper,) = target_runs(f"{bucket}/logs/other0/deeper/worker0.1.pt.trace.json")
    assert [w.name for w in deeper.workers] == ["worker0"] and deeper.compile_logs == ()


def test_rescan_finds_a_new_span(tmp_path: Path, bucket: str) -> None:
    local = make_logdir(tmp_path / "logs")
    upload(local, f"{bucket}/logs")
    watcher = LogdirWatcher(f"{bucket}/logs")
    assert [s.name for s in watcher.runs()[0].workers[0].spans] == ["1"]
    later = tmp_path / "later"
    write(small_trace(), later / "a" / "worker0.2.pt.trace.json.gz", gz=True)
    upload(later, f"{bucket}/logs")
    spans = watcher.rescan()[0].workers[0].spans
    assert [s.file for s in spans] == ["worker0.1.pt.trace.json.gz", "worker0.2.pt.trace.json.gz"]


def test_plugin_serves_the_same_json_as_for_local_files(tmp_path: Path, bucket: str) -> None:
    local = make_logdir(tmp_path / "logs")
    upload(local, f"{bucket}/logs")
    clients = [PluginClient(local), PluginClient(f"{bucket}/logs")]  # type: ignore[arg-type]
    try:
        answers = []
        for client in clients:
            status = client.wait_ready("a", "worker1")
            assert status["state"] == "ready", status
            answers.append(
                [
                    client.get(route, run="a", worker="worker1").get_data()
                    for route in ("runs", "overview", "operators", "kernels", "download")
                ]
            )
        assert answers[0] == answers[1]
        assert answers[1][-1] == (local / "a" / "worker1.1.pt.trace.json").read_bytes()
    finally:
        for client in clients:
            client.close()


def test_the_notebook_api_opens_an_s3_run_as_a_local_one(tmp_path: Path, bucket: str) -> None:
    import kinetoscope

    local = make_logdir(tmp_path / "logs")
    upload(local, f"{bucket}/logs")
    frames = []
    for target in (str(local / "a"), f"{bucket}/logs/a"):
        with kinetoscope.open(target, cache=False) as run:
            assert run.workers == ("worker0", "worker1")
            trace = run.trace("worker1")
            frames.append((trace.kernels(), trace.breakdown(), trace.events()))
    for local_frame, remote_frame in zip(*frames):
        assert local_frame.equals(remote_frame)
    assert frames[1][0]["total_us"].sum() == 30  # worker1's one kernel


def test_report_on_an_s3_url_is_the_local_report(
    tmp_path: Path, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real traces of a two-rank run: every view, the run-level one included."""
    local = tmp_path / "ddp"
    for rank in ("worker0", "worker1"):
        src = corpus_path(
            f"gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/{rank}_span1.pt.trace.json.gz"
        )
        local.mkdir(exist_ok=True)
        shutil.copy(src, local / src.name)
    upload(local, f"{bucket}/ddp")
    documents = []
    for logdir in (str(local), f"{bucket}/ddp"):
        assert main(["report", logdir, "--format", "json"]) == 0
        documents.append(capsys.readouterr().out)
    assert documents[0] == documents[1]
    assert "distributed" in json.loads(documents[1])


def test_an_object_deleted_mid_load_fails_alone(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The big trace's object goes away after its first block was read: that trace ends in
    a clear error, the other one loads."""
    big = TraceBuilder()
    for i in range(120_000):
        big.op(f"aten::op_{i % 50}", i * 10, 5)
    write(big, tmp_path / "logs" / "r" / "big.pt.trace.json")
    write(small_trace(), tmp_path / "logs" / "r" / "small.pt.trace.json")
    assert (tmp_path / "logs" / "r" / "big.pt.trace.json").stat().st_size > 3 * storage.REMOTE_BLOCK
    upload(tmp_path / "logs", f"{bucket}/logs")
    big_url, small_url = (
        f"{bucket}/logs/r/big.pt.trace.json",
        f"{bucket}/logs/r/small.pt.trace.json",
    )
    real_build = trace_store.build_model

    def build_deleting_midway(path: str, **kwargs: Any) -> Any:
        if path != big_url:
            return real_build(path, **kwargs)
        store_progress = kwargs.pop("progress")

        def progress(done: int, total: int) -> None:
            if 0 < done < total and storage.kind(path) == "file":
                import fsspec

                fsspec.filesystem("s3").rm(path)
            store_progress(done, total)

        return real_build(path, progress=progress, **kwargs)

    monkeypatch.setattr(trace_store, "build_model", build_deleting_midway)
    store = TraceStore(cache=None)
    try:
        store.state_for(big_url)
        assert store.wait(small_url, timeout=60).partial is False
        store.state_for(big_url).done.wait(60)
        status = store.status(big_url)
    finally:
        store.close()
    assert status["state"] == "error"
    assert status["error"]["kind"] == "missing"
    assert status["error"]["message"] == "big.pt.trace.json: the file was removed"


def test_refused_credentials_are_a_clear_error(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    upload(make_logdir(tmp_path / "logs"), f"{bucket}/logs")
    # The server now checks every request's signature against its IAM users: our key is
    # none of them, as an expired or wrong key on a real bucket.
    monkeypatch.setattr("moto.settings.INITIAL_NO_AUTH_ACTION_COUNT", 0)
    with pytest.raises(PermissionError, match="access refused by the store") as refused:
        scan_logdir(f"{bucket}/logs")
    assert "Access Key Id you provided does not exist" in str(refused.value)
    assert main(["report", f"{bucket}/logs"]) == EXIT_LOAD
    err = capsys.readouterr().err
    assert f"{bucket}/logs: cannot list it: access refused by the store" in err
    client = PluginClient(f"{bucket}/logs")  # type: ignore[arg-type]
    try:
        response = client.get("runs")
        assert response.status_code == 502
        assert "cannot list the logdir: access refused by the store" in response.get_data(
            as_text=True
        )
        assert client.plugin.is_active() is False
    finally:
        client.close()


def test_a_missing_bucket_is_reported(s3_endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "s3://no-such-bucket/logs"]) == EXIT_LOAD
    assert "s3://no-such-bucket/logs: no such file or folder" in capsys.readouterr().err


_BLOCK_S3FS = """
import sys

class BlockS3fs:
    # What a machine without the extra sees: s3fs cannot be imported.
    def find_spec(self, name, path=None, target=None):
        if name == "s3fs" or name.startswith("s3fs."):
            raise ImportError("No module named 's3fs'")
        return None

sys.meta_path.insert(0, BlockS3fs())
from kinetoscope.cli.main import main
sys.exit(main(["report", "s3://bucket/logs"]))
"""


def test_a_missing_backend_names_the_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _BLOCK_S3FS], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == EXIT_LOAD, done.stderr
    assert "pip install kinetoscope[s3]" in done.stderr


def test_a_loaded_object_is_cached_on_disk_by_its_etag(tmp_path: Path, bucket: str) -> None:
    write(small_trace(), tmp_path / "logs" / "w.pt.trace.json")
    upload(tmp_path / "logs", f"{bucket}/logs")
    url = f"{bucket}/logs/w.pt.trace.json"
    cache = DiskCache(default_cache_dir())
    store = TraceStore(cache)
    try:
        model = store.wait(url, timeout=60)
    finally:
        store.close()
    source = file_identity(url)
    assert model.source == source and source["etag"] == storage.stat(url).etag
    assert cache.load(cache_key(source)) is not None  # the next start reads no object


def test_real_tensorboard_with_an_s3_logdir(tmp_path: Path, bucket: str) -> None:
    upload(make_logdir(tmp_path / "logs"), f"{bucket}/logs")
    tb = TensorBoard(f"{bucket}/logs")
    base = f"{tb.base}/data"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                listing: Any = get_json(f"{base}/plugins_listing")
                break
            except OSError:
                assert tb.running(), tb.output()
                assert time.monotonic() < deadline
                time.sleep(0.3)
        assert listing["kinetoscope"]["enabled"] is True
        runs: Any = get_json(f"{base}/plugin/kinetoscope/runs")
        assert [r["name"] for r in runs["runs"]] == ["a", "b/c"]
        query = "run=a&worker=worker0&span=1"
        while get_json(f"{base}/plugin/kinetoscope/status?{query}")["state"] == "loading":  # type: ignore[index]
            assert time.monotonic() < deadline
            time.sleep(0.2)
        overview: Any = get_json(f"{base}/plugin/kinetoscope/overview?{query}")
        assert overview["steps"][0]["breakdown_us"]["kernel"] == 40
    finally:
        tb.stop()


@pytest.mark.slow
def test_dask_workers_read_the_ranks_from_the_bucket(tmp_path: Path, bucket: str) -> None:
    """Many ranks in an object store, summarised on a LocalCluster of process workers
    that read the objects themselves (credentials and endpoint from their environment):
    the same distributed view as the same files on disk, summarised in-process."""
    distributed = pytest.importorskip("distributed")
    from builders import rank_job
    from kinetoscope.analysis.distributed.rank_summaries import analyze_run
    from kinetoscope.store.dask_ranks import DaskRanks
    from kinetoscope.store.run_context import RunContext

    local = rank_job(tmp_path / "logs" / "job", 6, steps=2, kernels_per_step=10)
    upload(tmp_path / "logs", f"{bucket}/logs")
    (remote_run,) = scan_logdir(f"{bucket}/logs")
    assert remote_run.workers[0].spans[0].path.startswith("s3://")
    (local_run,) = scan_logdir(str(local.parent))
    in_process = analyze_run(RunContext.of(local_run))
    # The workers start after the fixture set the environment, so they inherit it.
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    dask = DaskRanks(cluster.scheduler_address)
    try:
        on_cluster = analyze_run(RunContext.of(remote_run, executor=dask))
    finally:
        dask.shutdown()
        cluster.close()
    assert on_cluster["errors"] == [] and len(on_cluster["ranks"]) == 6
    assert json.loads(json.dumps(on_cluster)) == json.loads(json.dumps(in_process))
