"""One memory budget for every view of the process (issue 68): a view is admitted while
the admitted views' declared costs and its own fit under KINETOSCOPE_VIEW_MEMORY_MB, first
asked first admitted; one that does not fit yet waits in line (202 with its place in
every door), one that never could is `too_large` naming the setting; run-level jobs wait
in the same line on a bounded pool of threads."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import msgspec
import pytest
from builders import TraceBuilder, rank_job
from conftest import PluginClient
from kinetoscope.api.dispatch import Dispatch, Failed, Pending, Ready, dispatch
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.session import FixedListing, Session
from kinetoscope.cli.main import main
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.model.errors import TooLarge
from kinetoscope.model.trace_model import columns_nbytes
from kinetoscope.store import run_jobs, view_budget
from kinetoscope.store.view_budget import Queued, ViewBudget

MB = 1 << 20


def test_first_asked_first_admitted_and_a_freed_budget_wakes_the_line() -> None:
    budget = ViewBudget(100)
    with budget.admitted("a", 60, "a"):
        assert budget.running == 60
        with pytest.raises(Queued) as big, budget.admitted("b", 50, "b"):
            pass
        assert big.value.queue["place"] == 1 and big.value.queue["running_mb"] == 0
        # 30 fits beside a's 60 alone, not beside b waiting ahead of it: not passed.
        with pytest.raises(Queued) as small, budget.admitted("c", 30, "c"):
            pass
        assert small.value.queue["place"] == 2
        assert budget.place("b") == 1 and budget.place("c") == 2
        assert not big.value.event.is_set()
    assert big.value.event.is_set()  # a left: who waits asks again
    with budget.admitted("b", 50, "b"), budget.admitted("c", 30, "c"):
        assert budget.running == 80
    assert budget.running == 0 and budget.peak == 80


def test_a_view_bigger_than_the_whole_budget_is_too_large_naming_the_setting() -> None:
    budget = ViewBudget(10 * MB)
    with (
        pytest.raises(TooLarge, match="KINETOSCOPE_VIEW_MEMORY_MB"),
        budget.admitted("a", 11 * MB, "the critical_path view"),
    ):
        pass


def test_a_waiter_that_stopped_asking_leaves_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = ViewBudget(100)
    clock = [0.0]
    monkeypatch.setattr(view_budget.time, "monotonic", lambda: clock[0])
    with budget.admitted("a", 60, "a"):
        with pytest.raises(Queued), budget.admitted("gone", 50, "gone"):
            pass
        clock[0] = view_budget.STALE_S + 1
        with budget.admitted("here", 30, "here"):  # "gone" no longer holds the line
            assert budget.place("gone") is None


def test_a_job_on_its_own_thread_waits_its_turn() -> None:
    budget = ViewBudget(100)
    places: list[int] = []
    ran = threading.Event()

    def job() -> None:
        with budget.waited("job", 80, "job", lambda queue: places.append(queue["place"])):
            ran.set()

    with budget.admitted("a", 60, "a"):
        thread = threading.Thread(target=job)
        thread.start()
        assert not ran.wait(0.3)
    assert ran.wait(10)
    thread.join(10)
    assert places and places[0] == 1


def _span_logdir(root: Path) -> Path:
    t = TraceBuilder()
    for i in range(3):
        t.step(i + 1, 300.0 * i, 250)
        op = t.op("aten::mm", 300.0 * i + 10, 100)
        t.launch(300.0 * i + 20, 3, op, gpu_ts=300.0 * i + 30, gpu_dur=150)
    (root / "run").mkdir(parents=True)
    t.write(root / "run" / "worker0.1.pt.trace.json")
    return root


NAMES = {"run": "run", "worker": "worker0"}


def test_a_span_view_that_does_not_fit_waits_with_its_place_then_answers(
    tmp_path: Path,
) -> None:
    root = _span_logdir(tmp_path / "logs")
    session = Session(FixedListing(scan_logdir(str(root))), cache=False)
    try:
        Dispatch(ENDPOINTS["overview"], session, NAMES, {}).ready(30)
        path = session.runs()[0].workers[0].spans[0].path
        columns = columns_nbytes(session.store.model(path))
        need = int(ENDPOINTS["critical_path"].memory_cost * columns)
        session.store.view_budget = ViewBudget(2 * need)
        call = Dispatch(ENDPOINTS["critical_path"], session, NAMES, {})
        with session.store.view_budget.admitted("another view", 2 * need - 1, "another"):
            waiting = call.answer()
            assert isinstance(waiting, Pending) and waiting.event is not None
            assert waiting.body["queued"]["place"] == 1
            assert waiting.body["state"] == "ready"  # the trace loaded; the view waits
        assert waiting.event.is_set()
        answer = call.ready(30)
        assert isinstance(answer, Ready)
        alone = Session(FixedListing(scan_logdir(str(root))), cache=False)
        try:
            expected = Dispatch(ENDPOINTS["critical_path"], alone, NAMES, {}).ready(30)
            assert msgspec.json.decode(answer.body) == msgspec.json.decode(expected.body)
        finally:
            alone.close()
    finally:
        session.close()


def test_a_run_job_waits_in_the_same_line(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    rank_job(root / "job", 2)
    session = Session(FixedListing(scan_logdir(str(root))), cache=False)
    try:
        session.store.view_budget = ViewBudget(1 << 40)
        names = {"run": "job"}
        call = Dispatch(ENDPOINTS["run_critical_path"], session, names, {})
        with session.store.view_budget.admitted("another view", (1 << 40) - 1, "another"):
            seen = None
            for _ in range(200):
                pending = call.answer()
                assert isinstance(pending, Pending)
                seen = pending.body.get("queued")
                if seen:
                    break
                threading.Event().wait(0.02)
            assert seen is not None and seen["place"] == 1
        assert isinstance(call.ready(60), Ready)
    finally:
        session.close()


def test_every_door_says_too_large_when_a_view_can_never_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _span_logdir(tmp_path / "logs")
    monkeypatch.setenv("KINETOSCOPE_VIEW_MEMORY_MB", "0.001")  # 1 KB: no view fits
    client = PluginClient(root)
    client.wait_ready("run", "worker0")
    response = client.get("critical_path", **NAMES)
    assert response.status_code == 413
    assert "KINETOSCOPE_VIEW_MEMORY_MB" in response.get_data(as_text=True)
    code = main(["report", str(root), "--view", "critical_path", "--format", "json", "--no-cache"])
    out = json.loads(capsys.readouterr().out)
    assert code == 3 and out["critical_path"]["error"]["kind"] == "too_large"
    session = Session(FixedListing(scan_logdir(str(root))), cache=False)
    try:
        failed = dispatch(ENDPOINTS["critical_path"], session, NAMES, {})
        while isinstance(failed, Pending):
            failed = dispatch(ENDPOINTS["critical_path"], session, NAMES, {})
        assert isinstance(failed, Failed) and "KINETOSCOPE_VIEW_MEMORY_MB" in str(failed.error)
    finally:
        session.close()


def test_a_run_job_that_can_never_fit_is_413_not_a_failed_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "logs"
    rank_job(root / "job", 2)
    monkeypatch.setenv("KINETOSCOPE_VIEW_MEMORY_MB", "0.001")
    client = PluginClient(root)
    response = client.get("run_critical_path", run="job")
    for _ in range(600):
        if response.status_code != 202:
            break
        threading.Event().wait(0.05)
        response = client.get("run_critical_path", run="job")
    assert response.status_code == 413
    assert "KINETOSCOPE_VIEW_MEMORY_MB" in response.get_data(as_text=True)


def test_a_pair_view_waits_in_the_same_line(tmp_path: Path) -> None:
    root = _span_logdir(tmp_path / "logs")
    session = Session(FixedListing(scan_logdir(str(root))), cache=False)
    try:
        session.store.view_budget = ViewBudget(1 << 40)
        names = {**NAMES, "target_run": "run", "target_worker": "worker0"}
        call = Dispatch(ENDPOINTS["diff"], session, names, {})
        with session.store.view_budget.admitted("another view", (1 << 40) - 1, "another"):
            waiting = call.answer()
            for _ in range(200):  # the two loads first
                if isinstance(waiting, Pending) and "queued" in waiting.body:
                    break
                threading.Event().wait(0.02)
                waiting = call.answer()
            assert isinstance(waiting, Pending) and waiting.body["queued"]["place"] == 1
        assert isinstance(call.ready(30), Ready)
    finally:
        session.close()


def test_every_declared_cost_covers_its_measure_and_names_a_view() -> None:
    from kinetoscope.analysis.core.rules import load

    costs = load("view_costs")
    assert set(costs["cost"]) == set(costs["measured"])
    assert set(costs["cost"]) <= set(ENDPOINTS)
    for name, measured in costs["measured"].items():
        assert costs["cost"][name] >= 1.5 * measured - 1e-9, name


def test_a_run_of_many_small_ranks_needs_its_ranks_cost() -> None:
    """A run view joined from rank summaries holds per rank more than its small models'
    bytes say: on the 2,048-rank bench job (85 KB of JSON a rank) its need covers what was
    measured there (`rank_measured`), and each rank cost covers its measure."""
    from kinetoscope.analysis.core.rules import load

    costs = load("view_costs")
    assert set(costs["rank_cost"]) == set(costs["rank_measured"])
    files = [(f"rank{r}.pt.trace.json", 85_000) for r in range(2048)]
    for name, measured in costs["rank_measured"].items():
        assert costs["rank_cost"][name] >= 1.5 * measured - 1e-9, name
        assert ENDPOINTS[name].run_need(files) >= 1.5 * measured * 2048, name
    # A few big ranks: the models' estimate is the larger.
    big = [(f"rank{r}.pt.trace.json.gz", 200_000_000) for r in range(2)]
    whatif = ENDPOINTS["run_whatif"]
    assert whatif.run_need(big) == int(whatif.memory_cost * 2 * 200_000_000 * 5.0)


def test_one_number_for_the_whole_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """KINETOSCOPE_SERVER_MEMORY_MB shares one budget out: the models kept 40 %, the views
    computed at once 30 %, each of the two loads at once 15 % (their sum is the number); a
    part's own setting wins over its share."""
    from kinetoscope.ingest.limits import load_memory_bytes
    from kinetoscope.store.trace_store import TraceStore

    mb = 1 << 20
    monkeypatch.setenv("KINETOSCOPE_SERVER_MEMORY_MB", "6000")
    parts = (TraceStore().memory_budget, view_budget.view_budget_bytes())
    assert [p // mb for p in parts] + [load_memory_bytes() // mb] == [2400, 1800, 900]
    assert parts[0] + parts[1] + 2 * load_memory_bytes() == 6000 * mb
    monkeypatch.setenv("KINETOSCOPE_VIEW_MEMORY_MB", "500")
    assert view_budget.view_budget_bytes() == 500 * mb


def test_a_small_view_passes_a_bigger_one_waiting() -> None:
    """A view at most 1/32 of the budget that fits beside what runs is admitted at once,
    past a bigger one waiting for room; one a byte bigger keeps its place in line."""
    budget = ViewBudget(3200)
    with budget.admitted("a", 2000, "a"):
        with pytest.raises(Queued), budget.admitted("big", 1500, "big"):
            pass
        with budget.admitted("small", 100, "small"):  # 100 = 3200 / 32: backfilled
            assert budget.running == 2100 and budget.place("big") == 1
        with pytest.raises(Queued) as held, budget.admitted("not small", 101, "not small"):
            pass
        assert held.value.queue["place"] == 2


def test_a_small_run_job_is_not_held_behind_big_ones(tmp_path: Path) -> None:
    """Every thread of the run jobs' lane holds a job waiting for memory and a bigger view
    waits ahead in the budget's line: the Distributed view of a small run still answers
    (the small jobs' lane, the budget's backfill), as a run's compile view must while its
    critical path waits."""
    root = tmp_path / "logs"
    rank_job(root / "job", 2)
    session = Session(FixedListing(scan_logdir(str(root))), cache=False)
    release = threading.Event()
    try:
        total = 1 << 40
        session.store.view_budget = ViewBudget(total)
        for _ in range(run_jobs.RUN_JOB_THREADS):  # the main lane, every thread taken
            session.jobs._threads.submit(lambda: release.wait(60))
        waiter = threading.Thread(
            target=lambda: session.store.view_budget.waited("big", total // 2, "big").__enter__()
        )
        with session.store.view_budget.admitted("held", total // 2 + 1, "held"):
            waiter.start()  # waits in line: half the budget does not fit beside "held"
            for _ in range(100):
                if session.store.view_budget.place("big") == 1:
                    break
                threading.Event().wait(0.02)
            answer = Dispatch(ENDPOINTS["distributed"], session, {"run": "job"}, {}).ready(60)
            assert isinstance(answer, Ready)
            assert session.store.view_budget.place("big") == 1  # still waiting its turn
    finally:
        release.set()
        session.close()
