"""A run's recorded critical path joined with stubs (`critical_path/stubs.py`): every rank
read for its collectives and steps (`stub_tier.py`, or the Distributed view's summary where
it is kept), a full summary only for the ranks the path may enter. The answer is the join
of every rank's full summary, on built jobs whose paths cross ranks; a path that enters a
stub makes that rank full; a stub's summary holds what the Distributed view's does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
from corpus import corpus_trace_model, corpus_traces
from critical_path_jobs import count_reads, group_job, hidden_job, one_rank_job
from kinetoscope.analysis.critical_path import run, stubs
from kinetoscope.analysis.critical_path.anchors import no_device_nodes
from kinetoscope.analysis.critical_path.run import run_critical_path
from kinetoscope.analysis.critical_path.stub_tier import summarize_stub
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.analysis.distributed.summary import summarize_rank
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.ingest.text_blocks import TraceDecodeError
from kinetoscope.store.run_context import RunContext

NOTE = "collectives and steps only"


def _context(folder: Path, cache: Path | None = None) -> RunContext:
    found = next(r for r in scan_logdir(str(folder.parent)) if r.name == folder.name)
    return RunContext((found,), None, {}, str(cache) if cache else None)


def _every_rank_in_full(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(run, "_joined_lazily", lambda *a: None)
        return dict(run_critical_path(_context(folder)))


def _without_note(view: dict[str, Any]) -> tuple[dict[str, Any], str]:
    notes = [a for a in view["assumptions"] if NOTE in a]
    assert len(notes) == 1, view["assumptions"]
    return {**view, "assumptions": [a for a in view["assumptions"] if NOTE not in a]}, notes[0]


@pytest.mark.parametrize("job", [group_job, one_rank_job, hidden_job])
def test_a_runs_path_summarises_in_full_only_the_ranks_it_may_enter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, job: Any
) -> None:
    """The same answer as every rank's full summary joined, but for the note of how many
    ranks were stubs; the traces read are every rank's once (its collectives and steps)
    and the candidates' once more."""
    folder = job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    whole = _every_rank_in_full(folder, monkeypatch)
    read = count_reads(monkeypatch)
    lazily = dict(run_critical_path(_context(folder)))
    answer, note = _without_note(lazily)
    assert answer == whole
    ranks = len(list(folder.glob("*.json")))
    stubbed = int(note.split(" of ")[0])
    assert note.startswith(f"{stubbed} of {ranks} ranks") and 0 < stubbed < ranks
    assert len(read) == 2 * ranks - stubbed
    assert {s["rank"] for s in answer["segments"]} <= {r["rank"] for r in answer["by_rank"]}


def test_a_path_that_enters_a_stub_makes_that_rank_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No candidate named (as if a stub's times had been rounded away from its graph's):
    each join whose path enters stubs makes them full and joins again, to the answer of
    every rank's full summary."""
    folder = group_job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    whole = _every_rank_in_full(folder, monkeypatch)
    rounds: list[set[int]] = []
    on_path = stubs.stubs_on_path
    monkeypatch.setattr(run, "candidates", lambda parts: set())
    monkeypatch.setattr(run, "MAX_ROUNDS", 64)
    monkeypatch.setattr(run, "stubs_on_path", lambda j: rounds.append(on_path(j)) or rounds[-1])
    answer = dict(run_critical_path(_context(folder)))
    assert len(rounds) >= 2 and rounds[0] and not rounds[-1]
    assert _without_note(answer)[0] == whole


def test_a_runs_path_reads_the_distributed_views_summaries_when_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the Distributed view's summaries kept (its page was opened: the path's section
    is on it), the ranks joined as stubs are read from them: the path reads only its
    candidates' traces, and its answer is the one made without them."""
    folder = group_job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    alone = dict(run_critical_path(_context(folder)))
    cache = tmp_path / "cache"
    assert not analyze_run(_context(folder, cache))["errors"]
    read = count_reads(monkeypatch)
    answer = dict(run_critical_path(_context(folder, cache)))
    stubbed = int(_without_note(answer)[1].split(" of ")[0])
    assert answer == alone and len(read) == 16 - stubbed


def test_a_trace_changed_since_the_distributed_view_is_read_alone_for_its_stub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Distributed view's summaries kept but for one file that changed since (its
    state moved): the path makes that rank's stub alone, reads the others' kept summaries,
    and answers as without a cache."""
    folder = group_job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    alone = dict(run_critical_path(_context(folder)))
    cache = tmp_path / "cache"
    assert not analyze_run(_context(folder, cache))["errors"]
    changed = sorted(folder.glob("*.json"))[3]
    stat = changed.stat()
    os.utime(changed, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    read = count_reads(monkeypatch)
    answer = dict(run_critical_path(_context(folder, cache)))
    stubbed = int(_without_note(answer)[1].split(" of ")[0])
    assert answer == alone and str(changed) in read and len(read) == 1 + 16 - stubbed


def test_a_runs_path_keeps_its_stubs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked first, the path summarises every rank for its stub alone (the stub tier, not
    the Distributed view's summary) and keeps them with the candidates' full summaries:
    asked again it reads no trace, and the Distributed view then reads each rank once."""
    folder = group_job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    cache = tmp_path / "cache"
    first = dict(run_critical_path(_context(folder, cache)))
    read = count_reads(monkeypatch)
    assert dict(run_critical_path(_context(folder, cache))) == first and read == []
    distributed = analyze_run(_context(folder, cache))
    assert not distributed["errors"] and len(distributed["ranks"]) == 16
    assert sorted(read) == sorted(str(p) for p in folder.glob("*.json"))


@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_a_stub_summary_is_what_the_distributed_summary_holds(path: Path) -> None:
    """Every corpus trace that loads: the stub tier's summary (made for a stub alone) holds
    what the Distributed view's summary of the same trace does of its rank, clock,
    steps (their source, names, numbers and bounds) and collective table, byte for byte."""
    try:
        model = corpus_trace_model(path)
    except TraceDecodeError:
        pytest.skip("refused at load: test_decode says why")
    whole, stub = summarize_rank(model), summarize_stub(model)
    assert (stub.rank, stub.time_origin_us, stub.steps_source) == (
        whole.rank,
        whole.time_origin_us,
        whole.steps_source,
    )
    bounds = [
        {k: step[k] for k in ("name", "number", "start_us", "end_us")} for step in whole.steps
    ]
    assert stub.steps == bounds
    assert msgspec.msgpack.encode(stub.collectives) == msgspec.msgpack.encode(whole.collectives)


def test_parts_without_gpu_nodes_share_one_read_only_empty_array() -> None:
    # A 2,048-rank join makes one per step of every rank: shared, so read-only (a
    # consumer writing into one would write into every part's).
    nodes = no_device_nodes(3)
    assert len(nodes) == 3 and all(n is nodes[0] for n in nodes)
    assert nodes[0].size == 0 and nodes[0].dtype == "int64"
    with pytest.raises(ValueError):
        nodes[0][...] = 1
    assert no_device_nodes(0) == []
