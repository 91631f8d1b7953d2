"""Each trace file is parsed once, whichever routes ask for it at the same time."""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.analysis.core import summary_cache as summaries_on_disk
from kinetoscope.analysis.distributed import rank_summaries as distributed_job
from kinetoscope.ingest import build
from kinetoscope.store import trace_store as loader


def rank_trace(path: Path, rank: int) -> None:
    t = TraceBuilder()
    t.header["distributedInfo"] = {"rank": rank, "world_size": 2, "backend": "gloo"}
    for step in range(3):
        t.step(step + 1, step * 1000, 900)
        for i in range(200):
            t.op(f"aten::op{i % 7}", step * 1000 + i * 4, 3)
    path.parent.mkdir(parents=True, exist_ok=True)
    t.write(path)


def test_distributed_and_worker_views_parse_each_file_once(
    tmp_path: Path,
    plugin_client: Callable[[Path], PluginClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for rank in range(2):
        rank_trace(tmp_path / "logs" / "job" / f"rank{rank}.1.pt.trace.json", rank)
    parsed: Counter[str] = Counter()
    real_build = build.build_model

    def counting_build(path: str, *args: Any, **kwargs: Any) -> Any:
        parsed[Path(path).name] += 1
        time.sleep(0.2)  # a slow parse: the routes below overlap with it
        return real_build(path, *args, **kwargs)

    monkeypatch.setattr(loader, "build_model", counting_build)
    monkeypatch.setattr(summaries_on_disk, "build_model", counting_build)
    client = plugin_client(tmp_path / "logs")
    for rank in range(2):
        client.get("status", run="job", worker=f"rank{rank}", span="1")
    deadline = time.monotonic() + 60
    while client.get("distributed", run="job").status_code == 202:
        assert time.monotonic() < deadline, "distributed view never got ready"
        time.sleep(0.05)
    assert client.json("distributed", run="job")["ranks_found"] == 2
    for rank in range(2):
        assert client.wait_ready("job", f"rank{rank}")["state"] == "ready"
        client.json("overview", run="job", worker=f"rank{rank}", span="1")
    assert parsed == {"rank0.1.pt.trace.json": 1, "rank1.1.pt.trace.json": 1}


def test_with_a_process_pool_the_ranks_the_store_holds_come_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for rank in range(2):
        paths.append(tmp_path / f"rank{rank}.1.pt.trace.json")
        rank_trace(paths[-1], rank)
    parsed: Counter[str] = Counter()
    real_build = build.build_model

    def counting_build(path: str, *args: Any, **kwargs: Any) -> Any:
        parsed[Path(path).name] += 1
        return real_build(path, *args, **kwargs)

    monkeypatch.setattr(loader, "build_model", counting_build)
    monkeypatch.setattr(summaries_on_disk, "build_model", counting_build)
    store = loader.TraceStore(cache=None)
    store.status(str(paths[0]))  # the UI opened rank 0: the store holds it
    processes = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        results, errors = distributed_job.summarize_all(
            [str(p) for p in paths], None, processes, store=store
        )
    finally:
        processes.shutdown(wait=True)
        store.close()
    assert errors == [None, None] and all(r is not None for r in results)
    # Rank 0 was parsed here once (by the store); rank 1 in the worker process.
    assert parsed == {"rank0.1.pt.trace.json": 1}
