"""The critical path and what-if re-timing on built traces whose answers are worked out by
hand (tests/critical_path_jobs.py): a kernel on the critical path of one rank only, a
collective that hides a kernel (with and without the recorded stream wait), a host-bound
step with a blocking synchronize, a graph-replayed step; predictions are exact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import TraceBuilder
from critical_path_jobs import (
    BASE_NS,
    GEMM_US,
    ONE_RANK_STEPS,
    POST_US,
    TRANSFER_US,
    count_reads,
    graph_trace,
    hidden_job,
    host_bound_trace,
    one_rank_job,
)
from kinetoscope.analysis.critical_path.run import run_critical_path, run_whatif
from kinetoscope.analysis.critical_path.span import (
    critical_path_view,
    top_gains_view,
    whatif_view,
)
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.model.errors import ViewParamError
from kinetoscope.store.run_context import RunContext


def _run_context(folder: Path, **params: Any) -> RunContext:
    runs = scan_logdir(str(folder.parent))
    run = next(r for r in runs if r.name == folder.name)
    return RunContext((run,), None, params)


def _steps(view: dict[str, Any], key: str = "predicted_us") -> list[float]:
    return [s[key] for s in view["steps"]]


def test_a_kernel_on_the_path_of_one_rank_only(tmp_path: Path) -> None:
    folder = one_rank_job(tmp_path / "job")
    path = run_critical_path(_run_context(folder))
    assert [s["step_us"] for s in path["steps"]] == [770.0] * ONE_RANK_STEPS
    assert path["by_kind"]["kernel"] == pytest.approx(ONE_RANK_STEPS * (GEMM_US[0] + POST_US))
    assert path["by_kind"]["collective"] == pytest.approx(ONE_RANK_STEPS * TRANSFER_US)
    gemm = [s for s in path["segments"] if s["name"] == "gemm_big"]
    assert {s["rank"] for s in gemm} == {0} and {s["dur_us"] for s in gemm} == {GEMM_US[0]}
    assert sum(s["dur_us"] for s in path["segments"]) == pytest.approx(path["span_us"])
    cases = [
        ({"kernel": "gemm_big", "factor": 0.5}, 470.0),
        ({"kernel": "gemm_big", "factor": 0.5, "rank": 1}, 770.0),
        ({"kernel": "gemm_big", "factor": 0.25, "rank": 0}, 370.0),
        ({"collective": "all_reduce", "factor": 0.5}, 720.0),
    ]
    for params, expected in cases:
        view = run_whatif(_run_context(folder, **params))
        assert _steps(view) == [expected] * ONE_RANK_STEPS, params
        assert view["predicted_step_us"] == expected
        assert view["baseline_step_us"] == 770.0
    moved = run_whatif(_run_context(folder, kernel="gemm_big", factor=0.25, rank=0))
    gemm = [s for s in moved["critical_path"] if s["name"] == "gemm_big"]
    assert [(s["rank"], s["dur_us"]) for s in gemm] == [(1, GEMM_US[1])]  # the path moved


def test_a_collective_that_hides_a_kernel(tmp_path: Path) -> None:
    folder = hidden_job(tmp_path / "hidden")
    path = run_critical_path(_run_context(folder))
    assert path["step_us"] == 620.0
    assert "hidden" not in {s["name"] for s in path["segments"]}
    cases = [
        ({"kernel": "hidden", "factor": 0.5}, 620.0),
        ({"kernel": "hidden", "factor": 2.0}, 660.0),
        ({"kernel": "k1", "factor": 0.5}, 520.0),
        ({"collective": "all_reduce", "factor": 0.5}, 420.0),
    ]
    for params, expected in cases:
        assert run_whatif(_run_context(folder, **params))["predicted_step_us"] == expected
    # One rank alone: the same answers (both ranks arrive together, so no wait is hidden).
    model = build_model(str(folder / "rank0.pt.trace.json"))
    for params, expected in cases:
        assert whatif_view(model, params)["predicted_step_us"] == expected


def test_a_stream_wait_recorded_only_as_calls_is_inferred(tmp_path: Path) -> None:
    """The default profiler settings record no cuda_sync event: the wait of the all_reduce's
    stream on `k1` shows only as cudaEventRecord / cudaStreamWaitEvent calls. It is
    inferred (by timing: the all_reduce starts as k1 ends, later than its launch allows)
    and gives the recorded wait's answers, labelled as inferred."""
    folder = hidden_job(tmp_path / "unrecorded", record_waits=False)
    recorded = hidden_job(tmp_path / "recorded")
    cases = [
        ({"kernel": "k1", "factor": 0.5}, 520.0),
        ({"kernel": "hidden", "factor": 2.0}, 660.0),
        ({"collective": "all_reduce", "factor": 0.5}, 420.0),
    ]
    for params, expected in cases:
        view = run_whatif(_run_context(folder, **params))
        assert view["predicted_step_us"] == expected, params
        assert run_whatif(_run_context(recorded, **params))["predicted_step_us"] == expected
    said = [a for a in view["assumptions"] if "cudaStreamWaitEvent" in a]
    assert said and "1 cross-stream waits inferred (1 by timing" in said[0]


def test_a_host_bound_step_with_a_blocking_synchronize(tmp_path: Path) -> None:
    model = host_bound_trace().model(tmp_path)
    path = critical_path_view(model, {})
    assert [s["step_us"] for s in path["steps"]] == [1000.0, 1000.0]
    assert path["by_kind"]["cpu"] > path["by_kind"].get("kernel", 0.0)
    cases = [
        ({"op": "aten::conv2d", "factor": 0.5}, 800.0),
        ({"op": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "factor": 0}, 700.0),
        ({"kernel": "reduce", "factor": 3.0}, 1040.0),
        ({"kernel": "conv_kernel", "factor": 0.5}, 1000.0),
    ]
    for params, expected in cases:
        view = whatif_view(model, params)
        assert _steps(view) == [expected, expected], params
    assert any("blocked on GPU work" in a for a in path["assumptions"])


def test_a_graph_replayed_step(tmp_path: Path) -> None:
    model = graph_trace().model(tmp_path)
    path = critical_path_view(model, {})
    assert path["step_us"] == 430.0
    assert [s["name"] for s in path["segments"] if s["kind"] == "kernel"] == [
        "graph_k1",
        "graph_k2",
        "graph_k3",
    ]
    for params in (
        {"kernel": "graph_k2", "factor": 0.5},
        {"op": "aten::gelu", "factor": 0.5},
        {"op": "aten::linear", "factor": 0.5},
    ):
        assert whatif_view(model, params)["predicted_step_us"] == 330.0, params


def test_top_gains_rank_the_changes_by_saving(tmp_path: Path) -> None:
    model = host_bound_trace().model(tmp_path)
    gains = top_gains_view(model, {})["gains"]
    # halved, in each of the 2 steps: conv2d's 400 µs save 200, the DataLoader's 300 save
    # 150, item's 230 save 115 (the savings are the span's: both steps)
    assert [(g["name"][:9], g["saving_us"]) for g in gains[:3]] == [
        ("aten::con", 400.0),
        ("enumerate", 300.0),
        ("aten::ite", 230.0),
    ]
    by_name = {g["name"]: g for g in gains}
    assert "conv_kernel" not in by_name  # off the path: nothing to gain, not simulated
    assert by_name["reduce"]["saving_us"] == 20.0  # the synchronize waits for it
    assert by_name["aten::conv2d"]["predicted_step_us"] == 800.0
    assert all(g["saving_us"] > 0 for g in gains)
    assert all(a["saving_us"] >= b["saving_us"] for a, b in zip(gains, gains[1:]))


def test_a_change_that_names_nothing_is_refused(tmp_path: Path) -> None:
    model = host_bound_trace().model(tmp_path)
    with pytest.raises(ViewParamError, match="no kernel nope"):
        whatif_view(model, {"kernel": "nope", "factor": 0.5})
    with pytest.raises(ViewParamError, match="one change at a time"):
        whatif_view(model, {"kernel": "reduce", "op": "aten::item", "factor": 0.5})
    with pytest.raises(ViewParamError, match="factor"):
        whatif_view(model, {"kernel": "reduce"})


def _whole_trace_job(folder: Path) -> Path:
    return one_rank_job(folder, steps=False)


def _ranks_by_file_name_job(folder: Path) -> Path:
    return one_rank_job(folder, rank_header=False)


@pytest.mark.parametrize(
    "job", [one_rank_job, hidden_job, _whole_trace_job, _ranks_by_file_name_job]
)
def test_rank_summaries_give_the_whole_graphs_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, job: Any
) -> None:
    """A run too large to hold every rank's graph joins the ranks' summaries (each rank's
    local paths between its collectives): the same critical path, and here (no local path
    changes which port bound it) the same predictions, a change on one rank too (that rank
    as the run numbers it, also where the traces name no rank: the file names do); also
    where no step is recorded (one step, the whole trace, whose summary once asked for
    event -1 and failed)."""
    from kinetoscope.analysis.critical_path import run

    folder = job(tmp_path / "job")
    changes = [{"kernel": k, "factor": f} for k in ("gemm_big", "k1", "hidden") for f in (0.25, 2)]
    changes += [{"kernel": "gemm_big", "factor": 0.25, "rank": r} for r in (0, 1)]
    changes += [{"rank_all": 1, "factor": 0.5, "rank": 0}]
    whole = run_critical_path(_run_context(folder))
    whole_whatifs = [_try_whatif(folder, c) for c in changes]
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    reduced = run_critical_path(_run_context(folder))
    for key in ("step_us", "span_us", "by_kind", "by_name", "by_rank", "segments", "warnings"):
        assert reduced[key] == whole[key], key
    for change, answer in zip(changes, whole_whatifs):
        got = _try_whatif(folder, change)
        assert (got and got["predicted_step_us"]) == (answer and answer["predicted_step_us"])
        assert got is None or got["method"] == "summaries"


def _try_whatif(folder: Path, change: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return dict(run_whatif(_run_context(folder, **change)))
    except ViewParamError:  # the change names nothing in this job
        return None


def test_a_launch_delay_after_the_work_was_queued_is_said_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host-bound step with CUPTI's `queued` recorded (ns on the file's axis, as
    libkineto writes it): `reduce` is launched at +712, queued at +725 and starts at +730,
    so of its 18 µs delay 13 are the launch's and 5 the device holding queued work. The
    times and every prediction are those of the trace without `queued`."""
    t = host_bound_trace()
    queued_after = {330.0: 322.0, 730.0: 725.0}  # within a step: start -> queued
    for event in t.events:
        if event.get("cat") == "kernel":
            step_start = event["ts"] - event["ts"] % 1000
            at = step_start + queued_after[event["ts"] % 1000]
            event["args"]["queued"] = BASE_NS + int(at * 1000)
    (tmp_path / "queued").mkdir()
    model = t.model(tmp_path / "queued")
    plain_model = host_bound_trace().model(tmp_path)
    path, plain = critical_path_view(model, {}), critical_path_view(plain_model, {})
    assert [s["step_us"] for s in path["steps"]] == [1000.0, 1000.0]
    idle = [(s["name"], s["dur_us"]) for s in path["segments"] if s["kind"] == "idle"]
    assert idle.count(("queued on the GPU", 5.0)) == 2
    assert idle.count(("launch delay", 13.0)) == 2 and ("launch delay", 18.0) not in idle
    assert ("launch delay", 18.0) in [(s["name"], s["dur_us"]) for s in plain["segments"]]
    for params in ({"kernel": "reduce", "factor": 3.0}, {"op": "aten::conv2d", "factor": 0.5}):
        assert whatif_view(model, params)["steps"] == whatif_view(plain_model, params)["steps"]
    # A run's path says the same, whole graphs or rank summaries.
    from kinetoscope.analysis.critical_path import run

    folder = tmp_path / "logs" / "job"
    folder.mkdir(parents=True)
    t.write(folder / "rank0.1.pt.trace.json")
    whole = run_critical_path(_run_context(folder))
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    assert run_critical_path(_run_context(folder))["segments"] == whole["segments"]
    assert ("queued on the GPU", 5.0) in [(s["name"], s["dur_us"]) for s in whole["segments"]]


@pytest.mark.parametrize("full_graph_ranks", [16, 0])
def test_a_run_of_unreadable_ranks_says_why_per_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_graph_ranks: int
) -> None:
    """No rank could be read: an empty path and each rank's error, not a crash of the
    join (whole graphs or summaries)."""
    from kinetoscope.analysis.critical_path import run

    folder = tmp_path / "logs" / "job"
    folder.mkdir(parents=True)
    for rank in (0, 1):
        (folder / f"rank{rank}.pt.trace.json").write_text('{"traceEvents": [', encoding="utf-8")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", full_graph_ranks)
    view = run_critical_path(_run_context(folder))
    assert view["steps"] == [] and view["segments"] == []
    assert sorted(e["worker"] for e in view["errors"]) == ["rank0", "rank1"]
    assert all(e.get("message") for e in view["errors"])


@pytest.mark.parametrize("recorded", ["nothing", "one op", "one kernel"])
def test_a_trace_of_a_few_events_has_a_path(tmp_path: Path, recorded: str) -> None:
    """A trace with no call, step or range a piece holds (a cut file's first events, one
    op, one kernel not launched in the trace): its path, not an error."""
    t = TraceBuilder()
    if recorded == "one op":
        t.op("aten::mm", 10, 5)
    if recorded == "one kernel":
        t.events.append(
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
             "args": {"device": 0, "stream": 7, "correlation": 1}}
        )  # fmt: skip
    view = critical_path_view(t.model(tmp_path), {})
    want = {"nothing": {}, "one op": {"cpu": 5.0}, "one kernel": {"kernel": 5.0}}[recorded]
    assert view["by_kind"] == want
    assert view["span_us"] == (0.0 if recorded == "nothing" else 5.0)


@pytest.mark.parametrize("full_graph_ranks", [16, 0])
def test_steps_not_on_every_rank_are_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_graph_ranks: int
) -> None:
    """A run's step is one every rank has: rank 0 records steps, rank 1 none (its one step
    is the whole trace), so no step is joined, and the answer says why, per rank."""
    from kinetoscope.analysis.critical_path import run

    with_steps = one_rank_job(tmp_path / "a")
    without = one_rank_job(tmp_path / "b", steps=False)
    folder = tmp_path / "logs" / "job"
    folder.mkdir(parents=True)
    (with_steps / "rank0.pt.trace.json").rename(folder / "rank0.pt.trace.json")
    (without / "rank1.pt.trace.json").rename(folder / "rank1.pt.trace.json")
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", full_graph_ranks)
    view = run_critical_path(_run_context(folder))
    assert view["steps"] == []
    (said,) = [w for w in view["warnings"] if "not recorded on every rank" in w]
    assert said.startswith(f"{ONE_RANK_STEPS + 1} steps not recorded on every rank")
    assert "rank0: ProfilerStep#1, ProfilerStep#2, ProfilerStep#3" in said
    assert "rank1: Whole trace" in said


@pytest.mark.parametrize("on_rank", [None, 0])
def test_a_runs_whatif_reads_each_rank_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_rank: int | None
) -> None:
    """A change in a large run reads each rank's trace once. On every rank, each rank's
    summary under the change holds its recorded collectives and step bounds too: the
    baseline is joined from them (`stubs.recorded_stub`), not from recorded summaries
    made beside (a second summary a rank, once a second pass over every file). On one
    rank, the recorded summaries are joined again with that rank's made under the change.
    The answer is the one the recorded summaries and the changed ones, made one after the
    other and joined in full, give."""
    from kinetoscope.analysis.critical_path import run
    from kinetoscope.analysis.critical_path.summaries import tier

    folder = one_rank_job(tmp_path / "job")
    change: dict[str, Any] = {"kernel": "gemm_big", "factor": 0.25}
    if on_rank is not None:
        change["rank"] = on_rank
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    read = count_reads(monkeypatch)
    context = _run_context(folder, **change)
    answer = dict(run_whatif(context))
    assert sorted(read) == sorted(str(p) for p in folder.glob("*.json"))  # each once
    picks = run.chosen_spans(context.run, context.span)
    parts, errors, paths = run._recorded_parts(context, picks)
    if on_rank is None:
        summaries, failed = run.summaries_of(context, picks, tier(change))
        changed = run.reduced_parts(context, picks, summaries, failed, change)[0]
    else:
        changed = run._changed_on_rank(context, parts, paths, change, on_rank)
    joint = run.in_rank_order(parts)
    one_by_one = run.whatif_of(joint, "run", context.params, run.in_rank_order(changed))
    assert answer == {**one_by_one, "errors": errors}
    assert answer["method"] == "summaries" and answer["saving_us"] > 0


def test_a_runs_summaries_are_kept_for_the_next_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cache: a what-if's summaries (one a rank, under its change) are kept where
    the same what-if finds them (no trace read again); the run's critical path keeps what
    it read (the Distributed view's summaries, its candidates' full ones), where it finds
    them next. Every answer is the one made from nothing."""
    from kinetoscope.analysis.critical_path import run

    folder = one_rank_job(tmp_path / "job")
    traces = sorted(str(p) for p in folder.glob("*.json"))
    change = {"kernel": "gemm_big", "factor": 0.25}
    other = {"kernel": "gemm_big", "factor": 2.0}
    monkeypatch.setattr(run, "FULL_GRAPH_RANKS", 0)
    cold = {
        "path": run_critical_path(_run_context(folder)),
        "change": dict(run_whatif(_run_context(folder, **change))),
        "other": dict(run_whatif(_run_context(folder, **other))),
    }
    read = count_reads(monkeypatch)

    def asked(**params: Any) -> tuple[dict[str, Any], list[str]]:
        run_ = next(r for r in scan_logdir(str(folder.parent)) if r.name == folder.name)
        context = RunContext((run_,), None, params, str(tmp_path / "cache"))
        view = run_whatif(context) if params else run_critical_path(context)
        done = sorted(read)
        read.clear()
        return dict(view), done

    assert asked(**change) == (cold["change"], traces)  # one reading each
    assert asked(**change) == (cold["change"], [])  # the change's summaries were kept
    assert asked(**other) == (cold["other"], traces)  # another change: its own
    path, done = asked()  # every rank for the stubs, the path's candidates again
    assert path == cold["path"] and len(traces) < len(done) < 2 * len(traces)
    assert asked() == (cold["path"], [])  # both kept
    assert asked(**change) == (cold["change"], [])
