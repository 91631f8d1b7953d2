"""The trend: the change detector by hand, then logdirs built from real corpus traces with
known slowdowns under noise (a kernel, an op, a collective, a memory peak): each named at
its first run, nothing else of its kind named; the cache (a new run: only it is read), the
baseline mode and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_model, corpus_path
from kinetoscope.analysis.kernels import view as kernels_analysis
from kinetoscope.analysis.trends import summaries as trend_summaries
from kinetoscope.analysis.trends.detect import Rule, baseline_changes, rolling_changes
from kinetoscope.analysis.trends.summary import TraceSummary, combine
from kinetoscope.analysis.trends.view import trend_view
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext
from trend_logdirs import Slowdown, build_trend_logdir, kernel_named, memory_event

NCCL = "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
BERT = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
NO_STEPS: list[float | None] = []

# --- the detector, by hand ---------------------------------------------------------------


def test_rolling_names_a_step_change_once_at_its_first_run() -> None:
    values: list[float | None] = [100, 101, 99, 100, 130, 131, 129, 130]
    changes = rolling_changes(("kernel", "k"), values, NO_STEPS, Rule())
    # Run 4: median of [100, 101, 99, 100] = 100, MAD = 1.4826 × median(0, 1, 1, 0) =
    # 0.7413, threshold max(5, 2.22) = 5; 130 - 100 = 30 > 5. The segment restarts at 4:
    # runs 5..7 are compared with [130, ...] and stay within 5 % of it.
    assert [(c.run_index, c.baseline, c.value, c.change_pct) for c in changes] == [
        (4, 100, 130, 30.0)
    ]
    assert changes[0].regression


def test_rolling_threshold_follows_the_spread_of_a_noisy_baseline() -> None:
    # Runs 1..4 stay within their thresholds (each within 5 % of its baseline's median, or
    # within 3 MAD). Run 5's baseline [100, 104, 97, 103, 96]: median 100, deviations
    # 0, 4, 3, 3, 4 → MAD 1.4826 × 3 = 4.4478, threshold 3 × 4.4478 = 13.34 (above the
    # 5 % floor): 112 is within it, 114 is not.
    noisy: list[float | None] = [100, 104, 97, 103, 96]
    assert rolling_changes(("op", "x"), [*noisy, 112], NO_STEPS, Rule()) == []
    named = rolling_changes(("op", "x"), [*noisy, 114], NO_STEPS, Rule())
    assert [(c.run_index, round(c.threshold, 2), c.change_pct) for c in named] == [(5, 13.34, 14.0)]


def test_rolling_window_and_a_return_named_as_the_opposite() -> None:
    # Runs 0..2 are the first baseline (min_history 3), not judged; after the change at
    # run 3 the baseline is the runs from 3 on (window 2: the last two).
    values: list[float | None] = [50, 50, 50, 100, 100, 50]
    changes = rolling_changes(("kernel", "k"), values, NO_STEPS, Rule(window=2))
    assert [(c.run_index, c.regression, c.change_pct) for c in changes] == [
        (3, True, 100.0),
        (5, False, -50.0),
    ]
    assert rolling_changes(("kernel", "k"), [50, 100, 100], NO_STEPS, Rule()) == []


def test_unknown_values_are_never_compared_and_a_new_name_has_no_percent() -> None:
    values: list[float | None] = [10, None, 10, 10.2, 0.0]
    changes = rolling_changes(("kernel", "k"), values, NO_STEPS, Rule())
    assert [(c.run_index, c.change_pct, c.regression) for c in changes] == [(4, -100.0, False)]
    appeared = rolling_changes(("kernel", "k"), [0.0, 0.0, 0.0, 5.0], NO_STEPS, Rule())
    assert [(c.run_index, c.change_pct) for c in appeared] == [(3, None)]


def test_step_floor_keeps_tiny_kernels_out() -> None:
    # A 2 µs kernel doubling in a 1,000 µs step: 2 µs < 0.5 % of the step (5 µs).
    steps: list[float | None] = [1000.0] * 4
    assert rolling_changes(("kernel", "k"), [2, 2, 2, 4], steps, Rule()) == []
    # The step itself has no such floor.
    step = rolling_changes(("step", "step"), [1000, 1000, 1000, 1100], steps, Rule())
    assert [c.change_pct for c in step] == [10.0]


def test_baseline_mode_names_each_direction_once() -> None:
    values: list[float | None] = [100, 103, 120, 125, 90, 80]
    changes = baseline_changes(("op", "x"), values, NO_STEPS, 0, Rule())
    assert [(c.run_index, c.regression, c.change_pct) for c in changes] == [
        (2, True, 20.0),
        (4, False, -10.0),
    ]


def _worker(step: float, start: float, ops: dict[str, float], peak: float) -> TraceSummary:
    return TraceSummary(
        version="1",
        start_us=start,
        device_type="GPU",
        devices=["H100"],
        step_count=4,
        step_mean_us=step,
        step_median_us=step,
        phases_us={"kernel": step / 2, "other": step / 2},
        op_metric="device_self_us",
        ops=ops,
        ops_complete=True,
        kernels={"gemm_k": step / 2},
        kernels_complete=True,
        kernel_work={"gemm_k": "gemm"},
        collectives={"all_reduce": 10.0},
        memory_peak_bytes={"GPU0": peak},
    )


def test_a_run_of_several_workers_is_combined() -> None:
    """The slowest worker's step, the mean per worker of the rest (a name a worker lacks
    counts 0), the earliest start, each device's highest peak."""
    run = combine(
        [
            _worker(100.0, 5.0, {"aten::mm": 40.0, "aten::add": 2.0}, 1000.0),
            _worker(120.0, 3.0, {"aten::mm": 60.0}, 3000.0),
        ]
    )
    assert (run.workers, run.start_us, run.step_median_us, run.step_mean_us) == (
        2,
        3.0,
        120.0,
        120.0,
    )
    assert run.ops == {"aten::mm": 50.0, "aten::add": 1.0}
    assert run.phases_us == {"kernel": 55.0, "other": 55.0}
    assert run.kernels == {"gemm_k": 55.0} and run.collectives == {"all_reduce": 10.0}
    assert run.memory_peak_bytes == {"GPU0": 3000.0}


# --- logdirs of real traces --------------------------------------------------------------


def _kernels_of_op(rel: str, op: str) -> set[str]:
    rows = kernels_analysis.kernels(corpus_model(rel), "op")["rows"]
    return {r["name"] for r in rows if r["op_name"] == op}


def _kernel(rel: str, fragment: str) -> str:
    rows = kernels_analysis.kernels(corpus_model(rel), "name")["rows"]
    return next(r["name"] for r in rows if fragment in r["name"])


@pytest.fixture(scope="module")
def nccl_logdir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """9 runs of an A100 DDP rank: a cuDNN layout kernel 1.5× from run 3, every kernel of
    aten::cudnn_batch_norm 1.5× from run 5, the NCCL kernels (all_reduce) 1.5× from run 7;
    ±2 % noise on every duration."""
    source = corpus_path(NCCL)
    layout = _kernel(NCCL, "nchwToNhwcKernel<float, float, float, false, true")
    batch_norm = _kernels_of_op(NCCL, "aten::cudnn_batch_norm")
    # A collective's kernel belongs to the nccl:* call around its launch (optree.collective_owner)
    nccl = _kernels_of_op(NCCL, "nccl:all_reduce") | _kernels_of_op(NCCL, "nccl:broadcast")
    slowdowns = [
        Slowdown(3, 1.5, kernel_named({layout})),
        Slowdown(5, 1.5, kernel_named(batch_norm)),
        Slowdown(7, 1.5, kernel_named(nccl)),
    ]
    root = tmp_path_factory.mktemp("nccl_trend")
    built = build_trend_logdir(source, root, 9, slowdowns, noise=0.02, seed=7)
    cache = tmp_path_factory.mktemp("nccl_cache")
    view = trend_view(RunContext(scan_logdir(str(root)), cache_dir=str(cache)))
    return built, view, {"layout": layout, "batch_norm": batch_norm, "nccl": nccl}, cache


def _named(view: Any, metric: str, key: str = "regressions") -> list[tuple[str, str]]:
    return [(c["name"], c["first_run"]) for c in view[key] if c["metric"] == metric]


def test_runs_are_in_trace_start_order(nccl_logdir: Any) -> None:
    built, view, _, _ = nccl_logdir
    assert [r["run"] for r in view["runs"]] == built.names
    assert built.names != sorted(built.names)  # the names alone would give another order
    starts = [r["start_us"] for r in view["runs"]]
    assert all(b - a == pytest.approx(3600e6, abs=1e3) for a, b in zip(starts, starts[1:]))


def test_each_slowdown_is_named_at_its_first_run_and_no_other_kernel(nccl_logdir: Any) -> None:
    built, view, picked, _ = nccl_logdir
    names = built.names
    # The layout kernel once, at its first slower run; beside it only batch-norm kernels at
    # run 5 (those whose +50 % is above 0.5 % of the step); the NCCL kernels count as the
    # collective, not as kernels.
    kernels = _named(view, "kernel")
    assert kernels.count((picked["layout"], names[3])) == 1
    others = [k for k in kernels if k != (picked["layout"], names[3])]
    assert all(name in picked["batch_norm"] and run == names[5] for name, run in others)
    assert _named(view, "kernel", "improvements") == []
    assert ("aten::cudnn_batch_norm", names[5]) in _named(view, "op")
    assert _named(view, "collective") == [("all_reduce", names[7])]
    collective = next(c for c in view["regressions"] if c["metric"] == "collective")
    assert collective["change_pct"] == pytest.approx(50, abs=5)
    assert (collective["diff_base_run"], collective["diff_target_run"]) == (names[6], names[7])
    # Ops are named only at the runs that slowed down, and only ops that launch the
    # slowed kernels (the op slowdown itself, the convolutions of the layout kernel, the
    # collective's own op).
    assert {run for _, run in _named(view, "op")} <= {names[3], names[5], names[7]}
    assert ("nccl:all_reduce", names[7]) in _named(view, "op")
    assert _named(view, "memory_peak") == [] and _named(view, "step") == []


def test_a_new_run_reads_only_its_trace(
    nccl_logdir: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built, view, _, cache = nccl_logdir
    summarised: list[Any] = []
    real = trend_summaries.summarize_trace

    def counting(model: Any) -> Any:
        summarised.append(model)
        return real(model)

    monkeypatch.setattr(trend_summaries, "summarize_trace", counting)
    again = trend_view(RunContext(scan_logdir(str(built.root)), cache_dir=str(cache)))
    assert summarised == [] and again == view  # all from the cache
    newest = build_trend_logdir(corpus_path(NCCL), tmp_path / "one", 1, [], 0.0, seed=1)
    (newest.root / newest.names[0]).rename(built.root / "night_new")
    grown = trend_view(RunContext(scan_logdir(str(built.root)), cache_dir=str(cache)))
    assert len(summarised) == 1 and len(grown["runs"]) == 10


def test_baseline_mode_compares_every_run_with_one(nccl_logdir: Any) -> None:
    built, _, picked, cache = nccl_logdir
    names = built.names
    view = trend_view(
        RunContext(
            scan_logdir(str(built.root)), params={"baseline": names[0]}, cache_dir=str(cache)
        )
    )
    assert view["rule"]["mode"] == "baseline"
    assert (picked["layout"], names[3]) in _named(view, "kernel")
    assert _named(view, "collective") == [("all_reduce", names[7])]
    # The diff link is still the run before.
    assert all(c["diff_base_run"] != c["diff_target_run"] for c in view["regressions"])


@pytest.fixture(scope="module")
def memory_logdir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """7 runs of an H100 BERT inference trace, every allocation 1.3× from run 4."""
    root = tmp_path_factory.mktemp("bert_trend")
    slow = [Slowdown(4, 1.3, memory_event, memory=True)]
    built = build_trend_logdir(corpus_path(BERT), root, 7, slow, noise=0.02, seed=11)
    return built, trend_view(RunContext(scan_logdir(str(root))))


def test_memory_peak_is_named_at_its_first_run(memory_logdir: Any) -> None:
    built, view = memory_logdir
    gpu = [c for c in view["regressions"] if c["metric"] == "memory_peak" and c["name"] == "GPU0"]
    assert [(c["first_run"], c["unit"]) for c in gpu] == [(built.names[4], "bytes")]
    assert gpu[0]["change_pct"] == pytest.approx(30, abs=0.5)
    assert _named(view, "kernel") == [] and _named(view, "kernel", "improvements") == []
    assert view["runs"][4]["memory_peak_bytes"]["GPU0"] == pytest.approx(
        1.3 * view["runs"][3]["memory_peak_bytes"]["GPU0"], rel=1e-3
    )


# --- the CLI -----------------------------------------------------------------------------


def _trend_cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {"KINETOSCOPE_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "kinetoscope", "trend", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_cli_json_and_the_ci_gate(memory_logdir: Any, tmp_path: Path) -> None:
    built, view = memory_logdir
    done = _trend_cli(str(built.root), "--format", "json", "--fail-on-regression", cache=tmp_path)
    assert done.returncode == 1, done.stderr
    body = json.loads(done.stdout)
    assert set(body) >= {"runs", "regressions", "improvements"}
    assert body["regressions"] == view["regressions"]
    assert "regression(s) found" in done.stderr
    # Only the runs before the change: nothing to report, exit 0; text tables.
    for name in built.names[4:]:
        (built.root / name).rename(tmp_path / name)
    try:
        calm = _trend_cli(str(built.root), "--fail-on-regression", cache=tmp_path)
    finally:
        for name in built.names[4:]:
            (tmp_path / name).rename(built.root / name)
    assert calm.returncode == 0, calm.stderr
    assert "== Regressions (0)" in calm.stdout and built.names[0] in calm.stdout
    bad = _trend_cli(str(built.root), "--baseline", "nope", cache=tmp_path)
    assert bad.returncode == 2 and "no run named 'nope'" in bad.stderr


# --- the route, through TensorBoard's app ------------------------------------------------


def test_route_progress_then_the_cli_answer(memory_logdir: Any, plugin_client: Any) -> None:
    built, view = memory_logdir
    client = plugin_client(built.root)
    runs = client.json("runs")["runs"]
    assert all("trends" in r["views"] for r in runs)  # offered with every run
    first = client.get("trend")
    assert first.status_code in (200, 202)
    if first.status_code == 202:
        assert first.get_json()["state"] == "loading"
        assert first.get_json()["files_total"] == len(built.names)
    deadline = time.monotonic() + 60
    while (answer := client.get("trend")).status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert answer.status_code == 200
    assert answer.get_json()["regressions"] == view["regressions"]
    bad = client.get("trend", baseline="nope")
    while bad.status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.05)
        bad = client.get("trend", baseline="nope")
    assert bad.status_code == 400 and "no run named 'nope'" in bad.get_json()["error"]["message"]


def test_notebook_frames(
    memory_logdir: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import kinetoscope

    built, view = memory_logdir
    monkeypatch.setenv("KINETOSCOPE_CACHE_DIR", str(tmp_path))
    trend = kinetoscope.trend(built.root)
    runs = trend.runs()
    assert runs["run"].tolist() == built.names and runs.attrs["rule.window"] == 5
    regressions = trend.regressions()
    gpu = regressions[(regressions["metric"] == "memory_peak") & (regressions["name"] == "GPU0")]
    assert gpu["first_run"].tolist() == [built.names[4]]
    assert trend.view["regressions"] == view["regressions"]
    assert list(kinetoscope.trend(built.root, baseline=built.names[0]).improvements().columns)


def test_identical_runs_of_two_ranks_name_nothing(tmp_path: Path) -> None:
    """4 runs, each the same 2-rank DDP job (real V100 traces): each run combines its two
    workers (the slower rank's step), and nothing changed, so nothing is named."""
    import shutil

    from kinetoscope.analysis.trends.summary import summarize_trace

    ddp = "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp"
    names = [f"{ddp}/worker{r}_span1.pt.trace.json.gz" for r in (0, 1)]
    for i in range(4):
        (tmp_path / f"job_{i}").mkdir()
        for name in names:
            shutil.copyfile(corpus_path(name), tmp_path / f"job_{i}" / Path(name).name)
    view = trend_view(RunContext(scan_logdir(str(tmp_path))))
    assert [r["run"] for r in view["runs"]] == [f"job_{i}" for i in range(4)]
    steps = [summarize_trace(corpus_model(name)).step_median_us for name in names]
    for run in view["runs"]:
        assert run["workers"] == ["worker0_span1", "worker1_span1"]
        assert run["step_median_us"] == max(s for s in steps if s is not None)
    assert view["regressions"] == [] and view["improvements"] == []


# --- like with like: workloads, and each metric's own noise ------------------------------


def test_one_run_excursion_is_not_named_and_a_lasting_change_is() -> None:
    # Run 4 jumps to 130 and run 5 is back at 100: an excursion, not a change. Its
    # deviation (30) joins the metric's excursions, so the same jump later (run 7, with run
    # 8 staying there) needs more than 1.5 × 30 = 45: 130 is not named, 150 is.
    steady: list[float | None] = [100, 101, 99, 100, 130, 100, 101]
    assert rolling_changes(("phase", "other"), [*steady, 130, 130], NO_STEPS, Rule()) == []
    named = rolling_changes(("phase", "other"), [*steady, 150, 150], NO_STEPS, Rule())
    assert [(c.run_index, c.threshold, c.confirmed) for c in named] == [(7, 45.0, True)]


def test_a_change_at_the_last_run_is_named_unconfirmed() -> None:
    named = rolling_changes(("step", "step"), [100, 101, 99, 100, 130], NO_STEPS, Rule())
    assert [(c.run_index, c.confirmed) for c in named] == [(4, False)]
    confirmed = rolling_changes(("step", "step"), [100, 101, 99, 130, 131], NO_STEPS, Rule())
    assert [(c.run_index, c.confirmed) for c in confirmed] == [(3, True)]


def test_noise_only_runs_name_nothing(tmp_path: Path) -> None:
    """20 runs of one real H100 trace with ±5 % noise on every duration and no change: the
    Overview's phases swing up to ±17 % (the kernel phase jumps between two levels as the
    events' bounds move), which the fixed thresholds named as 6 to 15 changes a logdir."""
    built = build_trend_logdir(corpus_path(BERT), tmp_path, 20, [], noise=0.05, seed=3)
    view = trend_view(RunContext(scan_logdir(str(built.root))))
    kernel_phase = [r["phases_us"]["kernel"] for r in view["runs"]]
    assert max(kernel_phase) / min(kernel_phase) > 1.15  # the noise is there
    assert [len(w["runs"]) for w in view["workloads"]] == [20]
    assert view["regressions"] == [] and view["improvements"] == []


QWEN = "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"


def _mixed_logdir(root: Path) -> list[str]:
    """3 runs of an H100 BERT trace and 3 of an H100 Qwen trace (same device, other
    model), then one CPU-only run: their run names in one folder."""
    import shutil

    bert = build_trend_logdir(corpus_path(BERT), root / "bert", 3, [], noise=0.02, seed=1)
    qwen = build_trend_logdir(corpus_path(QWEN), root / "qwen", 3, [], noise=0.02, seed=2)
    logdir = root / "logdir"
    names = []
    for prefix, built in (("bert", bert), ("qwen", qwen)):
        for name in built.names:
            shutil.copytree(built.root / name, logdir / f"{prefix}_{name}")
            names.append(f"{prefix}_{name}")
    cpu = "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
    (logdir / "cpu_run").mkdir()
    shutil.copyfile(corpus_path(cpu), logdir / "cpu_run" / "worker0.pt.trace.json.gz")
    return [*names, "cpu_run"]


def test_runs_of_different_models_are_compared_only_within_their_workload(tmp_path: Path) -> None:
    """Before workloads, the runs of two models one after the other named their
    differences as regressions and improvements (2 to 194 per logdir)."""
    names = _mixed_logdir(tmp_path)
    view = trend_view(RunContext(scan_logdir(str(tmp_path / "logdir"))))
    assert sorted(r["run"] for r in view["runs"]) == sorted(names)
    by_workload: dict[int, set[str]] = {}
    for run in view["runs"]:
        by_workload.setdefault(run["workload"], set()).add(run["run"][:4])
    assert sorted(map(sorted, by_workload.values())) == [["bert"], ["cpu_"], ["qwen"]]
    assert [w["compared"] for w in view["workloads"]].count(True) == 2
    assert view["regressions"] == [] and view["improvements"] == []
    assert view["notes"] == [
        next(
            f"run cpu_run is the only run of its workload ({w['label']}): not compared"
            for w in view["workloads"]
            if w["runs"] == ["cpu_run"]
        )
    ]
