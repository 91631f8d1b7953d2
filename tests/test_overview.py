"""Overview: exact answers on hand-built traces, the old plugin's goldens, real torch traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_model, corpus_path, corpus_trace_model, corpus_traces
from kinetoscope.analysis.overview.view import ALL_PARTS, overview
from kinetoscope.ingest.build import build_model
from kinetoscope.model.categories import Kind

LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def two_step_trace() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.annotation(LOADER, 0, 20)
    conv = t.op("aten::conv2d", 20, 40)
    t.launch(30, 5, conv, gpu_ts=40, gpu_dur=50, name="implicit_convolve_sgemm")
    copy = t.op("aten::copy_", 60, 10)
    t.launch(
        62,
        2,
        copy,
        kind="gpu_memcpy",
        gpu_ts=70,
        gpu_dur=10,
        name="Memcpy HtoD",
        runtime="cudaMemcpyAsync",
    )
    # The GPU copy of the step range (2.x traces) must never count as a second step.
    t.events.append(
        {
            "ph": "X",
            "cat": "gpu_user_annotation",
            "name": "ProfilerStep#1",
            "pid": 0,
            "tid": 7,
            "ts": 40,
            "dur": 50,
        }
    )
    t.step(2, 100, 50)
    mm = t.op("aten::mm", 110, 30)
    t.launch(115, 5, mm, gpu_ts=145, gpu_dur=85, name="volta_sgemm_128x64_nn")
    t.launch(
        141,
        2,
        mm,
        kind="gpu_memset",
        gpu_ts=143,
        gpu_dur=2,
        name="Memset (Device)",
        runtime="cudaMemsetAsync",
    )
    t.step(3, 230, 30)  # launched nothing: left out as an incomplete trailing step
    t.op("aten::empty", 235, 5)
    return t


def test_breakdown_by_hand(tmp_path: Path) -> None:
    view = overview(two_step_trace().model(tmp_path))
    steps = view["steps"]
    assert [s["name"] for s in steps] == ["ProfilerStep#1", "ProfilerStep#2"]
    assert view["dropped_steps"] == [{"name": "ProfilerStep#3", "reason": "launched no GPU work"}]
    one, two = (s["breakdown_us"] for s in steps)
    # Step 1 [0, 100): kernel [40,90); memcpy [70,80) hidden by the kernel; runtime
    # [30,35) (the [62,64) call is under the kernel); loader [0,20); CPU [20,30)+[35,40).
    assert one == {
        "kernel": 50,
        "memcpy": 0,
        "memset": 0,
        "communication": 0,
        "runtime": 5,
        "dataloader": 20,
        "cpu_exec": 15,
        "other": 10,
    }
    # Step 2 ends when its kernel ends (230), not when its host range ends (150).
    assert (steps[1]["start_us"], steps[1]["end_us"]) == (100, 230)
    assert two == {
        "kernel": 85,
        "memcpy": 0,
        "memset": 2,
        "communication": 0,
        "runtime": 7,
        "dataloader": 0,
        "cpu_exec": 25,
        "other": 11,
    }
    assert view["average_step_us"] == 115
    assert view["breakdown_us"]["kernel"] == 135
    assert view["average_breakdown_us"]["other"] == 10.5
    for s in steps:
        assert sum(s["breakdown_us"].values()) == pytest.approx(s["duration_us"])


def test_gpu_summary_by_hand(tmp_path: Path) -> None:
    t = two_step_trace()
    t.header["deviceProperties"] = [
        {
            "id": 0,
            "name": "Test GPU",
            "totalGlobalMem": 2**34,
            "computeMajor": 8,
            "computeMinor": 0,
            "numSms": 108,
        }
    ]
    for e in t.events:
        if e["cat"] == "kernel":
            e["args"].update({"blocks per SM": 0.5, "est. achieved occupancy %": 40})
    (dev,) = overview(t.model(tmp_path))["devices"]
    assert dev["name"] == "Test GPU" and dev["compute_capability"] == "8.0"
    # Kernels [40,90) and [145,230) in the window [0, 230): 135 of 230.
    assert dev["utilization_pct"] == pytest.approx(round(100 * 135 / 230, 2))
    assert dev["sm_efficiency_pct"] == pytest.approx(round(100 * 0.5 * 135 / 230, 2))
    assert dev["achieved_occupancy_pct"] == 40.0
    assert dev["tensor_core_pct"] == 0.0


def test_incomplete_last_step_is_left_out(tmp_path: Path) -> None:
    t = TraceBuilder()
    for i, start in enumerate((0, 100)):
        t.step(i + 1, start, 100)
        op = t.op("aten::mm", start + 10, 50)
        for k in range(5 if i == 0 else 3):  # 3 < 0.8 * 5
            t.launch(start + 11 + k, 1, op, gpu_ts=start + 20 + k, gpu_dur=1)
    view = overview(t.model(tmp_path))
    assert [s["name"] for s in view["steps"]] == ["ProfilerStep#1"]
    assert "0.8x" in view["dropped_steps"][0]["reason"]


def backlog_trace(backlog_correlation: int) -> TraceBuilder:
    """Five kernels with no launch call in the trace fill the GPU until 400; three steps
    launch one 50 us kernel each, which runs behind them."""
    t = TraceBuilder()
    t._next_id = 100  # launch calls get correlation ids from 101 on
    for k in range(5):
        t.events.append(
            {"ph": "X", "cat": "kernel", "name": "backlog_kernel", "pid": 0, "tid": 7,
             "ts": 50 + 70 * k, "dur": 70,
             "args": {"device": 0, "stream": 7, "correlation": backlog_correlation + k}}
        )  # fmt: skip
    for i, start in enumerate((100, 200, 300)):
        t.step(i + 1, start, 100)
        op = t.op("aten::mm", start + 10, 20)
        t.launch(start + 12, 2, op, gpu_ts=400 + 50 * i, gpu_dur=50)
    return t


def test_gpu_backlog_from_before_profiling_is_not_in_the_first_step(tmp_path: Path) -> None:
    """The profiler started while the GPU still ran the previous iteration: kernels whose
    launch calls came before the trace (correlation ids below every launch call's) fill
    the GPU until 400. Step 1's own kernel waits behind them; its step starts when the
    backlog ends, as the old plugin's rule has it (we used to apply the rule to launched
    kernels only, so step 1 was 350 us instead of 50)."""
    view = overview(backlog_trace(backlog_correlation=1).model(tmp_path))
    assert [(s["start_us"], s["end_us"]) for s in view["steps"]] == [
        (400, 450),
        (450, 500),
        (500, 550),
    ]
    assert view["average_step_us"] == 50


def test_device_work_of_an_unrecorded_thread_is_not_a_backlog(tmp_path: Path) -> None:
    """Device work whose launch call is missing from the trace but whose correlation ids
    come after a recorded launch's (a pinned-memory copy thread that was not traced, as in
    the corpus `trace_compare` trace) was launched during profiling: the first step keeps
    its host start."""
    view = overview(backlog_trace(backlog_correlation=1000).model(tmp_path))
    assert view["steps"][0]["start_us"] == 100 and view["steps"][0]["end_us"] == 450


def test_backlog_and_untraced_copies_on_a_real_trace() -> None:
    """Corpus `trace_compare/base`: 5 device activities launched before profiling (ids
    below every launch call's) run until 39 ms into step 1009; 11 more without launch
    calls (pinned-memory copies, ids among the launches') run during the steps. Only the
    first are a backlog: the steps are 118.1 and 117.1 ms (157.3 ms for the first one when
    the backlog counted in it; 0.1 ms when the copies were taken for a backlog too)."""
    model = corpus_model("hta/tests/data/trace_compare/base/base.json.gz")
    assert [s["duration_us"] for s in overview(model)["steps"]] == [118128.0, 117128.0]


def test_occupancy_zero_is_unknown_not_zero(tmp_path: Path) -> None:
    """Kernels the trace gives occupancy 0 (graph replays) are left out of the mean."""
    t = two_step_trace()
    kernels_seen = 0
    for e in t.events:
        if e["cat"] == "kernel":
            occupancy = 40 if kernels_seen == 0 else 0
            e["args"].update({"est. achieved occupancy %": occupancy})
            kernels_seen += 1
    (dev,) = overview(t.model(tmp_path))["devices"]
    assert kernels_seen > 1 and dev["achieved_occupancy_pct"] == 40.0


def test_amd_device_has_one_identity_everywhere(tmp_path: Path) -> None:
    """ROCm numbers the kernels' device by HSA agent (2 here) while deviceProperties counts
    GPUs from 0; all entries describe the same model, so that is the device's name."""
    from kinetoscope.analysis.core.devices import device_identity
    from kinetoscope.analysis.memory.view import memory as memory_view
    from kinetoscope.trace_view.counters import build_counters

    t = TraceBuilder()
    props = {"name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
             "computeMajor": 9, "computeMinor": 4}  # fmt: skip
    t.header = {
        "schemaVersion": 1,
        "roctracer_version": 4.1,
        "deviceProperties": [{"id": i, **props} for i in range(2)],
    }
    t.step(1, 0, 100)
    op = t.op("aten::mm", 10, 20)
    t.launch(12, 2, op, gpu_ts=20, gpu_dur=30, device=2,
             name="Cijk_Alik_Bljk_BBS_BH_MT256x192x64_MI16x16x1_SN_LDSB1")  # fmt: skip
    t.memory(15, 1024, 1, 1024, 2048, device_type=6, device_id=2)
    model = t.model(tmp_path)
    ident = device_identity(model, 2)
    assert ident.label == "GPU 2 · AMD Instinct MI300X" and ident.vendor == "amd"
    assert ident.properties_source == "identical_entries"
    (dev,) = overview(model)["devices"]
    assert dev["label"] == ident.label and dev["memory_bytes"] == 206141652992
    assert dev["matrix_core_name"] == "Matrix cores (MFMA)" and dev["tensor_core_pct"] == 100.0
    memory_labels = {d["label"] for d in memory_view(model, {})["devices"]}
    assert ident.label in memory_labels
    counter_labels = {c.label for c in build_counters(model)}
    assert f"{ident.label} utilization" in counter_labels
    assert f"{ident.label} memory allocated" in counter_labels


def test_no_steps_means_one_step_over_the_trace(tmp_path: Path) -> None:
    t = TraceBuilder()
    op = t.op("aten::mm", 10, 20)
    t.launch(12, 2, op, gpu_ts=25, gpu_dur=30)
    view = overview(t.model(tmp_path))
    assert view["steps_source"] == "whole_trace"
    (step,) = view["steps"]
    assert (step["start_us"], step["end_us"]) == (10, 55)
    assert step["breakdown_us"]["kernel"] == 30


def test_modern_trace_rules_we_keep_on_purpose(tmp_path: Path) -> None:
    """The old plugin (0.4.3) dropped `user_annotation` DataLoader ranges and did not know
    `cuda_driver` launches or CPU collectives; on 2.x traces that made DataLoader and
    Runtime 0 and moved their time to Other. We count them."""
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.annotation(LOADER, 0, 30)
    op = t.op("aten::add", 30, 20)
    t.launch(35, 5, op, gpu_ts=60, gpu_dur=10, runtime="cuLaunchKernel")
    t.events[-2]["cat"] = "cuda_driver"
    t.op("gloo:all_reduce", 70, 20)
    (step,) = overview(t.model(tmp_path))["steps"]
    assert step["breakdown_us"]["dataloader"] == 30
    assert step["breakdown_us"]["runtime"] == 5
    assert step["breakdown_us"]["communication"] == 20
    assert step["breakdown_us"]["cpu_exec"] == 15


# --- the old plugin's answers on its own samples ---------------------------------------

GOLDEN_FILES = {
    0: "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/"
    "worker0.1623143089861.pt.trace.json.gz",
    5: "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_4/"
    "worker0.1623212756351.pt.trace.json.gz",
}
GOLDEN_PARTS = {
    "Kernel": "kernel",
    "Memcpy": "memcpy",
    "Memset": "memset",
    "Runtime": "runtime",
    "DataLoader": "dataloader",
    "CPU Exec": "cpu_exec",
    "Other": "other",
}


def _occupancy_with_zeros(model: Any, view: Any) -> float:
    ev = model.events
    rows = model.complete_rows(Kind.KERNEL)
    lo, hi = view["steps"][0]["start_us"], view["steps"][-1]["end_us"]
    start, end = ev["ts"][rows], ev["ts"][rows] + ev["dur"][rows]
    inside = np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0, None)
    occ = model.column_at("occupancy", rows).astype(float)
    has = np.isfinite(occ)
    return round(float((occ[has] * inside[has]).sum() / inside[has].sum()), 2)


@pytest.mark.parametrize("line", sorted(GOLDEN_FILES))
def test_matches_the_old_plugin_goldens(line: int) -> None:
    golden_path = corpus_path("goldens/tb_plugin_result_check_file.txt")
    golden = json.loads(golden_path.read_text().splitlines()[line])
    model = corpus_model(GOLDEN_FILES[line])
    view = overview(model)
    columns = [c["name"] for c in golden["steps"]["columns"] if c.get("type") == "number"]
    rows = golden["steps"]["rows"]
    assert [s["number"] for s in view["steps"]] == [int(r[0]) for r in rows]
    for step, row in zip(view["steps"], rows):
        numbers = [v for v in row[1:] if not isinstance(v, str)]
        for name, value in zip(columns, numbers):
            ours = step["breakdown_us"][GOLDEN_PARTS[name]]
            assert ours == pytest.approx(value, rel=0.005, abs=1), (step["name"], name)
    average = golden["performance"][0]
    assert view["average_step_us"] == pytest.approx(average["value"], rel=0.005)
    for child in average["children"]:
        ours = view["average_breakdown_us"][GOLDEN_PARTS[child["name"]]]
        assert ours == pytest.approx(child["value"], rel=0.005, abs=1)
    facts = {d["title"]: d["value"] for d in golden["gpu_metrics"]["data"]}
    (dev,) = view["devices"]
    assert dev["name"] == facts["Name"]
    assert dev["compute_capability"] == facts["Compute Capability"]
    for title, key in (
        ("GPU Utilization", "utilization_pct"),
        ("Est. SM Efficiency", "sm_efficiency_pct"),
        ("Kernel Time using Tensor Cores", "tensor_core_pct"),
    ):
        assert dev[key] == pytest.approx(float(facts[title].split()[0]), abs=0.01), title
    # On purpose: kernels the trace gives occupancy 0 (unknown) are left out of our mean;
    # the old plugin averaged them in as 0. Counting them reproduces its number.
    old_occupancy = float(facts["Est. Achieved Occupancy"].split()[0])
    assert _occupancy_with_zeros(model, view) == pytest.approx(old_occupancy, abs=0.01)
    assert dev["achieved_occupancy_pct"] > old_occupancy
    old_recs = golden["recommendations"]
    ours = {r["id"] for r in view["recommendations"]}
    assert ("DataLoader" in old_recs) == ("dataloader" in ours)
    assert ("Tensor Cores" in old_recs) == ("tensor_cores" in ours)


@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_every_corpus_trace_adds_up(path: Path) -> None:
    if "derived" in path.parts and "truncated" not in path.parts:
        pytest.skip("bad input: covered by test_decode")
    view = overview(corpus_trace_model(path))
    for step in view["steps"]:
        parts = step["breakdown_us"]
        assert set(parts) == set(ALL_PARTS)
        assert min(parts.values()) >= 0
        assert sum(parts.values()) == pytest.approx(step["duration_us"], rel=1e-9, abs=1e-3)
    for dev in view["devices"]:
        for key in ("utilization_pct", "sm_efficiency_pct", "tensor_core_pct"):
            assert dev[key] is None or 0 <= dev[key] <= 100


def test_real_torch_cpu_trace(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from kinetoscope.handlers import tensorboard_trace_handler

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=schedule,
        on_trace_ready=tensorboard_trace_handler(str(tmp_path)),
    ) as prof:
        for _ in range(4):
            loss = model(torch.randn(16, 32)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    (trace,) = tmp_path.glob("*.pt.trace.json.gz")
    view = overview(build_model(str(trace)))
    assert view["device_type"] == "CPU" and view["devices"] == []
    assert view["step_count"] == 3
    for step in view["steps"]:
        assert step["breakdown_us"]["cpu_exec"] > 0
        assert step["breakdown_us"]["kernel"] == 0
        assert sum(step["breakdown_us"].values()) == pytest.approx(step["duration_us"])
