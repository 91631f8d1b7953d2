"""Domain rules that used to be written several times, now one function each: the rank of
a file, lenient ints, env settings; and models are read-only however they were loaded."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from kinetoscope.analysis.core.ranks import assign_ranks, header_rank
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.ingest import limits
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.ingest.naming import name_rank
from kinetoscope.ingest.values import lenient_int
from kinetoscope.model.trace_model import model_nbytes
from kinetoscope.store.cache import DiskCache
from kinetoscope.store.run_context import RunContext
from kinetoscope.store.trace_store import TraceStore
from kinetoscope.trace_view.index import index_of
from kinetoscope.trace_view.track_list import tracks
from kinetoscope.trace_view.workers import WorkerTrace


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (7, 7),
        (-3, -3),
        (2.9, 2),
        (" 12 ", 12),
        ("1.0", 1),
        ("0x1f", 31),
        ("-4", -4),
        (True, None),
        (None, None),
        (float("nan"), None),
        ("seven", None),
        ([1], None),
        (2**63, None),
        ("1e30", None),
    ],
)
def test_lenient_int(value: object, expected: int | None) -> None:
    assert lenient_int(value) == expected


def test_one_rank_rule_for_every_page(tmp_path: Path) -> None:
    """The header states rank "1" as a string, the file name says rank 3: the trace view
    and the distributed view both say 1 (the trace view used to read only int headers and
    fell back to the name: one file, two ranks)."""
    run = tmp_path / "job"
    run.mkdir()
    for name, rank in (("rank3", "1"), ("rank0", "0")):
        t = TraceBuilder()
        t.header["distributedInfo"] = {"rank": rank, "world_size": 2}
        t.step(1, 0, 100)
        t.op("aten::mm", 10, 50)
        t.write(run / f"{name}.pt.trace.json")
    (found,) = scan_logdir(str(run))
    view = analyze_run(RunContext.of(found))
    by_worker = {r["worker"]: r["rank"] for r in view["ranks"]}
    assert by_worker == {"rank0": 0, "rank3": 1}
    store = TraceStore(None)
    try:
        models = {w.name: store.wait(w.spans[0].path) for w in found.workers}
    finally:
        store.close()
    shown = tracks([WorkerTrace(name, m) for name, m in models.items()], {})
    assert {w["worker"]: w["rank"] for w in shown["workers"]} == by_worker


def test_rank_from_names_when_the_header_has_none(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    model = t.model(tmp_path, "host_1.rank-2.pt.trace.json")
    assert header_rank(model.header) is None
    assert name_rank("host_1", "host_1.rank-2.pt.trace.json") == 2
    (info,) = tracks([WorkerTrace(None, model)], {})["workers"]
    assert info["rank"] == 2


def test_repeated_ranks_fall_back_to_names_then_order() -> None:
    assert assign_ranks([(0, 1), (0, 0)]) == ([1, 0], ["file_name"] * 2, [])
    ranks, sources, warnings = assign_ranks([(0, None), (0, None)])
    assert ranks == [0, 1] and sources == ["order"] * 2 and len(warnings) == 1


def test_a_view_writing_into_a_column_fails_on_a_fresh_model(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    t.memory(20, 1024, addr=1, total_allocated=1024)
    fresh = t.model(tmp_path)
    with pytest.raises(ValueError, match="read-only"):
        fresh.events["dur"][0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        fresh.memory["bytes"] += 1
    assert np.all(fresh.events["dur"] >= 0)


@pytest.mark.parametrize("bad", ["lots", "-1", "0", "nan", "inf"])
def test_a_bad_setting_warns_and_keeps_the_default(
    bad: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in (
        "KINETOSCOPE_CACHE_MAX_GB",
        "KINETOSCOPE_MEMORY_MB",
        "KINETOSCOPE_MAX_TEXT_GB",
        "KINETOSCOPE_LOAD_TIMEOUT_S",
    ):
        monkeypatch.setenv(name, bad)
    limits._warned.clear()
    with caplog.at_level(logging.WARNING, logger="kinetoscope.ingest.limits"):
        assert DiskCache(tmp_path).max_bytes == 20 << 30
        store = TraceStore(None)
        store.close()
        assert store.memory_budget == 8192 << 20
        assert limits.max_text_bytes() == 64 << 30
        assert limits.load_timeout_s() == 900
        assert limits.load_timeout_s() == 900  # warned once per setting and value
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 4 and all(bad in w for w in warned)


def test_a_good_setting_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINETOSCOPE_CACHE_MAX_GB", " 0.5 ")
    monkeypatch.setenv("KINETOSCOPE_MEMORY_MB", "")
    assert DiskCache(tmp_path).max_bytes == 1 << 29
    store = TraceStore(None)
    store.close()
    assert store.memory_budget == 8192 << 20


def test_derived_structures_count_in_the_memory_budget(tmp_path: Path) -> None:
    """The trace view's index and its parts are kept with `model.derived` (the one memo)
    and the store's memory budget counts them."""
    t = TraceBuilder()
    t.step(1, 0, 100)
    for i in range(50):
        t.op(f"aten::op{i}", 1 + i, 1)
    model = t.model(tmp_path)
    columns_only = model_nbytes(model)
    index = index_of(model)
    tracks([WorkerTrace(None, model)], {})
    assert index is index_of(model)
    assert model_nbytes(model) > columns_only + 50 * 8
