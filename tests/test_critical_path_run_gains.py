"""`run_top_gains` of a run of more than 16 ranks (`critical_path/run_gains.py`): the
candidates found on the run's recorded path, each rank read once more and summarised
under every candidate, each candidate's summaries joined. Each gain is the `run_what-if`
of its change over the same summaries; where summaries predict what whole graphs do,
the same gains as whole graphs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from critical_path_jobs import count_reads, group_job, hidden_job, one_rank_job
from kinetoscope.analysis.critical_path import run
from kinetoscope.analysis.critical_path.each_change import ChangedSummaries, summarize_each
from kinetoscope.analysis.critical_path.run_gains import change_params, run_top_gains
from kinetoscope.analysis.critical_path.summaries import summarize
from kinetoscope.cli.main import main
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext


def _context(folder: Path, **params: Any) -> RunContext:
    found = next(r for r in scan_logdir(str(folder.parent)) if r.name == folder.name)
    return RunContext((found,), None, params)


@pytest.mark.parametrize("job", [one_rank_job, hidden_job, group_job])
def test_a_large_runs_gains_are_its_whatifs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, job: Any
) -> None:
    """Summarised (as beyond 16 ranks): each gain's prediction and saving are those of
    `run_whatif` of its change, and here (no local path changes which port bound it)
    the gains of whole graphs, in the same order, with the same assumptions."""
    folder = job(tmp_path / "job")
    whole = dict(run_top_gains(_context(folder)))
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    summarised = dict(run_top_gains(_context(folder)))
    assert summarised == whole
    assert summarised["gains"], "the job has changes that save time"
    for gain in summarised["gains"]:
        query = {gain["kind"]: gain["name"], "factor": summarised["factor"]}
        whatif = run.run_whatif(_context(folder, **query))
        assert whatif["method"] == "summaries"
        for key in ("predicted_step_us", "saving_us", "saving_pct"):
            assert gain[key] == whatif[key], (gain["name"], key)  # type: ignore[literal-required]


def test_each_rank_is_read_once_for_every_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the recorded path (the Distributed view's summaries, its candidates' full
    ones), the candidates' summaries read each rank once, not once per candidate."""
    folder = group_job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    read = count_reads(monkeypatch)
    run.run_critical_path(_context(folder))
    for_the_path = len(read)
    gains = run_top_gains(_context(folder))
    assert len(gains["gains"]) >= 2
    assert len(read) - 2 * for_the_path == len(list(folder.glob("*.json")))


def test_one_graph_summarised_under_each_change_is_each_changes_summary(
    tmp_path: Path,
) -> None:
    """A rank's graph is built once for all the changes: each summary is byte for byte
    the one made for that change alone."""
    folder = one_rank_job(tmp_path / "job")
    changes = [
        {"kernel": "gemm_big", "factor": 0.5},
        {"kernel": "k1", "factor": 2.0},
        {"rank_all": 1, "factor": 0.5},
        {"collective": "all_reduce", "factor": 0.25},
        {"kernel": "no such kernel", "factor": 0.5},
    ]
    for trace in sorted(folder.glob("*.json")):
        model = build_model(str(trace))
        each = summarize_each(tuple(changes), model)
        alone = [summarize(c, build_model(str(trace))) for c in changes]
        # Kept as the first and what the others change, and read back from the pack's
        # bytes: each whole summary is the one made for its change alone.
        packed = msgspec.msgpack.decode(msgspec.msgpack.encode(each), type=ChangedSummaries)
        for kept in (each, packed):
            made = [msgspec.msgpack.encode(kept.summary(k)) for k in range(len(kept))]
            assert made == [msgspec.msgpack.encode(s) for s in alone]
        assert each.summary(4).matched == 0 and each.summary(0).matched > 0
        assert len(msgspec.msgpack.encode(each)) < 2.5 * len(msgspec.msgpack.encode(alone[0]))


def test_a_change_names_itself_again() -> None:
    """The query a candidate is summarised under names the same change."""
    from kinetoscope.analysis.critical_path.changes import Change, change_of

    for change in (
        Change("kernel", "gemm", 0.5),
        Change("op", "aten::mm", 2.0),
        Change("collective", "all_reduce", 0.25),
        Change("rank_all", "", 0.5),
    ):
        assert change_of(change_params(change)) == change


def test_the_cli_answers_top_gains_of_seventeen_ranks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beyond 16 workers `run_top_gains` answers (it was refused: "runs of at most 16
    workers"), through the CLI's pools: gains that save time, none of them negative."""
    import json

    from builders import rank_job

    rank_job(tmp_path / "logs" / "job", 17, steps=2, kernels_per_step=2)
    logdir = str(tmp_path / "logs")
    code = main(["report", logdir, "--view", "run_top_gains", "--format", "json", "--no-cache"])
    assert code == 0
    answer = json.loads(capsys.readouterr().out)["run_top_gains"]
    assert answer["gains"] and all(g["saving_us"] > 0 for g in answer["gains"])
    assert not answer["errors"]


def test_a_large_runs_gains_are_kept_for_the_next_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cache, the summaries under the candidates are kept in the run's pack (the
    first of each rank whole, the others as what differs): asked again, the same gains
    and no trace read."""
    folder = group_job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)

    def asked() -> dict[str, Any]:
        found = next(r for r in scan_logdir(str(folder.parent)) if r.name == folder.name)
        return dict(run_top_gains(RunContext((found,), None, {}, str(tmp_path / "cache"))))

    first = asked()
    read = count_reads(monkeypatch)
    assert asked() == first and read == []
    assert first == dict(run_top_gains(_context(folder)))  # made from nothing


@pytest.mark.parametrize("job", [one_rank_job, group_job])
def test_changes_whose_summaries_keep_the_first_ones_graphs_share_its_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, job: Any
) -> None:
    """The candidates under which every rank's summary differs from the first's only in
    what a change sets (own times, transfers) re-time the first candidate's join: one
    join for them all, and the same gains as each candidate joined alone."""
    from kinetoscope.analysis.critical_path import run_gains

    folder = job(tmp_path / "job")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    joins: list[int] = []
    joined = run_gains.in_rank_order
    monkeypatch.setattr(run_gains, "in_rank_order", lambda p: joins.append(len(p)) or joined(p))
    shared = dict(run_top_gains(_context(folder)))
    candidates = len(joins)
    monkeypatch.setattr(run_gains, "CHANGE_FIELDS", frozenset())
    joins.clear()
    alone = dict(run_top_gains(_context(folder)))
    assert alone == shared and shared["gains"]
    assert candidates < len(joins) >= 2  # each joined alone: one join a candidate


def test_a_summary_says_which_fields_a_change_moved(tmp_path: Path) -> None:
    """`ChangedSummaries.differs`: the fields of the k-th change's summary that are not
    the first's (none for the first)."""
    trace = sorted(one_rank_job(tmp_path / "job").glob("*.json"))[0]
    model = build_model(str(trace))
    both = summarize_each(({"kernel": "gemm_big", "factor": 0.5}, {}), model)
    assert both.differs(0) == set()
    assert {"change", "matched", "node_own"} <= both.differs(1)
    assert both.differs(1) == {
        f
        for f in msgspec.structs.asdict(both.first)
        if getattr(both.summary(1), f) != getattr(both.first, f)
    }
