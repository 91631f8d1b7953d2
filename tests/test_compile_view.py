"""The `compile` view on real logs: the recorded cases of tests/data/compile_logs (torch
2.13 on this CPU, beside traces of the same processes) and tlparse's test inputs (torch
of 2024-25). Every number is compared with an independent reading of the raw log
(tests/independent/compile_log.py, standard library only), and the facts the data's
README states are asserted one by one."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_path
from independent.compile_log import compile_numbers, read_log
from kinetoscope.api.dispatch import Dispatch
from kinetoscope.api.endpoints import RUN_VIEWS, run_pages
from kinetoscope.api.session import FixedListing, Session
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import Run, scan_logdir

DATA = Path(__file__).parent / "data" / "compile_logs"
TLPARSE = "tlparse/tests/inputs"
TLPARSE_LOGS = [
    "artifacts.log",
    "cache_hit_miss.log",
    "chromium_events.log",
    "comp_failure.log",
    "comp_metrics.log",
    "export_guard_added.log",
    "links.log",
    "simple.log",
    "simple_corrupted_json.log",
    "inductor_provenance_jit_log.txt",
]


def compile_json(runs: tuple[Run, ...], name: str) -> dict[str, Any]:
    session = Session(FixedListing(runs), False)
    try:
        call = Dispatch(RUN_VIEWS["compile"], session, {"run": name, "span": None}, {})
        return call.ready().json()  # type: ignore[no-any-return]
    finally:
        session.close()


@pytest.fixture(scope="module")
def recorded() -> Iterator[dict[str, dict[str, Any]]]:
    runs = scan_logdir(str(DATA))
    yield {run.name: compile_json(runs, run.name) for run in runs}


@pytest.fixture(scope="module")
def tlparse(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each tlparse input as the one log of a run (named as torch names its logs), and
    the multi-rank schedule as it is."""
    root = tmp_path_factory.mktemp("tlparse")
    for name in TLPARSE_LOGS:
        folder = root / name.split(".")[0]
        folder.mkdir()
        shutil.copy(
            corpus_path(f"{TLPARSE}/{name}"), folder / f"dedicated_log_torch_trace_{name}.log"
        )
    shutil.copytree(corpus_path(f"{TLPARSE}/multi_rank_schedule"), root / "multi_rank_schedule")
    runs = scan_logdir(str(root))
    return {run.name: compile_json(runs, run.name) for run in runs}


def _frame_named(raw: Any, cid: str, want: dict[str, Any]) -> tuple[Any, Any]:
    """A compile's frame as its metrics name it; one whose metrics name none (stopped at
    the recompile limit) by the first other compile of its frame id that does."""
    if want["frame"] is not None or "/" not in cid:
        return want["frame"], want["line"]
    frame_id = cid.partition("/")[0]
    for other, facts in raw.compiles.items():
        named = compile_numbers(facts)
        if other != cid and other.partition("/")[0] == frame_id and named["frame"]:
            return named["frame"], named["line"]
    return None, None


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.6)


def _agrees_with_the_raw_log(view: dict[str, Any], log_path: Path, log_name: str) -> None:
    raw = read_log(log_path)
    compiles = {c["compile_id"]: c for c in view["compiles"] if c["log"] == log_name}
    with_metrics = {cid for cid, f in raw.compiles.items() if f.metrics is not None}
    assert with_metrics <= set(compiles), log_name
    recompiles = {r["compile_id"]: r for r in view["recompiles"] if r["rank"] == raw.rank}
    breaks: dict[str, int] = {}
    for b in view["graph_breaks"]:
        if b["rank"] == raw.rank:
            breaks[b["compile_id"]] = breaks.get(b["compile_id"], 0) + 1
    for cid, facts in raw.compiles.items():
        if cid not in compiles:
            continue
        want, got = compile_numbers(facts), compiles[cid]
        assert _close(got["dur_us"], want["dur_us"]), cid
        stages = [
            got["stages"][k] for k in ("dynamo_us", "aot_autograd_us", "inductor_us", "code_gen_us")
        ]
        assert all(_close(a, b) for a, b in zip(stages, want["stages"])), (
            cid,
            stages,
            want["stages"],
        )
        cache = got["cache"]
        assert {k: cache[k] for k in want["cache"]} == want["cache"], cid
        assert (got["frame"], got["line"]) == _frame_named(raw, cid, want), cid
        assert (got["status"] == "failed") == bool(want["fail_type"])
        assert got["reason"] == (want["reasons"][0] if want["reasons"] else None), cid
        if want["reasons"]:
            assert recompiles[cid]["reasons"] == want["reasons"]
        assert breaks.get(cid, 0) == want["graph_breaks"], cid
        bwd = got["backward"]
        assert _close(bwd["dur_us"] if bwd else None, want["backward_dur_us"]), cid
        assert set(got["kernels"]) == want["kernels"], cid
    assert raw.rank == next((lg["rank"] for lg in view["logs"] if lg["file"] == log_name), None)


def test_every_recorded_log_agrees_with_the_raw_text(recorded: dict[str, dict[str, Any]]) -> None:
    checked = 0
    for run, view in recorded.items():
        for info in view["logs"]:
            assert info["error"] is None and info["skipped"] == 0, info
            _agrees_with_the_raw_log(view, DATA / run / info["file"], info["file"])
            checked += 1
        assert view["events_total"] == sum(
            read_log(DATA / run / info["file"]).phase_count for info in view["logs"]
        )
    assert checked == 10


def test_every_tlparse_input_agrees_with_the_raw_text(tlparse: dict[str, dict[str, Any]]) -> None:
    for run, view in tlparse.items():
        (root,) = {Path(corpus_path(TLPARSE))}
        for info in view["logs"]:
            if run == "multi_rank_schedule":
                path = root / run / info["file"]
            else:
                path = (
                    root / info["file"].removeprefix("dedicated_log_torch_trace_")[: -len(".log")]
                )
            _agrees_with_the_raw_log(view, path, info["file"])


def test_graph_break_case(recorded: dict[str, dict[str, Any]]) -> None:
    view = recorded["graph_break"]
    ids = [(c["compile_id"], c["frame"], c["line"]) for c in view["compiles"]]
    assert ids == [("0/0", "forward", 58), ("1/0", "torch_dynamo_resume_in_forward_at_60", 60)]
    assert [round(c["dur_us"] / 1e6, 1) for c in view["compiles"]] == [36.2, 3.1]
    assert all(c["graph_breaks"] == 1 and c["backward"] for c in view["compiles"])
    (brk,) = view["graph_breaks"]
    assert (brk["compile_id"], brk["file"], brk["line"]) == (
        "0/0",
        "/repo/samples/record_compile_logs.py",
        60,
    )
    assert brk["reason"] == "Call to `torch._dynamo.graph_break()`"
    assert brk["user"] == {
        "file": "/repo/samples/record_compile_logs.py",
        "line": 60,
        "name": "forward",
    }
    assert [a["rule"] for a in view["advice"]] == ["graph_break", "compile_in_window"]
    (step,) = view["steps"]
    assert step["step"] == 0 and step["text"].startswith(
        "step 0: 45.8 s compiling frame 0/0 (`forward`, record_compile_logs.py:58)"
    )


def test_recompiles_from_shapes(recorded: dict[str, dict[str, Any]]) -> None:
    view = recorded["recompile_shapes"]
    assert [c["compile_id"] for c in view["compiles"]] == ["0/0", "0/1", "0/2"]
    assert [(r["compile_id"], r["kind"], r["detail"], r["step"]) for r in view["recompiles"]] == [
        ("0/1", "shape", "tensor 'x' size of dim 0: 8 → 4", 2),
        ("0/2", "shape", "tensor 'x' size of dim 0: 4 → 6", 4),
    ]
    assert view["recompiles"][1]["reasons"] == [
        "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 6",
        "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 6",
    ]
    (dynamic,) = [a for a in view["advice"] if a["rule"] == "mark_dynamic"]
    assert "8 → 4 → 6" in dynamic["text"] and "mark_dynamic(x, 0)" in dynamic["text"]
    assert dynamic["compile_ids"] == ["0/1", "0/2"]
    assert [s["step"] for s in view["steps"]] == [0, 2, 4]


def test_recompile_from_a_python_value(recorded: dict[str, dict[str, Any]]) -> None:
    view = recorded["recompile_value"]
    (r,) = view["recompiles"]
    assert (r["compile_id"], r["kind"], r["guard"], r["step"]) == (
        "0/1",
        "value",
        "self.residual == False",
        3,
    )
    # The whole file, from the reason's user stack (the guard's comment keeps its tail).
    whole = "/repo/samples/record_compile_logs.py"
    assert r["source"] == {"file": whole, "line": 73, "name": "forward"}
    (value,) = [a for a in view["advice"] if a["rule"] == "value_guard"]
    assert (value["file"], value["line"]) == (whole, 73)
    # Its log lines' prefixes are Los Angeles time; the times read are the epoch's.
    assert view["alignments"][0]["checked"] > 0


def test_int_guards_say_what_torch_did(recorded: dict[str, dict[str, Any]]) -> None:
    """`recompile_ints`: an int argument recompiled once, then torch made it dynamic (its
    later values compiled nothing): no advice. A module's int attribute recompiled at each
    value until the recompile limit: one finding of 3 recompiles, not one a value, and the
    compile stopped at the limit is named by its frame, not `None`."""
    view = recorded["recompile_ints"]
    shift = [r for r in view["recompiles"] if r["frame"] == "_shift"]
    assert [(r["compile_id"], r["guard"]) for r in shift] == [("1/1", "n == 1")]
    attribute = [r for r in view["recompiles"] if r["frame"] == "forward"]
    assert [r["compile_id"] for r in attribute] == ["0/1", "0/2", "0/3"]
    assert all(r["source"]["file"].endswith("samples/record_compile_logs.py") for r in attribute)
    (limited,) = [c for c in view["compiles"] if c["compile_id"] == "0/3"]
    assert (limited["frame"], limited["status"]) == ("forward", "failed")
    (value,) = [a for a in view["advice"] if a["rule"] == "value_guard"]
    assert value["compile_ids"] == ["0/1", "0/2", "0/3"]
    assert "recompiled 3 times because the int `self.k` changed" in value["text"]
    assert "allow_unspec_int_on_nn_module" in value["text"]
    assert not any("`n`" in a["text"] or "n == 1" in a["text"] for a in view["advice"])
    assert any(a["rule"] == "recompile_limit" for a in view["advice"])


def test_a_backend_failure(recorded: dict[str, dict[str, Any]]) -> None:
    view = recorded["compile_failure"]
    (c,) = view["compiles"]
    assert c["status"] == "failed" and c["backward"] is None
    (failure,) = view["failures"]
    assert failure["fail_type"] == "BackendCompilerFailed"
    raised = "RuntimeError: record_compile_logs: this backend always fails"
    assert failure["reason"] == f"backend='_fail_backend' raised:\n{raised}"
    assert failure["user"] is None and failure["suppressed"] is True
    assert view["advice"][0]["rule"] == "compile_failure"


def test_cold_and_warm_cache(recorded: dict[str, dict[str, Any]]) -> None:
    (warm,) = recorded["cache_hit"]["compiles"]
    assert warm["cache"] == {
        "state": "hit",
        "inductor_hits": 2,
        "inductor_misses": 0,
        "aot_hits": 1,
        "aot_misses": 0,
        "time_saved_us": 25629989.0,  # remote_cache_time_saved_s (the artifact says 27487 ms)
    }
    assert warm["backward"] is None and warm["stages"]["inductor_us"] is None
    (cold,) = recorded["cache_hit/cold"]["compiles"]
    assert cold["cache"]["state"] == "miss" and cold["cache"]["inductor_misses"] == 1
    assert cold["backward"]["cache"]["inductor_misses"] == 1
    assert round(cold["dur_us"] / 1e6, 1) == 25.2 and round(warm["dur_us"] / 1e6, 1) == 4.1
    # The cold run's log has no trace beside it: listed, placed nowhere.
    assert cold["worker"] is None and recorded["cache_hit/cold"]["alignments"][0]["worker"] is None


def test_two_ranks_matched_by_rank(recorded: dict[str, dict[str, Any]]) -> None:
    view = recorded["two_ranks"]
    assert [(a["rank"], a["worker"], a["matched_by"]) for a in view["alignments"]] == [
        (0, "worker0", "rank"),
        (1, "worker1", "rank"),
    ]
    for rank in (0, 1):
        mine = [c for c in view["compiles"] if c["rank"] == rank]
        assert [c["compile_id"] for c in mine] == ["0/0", "1/0", "2/0", "3/0", "4/0"]
        assert mine[-1]["graph_op_count"] == 3 and mine[-1]["graph_breaks"] == 3
        assert {b["compile_id"] for b in view["graph_breaks"] if b["rank"] == rank} == {
            "0/0",
            "1/0",
            "2/0",
        }
    ddp = [a for a in view["advice"] if a["rule"] == "graph_break"]
    assert any(
        "distributed.py:1757" in a["text"] and "record_compile_logs.py" in a["text"] for a in ddp
    )


def test_alignment_holds_where_the_trace_recorded_the_phases(
    recorded: dict[str, dict[str, Any]],
) -> None:
    """README: the log's phase begins 0.19-17.5 ms before the trace's annotation of it."""
    for run in ("graph_break", "recompile_shapes", "recompile_value", "cache_hit", "two_ranks"):
        for a in recorded[run]["alignments"]:
            assert a["checked"] > 0, run
            assert 0 < a["median_error_us"] < 1000, run
            assert a["max_error_us"] < 30_000, run
            assert a["outside_window"] == 0, run


def test_a_compile_before_the_profiled_window(recorded: dict[str, dict[str, Any]]) -> None:
    view = recorded["before_window"]
    (align,) = view["alignments"]
    assert align["checked"] == 0 and align["outside_window"] == 2 and align["in_window"] == 0
    assert "outside the trace's time" in align["note"]
    assert view["steps"] == [] and all(c["step"] is None for c in view["compiles"])
    # README: its compiles end 139 ms before the trace's first event.
    first = float(
        build_model(str(next((DATA / "before_window").glob("worker0*")))).events["ts"].min()
    )
    for c in view["compiles"]:
        assert c["trace_start_us"] + c["dur_us"] < first - 100_000


def test_tlparse_inputs(tlparse: dict[str, dict[str, Any]]) -> None:
    (failure,) = tlparse["comp_failure"]["failures"]
    assert failure["fail_type"] == "BackendCompilerFailed"
    assert failure["reason"] == "backend='broken_backend' raised:\nRuntimeError: broken backend"
    assert [c["attempts"] for c in tlparse["comp_metrics"]["compiles"]] == [2, 2, 1]
    assert len(tlparse["comp_metrics"]["graph_breaks"]) == 2  # from restart_reasons
    hit_miss = {c["compile_id"]: c["cache"] for c in tlparse["cache_hit_miss"]["compiles"]}
    assert hit_miss["1/0"]["state"] == "partial"
    simple = tlparse["simple"]["compiles"][0]
    assert simple["dur_us"] == 1659332.0  # dynamo_cumulative_compile_time_us (no *_time_s)
    corrupted = tlparse["simple_corrupted_json"]
    assert corrupted["events_total"] == tlparse["simple"]["events_total"] - 1
    assert corrupted["logs"][0]["skipped"] == 1 and corrupted["logs"][0]["warnings"]
    assert corrupted["compiles"][0]["dur_us"] == simple["dur_us"]
    ranks = tlparse["multi_rank_schedule"]
    assert sorted({c["rank"] for c in ranks["compiles"]}) == [0, 1, 2]
    export = tlparse["export_guard_added"]
    assert export["compiles"] == [] and export["logs"][0]["error"] is None
    provenance = tlparse["inductor_provenance_jit_log"]["kernels"]
    assert {k["name"] for k in provenance} == {"cpp_fused_gelu_1", "cpp_fused_mul_relu_sigmoid_0"}
    assert [s["compile_id"] for s in provenance[0]["compiles"]] == ["0/0"]


def test_kernels_name_their_compiles_and_files(recorded: dict[str, dict[str, Any]]) -> None:
    """A recompile generates kernels of the same names again, in files of its own."""
    kernels = {k["name"]: k["compiles"] for k in recorded["recompile_shapes"]["kernels"]}
    sites = kernels["cpp_fused_gelu_0"]
    assert [s["compile_id"] for s in sites] == ["0/0", "0/1", "0/2"]
    files = [f for s in sites for f in s["wrappers"]]
    assert len(files) == len(set(files)) and all(f.endswith(".py") for f in files)


def test_one_bad_log_is_its_own_error(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DATA / "graph_break", run)
    (run / "torch_trace" / "dedicated_log_torch_trace_empty.log").write_text("")
    (run / "torch_trace" / "dedicated_log_torch_trace_other.log").write_text("not a log\n")
    runs = scan_logdir(str(tmp_path))
    view = compile_json(runs, "run")
    errors = {lg["file"].rsplit("_", 1)[-1]: lg["error_kind"] for lg in view["logs"]}
    assert errors == {"empty.log": "empty_file", "other.log": "not_a_log", "rdfc25tt.log.gz": None}
    assert len(view["compiles"]) == 2


def test_a_run_without_compile_logs_is_not_offered_the_view(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(next((DATA / "graph_break").glob("worker0*")), run)
    (listed,) = scan_logdir(str(tmp_path))
    assert listed.compile_logs == () and "compile" not in run_pages(listed)


def _line(meta: str) -> str:
    return f"V0101 00:00:00.000000 42 torch/_dynamo/utils.py:1] {meta}\n"


def _phase(name: str, ph: str, ts: float, cid: str = "0/0") -> str:
    import hashlib

    payload = (
        f'{{\n"name": "{name}",\n"ts": {ts},\n"args": {{"compile_id": "{cid}"}},\n"ph": "{ph}"\n}}'
    )
    digest = hashlib.md5(payload.encode()).hexdigest()
    body = "".join(f"\t{line}\n" for line in payload.split("\n"))
    envelope = '"frame_id": 0, "frame_compile_id": 0, "attempt": 0'
    return _line(f'{{"chromium_event": {{}}, {envelope}, "has_payload": "{digest}"}}') + body


def test_cuda_graph_rerecords_and_skips_from_a_built_log(tmp_path: Path) -> None:
    """A log built by hand: three `CUDAGraphNode.record` phases of one compile (two
    re-records) and a skip reason in its backward's metrics."""
    run = tmp_path / "run"
    run.mkdir()
    metrics = (
        '{"compilation_metrics": {"co_name": "f", "co_filename": "/m.py", "co_firstlineno": 3, '
        '"entire_frame_compile_time_s": 2.0, "start_time": 100.0, "cudagraph_skip_reason": null}, '
        '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}'
    )
    bwd = (
        '{"bwd_compilation_metrics": {"inductor_compile_time_s": 0.5, "code_gen_time_s": 0.25, '
        '"cudagraph_skip_reason": "skipping cudagraphs due to mutated inputs (1 instances)"}, '
        '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}'
    )
    text = _phase("dynamo", "B", 100e6) + _phase("dynamo", "E", 102e6) + _line(metrics)
    for at in (103e6, 104e6, 105e6):
        text += _phase("CUDAGraphNode.record", "B", at) + _phase(
            "CUDAGraphNode.record", "E", at + 10
        )
    (run / "dedicated_log_torch_trace_built.log").write_text(text + _line(bwd))
    view = compile_json(scan_logdir(str(tmp_path)), "run")
    (c,) = view["compiles"]
    assert (c["dur_us"], c["start_us"], c["cudagraph_records"]) == (2e6, 100e6, 3)
    assert c["backward"]["inductor_us"] == 250000.0 and c["backward"]["code_gen_us"] == 250000.0
    assert c["cudagraph_skip_reason"] == "skipping cudagraphs due to mutated inputs (1 instances)"
    assert [(n["kind"], n["count"]) for n in view["cudagraphs"]] == [
        ("skipped", 1),
        ("rerecorded", 2),
    ]
    rules = [a["rule"] for a in view["advice"]]
    assert rules == ["cudagraph_skip", "cudagraph_rerecord"]
    assert view["events_total"] == 4 and c["worker"] is None


def test_a_trace_that_fails_leaves_its_log_unaligned(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DATA / "graph_break" / "torch_trace", run / "torch_trace")
    (run / "worker0.1.pt.trace.json").write_text("{not json")
    view = compile_json(scan_logdir(str(tmp_path)), "run")
    (align,) = view["alignments"]
    assert align["worker"] is None and "worker0 could not be read" in align["note"]
    assert len(view["compiles"]) == 2 and view["steps"] == []
