"""Device kinds (issue 37): built traces in each backend's Kineto shape (deviceProperties,
process_labels, launch categories, correlation ids, ac2g flows) are labelled by kind, their
launch calls link to their kernels, and every page names the device the same way; the
real MTIA, AMD and H100 corpus traces keep their labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import CPU_PID, CPU_TID, TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.common import launches_of
from kinetoscope.analysis.core.devices import device_identities, memory_device_label
from kinetoscope.analysis.gpu_idle.text import render_gpu_idle
from kinetoscope.analysis.gpu_idle.view import gpu_idle
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.overview.text import render_overview
from kinetoscope.analysis.overview.view import overview
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.model.categories import Kind
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.trace_view.workers import WorkerTrace

XPU_PROPERTIES = {
    "id": 0,
    "name": "Intel(R) Data Center GPU Max 1550",
    "totalGlobalMem": 68719476736,
    "maxComputeUnits": 448,
    "maxWorkGroupSize": 1024,
    "maxClockFrequency": 1600,
    "maxMemAllocSize": 68719476736,
    "localMemSize": 131072,
    "vendor": "Intel(R) Corporation",
    "driverVersion": "1.3.29735",
}
# backend → (deviceProperties, process label of pid 0, runtime category, driver category
# sharing the runtime call's correlation id, or None)
BACKENDS: dict[str, tuple[list[dict[str, Any]], str, str, str | None]] = {
    "xpu": ([XPU_PROPERTIES], "GPU 0", "xpu_runtime", "xpu_driver"),
    "mtia": (
        [{"id": 0, "name": "ARTEMIS", "runtimeMajorVersion": 1, "maxGridHeight": 8}],
        "MTIA 0",
        "mtia_runtime",
        None,
    ),
    "npu": ([], "NPU 0", "privateuse1_runtime", "privateuse1_driver"),
    "privateuse1": ([], "GPU 0", "privateuse1_runtime", None),
    "neuron": ([], "Neuron 0", "privateuse1_runtime", None),
    "hpu": ([{"id": 0, "name": "GAUDI2"}], "HPU 0", "glow_runtime", None),
    "unknown": ([], "GPU 0", "glow_runtime", None),
}
EXPECTED = {  # backend → (kind, short label, label)
    "xpu": ("xpu", "XPU 0", "XPU 0 · Intel(R) Data Center GPU Max 1550"),
    "mtia": ("mtia", "MTIA 0", "MTIA 0 · ARTEMIS"),
    "npu": ("privateuse1", "NPU 0", "NPU 0"),
    "privateuse1": ("privateuse1", "PrivateUse1 0", "PrivateUse1 0"),
    "neuron": ("neuron", "Neuron 0", "Neuron 0"),
    "hpu": ("hpu", "HPU 0", "HPU 0 · GAUDI2"),
    "unknown": ("unknown", "accelerator 0", "accelerator 0"),
}
KERNEL_CATEGORY = {"mtia": "mtia_ccp_events"}
STREAM = 3


def backend_trace(backend: str) -> TraceBuilder:
    """One 1000 µs step; an op launching two kernels (100 µs and 50 µs) on device 0 through
    the backend's runtime call (and its driver call, same correlation id, inside it)."""
    props, label, runtime_cat, driver_cat = BACKENDS[backend]
    t = TraceBuilder()
    t.header["deviceProperties"] = props
    for name, args in (("process_name", {"name": "python"}), ("process_labels", {"labels": label})):
        t.events.append({"ph": "M", "name": name, "pid": 0, "tid": 0, "args": args})
    t.step(1, 0, 1000)
    ext = t.op("aten::mm", 10, 200)
    for i, (at, dur) in enumerate(((300.0, 100.0), (500.0, 50.0))):
        corr = 1000 + i
        call = {"ph": "X", "pid": CPU_PID, "tid": CPU_TID, "args": {"correlation": corr}}
        # the driver call written first: the runtime call must win by kind, not file order
        if driver_cat:
            t.events.append(
                {**call, "cat": driver_cat, "name": f"drv{i}", "ts": 25 + 50 * i, "dur": 5}
            )
        t.events.append(
            {**call, "cat": runtime_cat, "name": f"launch{i}", "ts": 20 + 50 * i, "dur": 20}
        )
        t.events.append(
            {
                "ph": "X",
                "cat": KERNEL_CATEGORY.get(backend, "kernel"),
                "name": f"kern{i}",
                "pid": 0,
                "tid": STREAM,
                "ts": at,
                "dur": dur,
                "args": {"External id": ext, "correlation": corr, "device": 0, "stream": STREAM},
            }
        )
        flow = {"cat": "ac2g", "name": "ac2g", "id": corr}
        t.events.append({**flow, "ph": "s", "pid": CPU_PID, "tid": CPU_TID, "ts": 20 + 50 * i})
        t.events.append({**flow, "ph": "f", "bp": "e", "pid": 0, "tid": STREAM, "ts": at})
    return t


def call(model: TraceModel, route: str, **params: Any) -> Any:
    endpoint = ENDPOINTS[route]
    decoded = endpoint.decode({k: str(v) for k, v in params.items()})
    return endpoint.of_traces([WorkerTrace(None, model)], decoded)


def rows_named(model: TraceModel, name: str) -> list[int]:
    code = model.names.index(name)
    return np.flatnonzero(model.events["name"] == code).tolist()


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, TraceModel]:
    return request.param, backend_trace(request.param).model(tmp_path)


def test_labelled_by_kind(backend: tuple[str, TraceModel]) -> None:
    name, model = backend
    kind, short, label = EXPECTED[name]
    ident = device_identities(model)[0]
    assert (ident.kind, ident.short_label, ident.label) == (kind, short, label)


def test_runtime_calls_link_to_their_kernels(backend: tuple[str, TraceModel]) -> None:
    """Each kernel links to its runtime call, never to the driver call that shares its id."""
    name, model = backend
    kernel_rows = np.array([rows_named(model, f"kern{i}")[0] for i in (0, 1)])
    linked = launches_of(model, kernel_rows)
    expected = [rows_named(model, f"launch{i}")[0] for i in (0, 1)]
    assert linked.tolist() == expected
    assert model.events["kind"][kernel_rows].tolist() == [Kind.KERNEL] * 2
    if BACKENDS[name][3]:  # the driver call is a launch call too, of the same kernel
        driver = rows_named(model, "drv0")[0]
        assert model.events["kind"][driver] == Kind.DRIVER
        assert launches_of(model, kernel_rows[:1], np.array([driver])).tolist() == [driver]


def test_overview_kernel_view_and_recommendations_agree(backend: tuple[str, TraceModel]) -> None:
    name, model = backend
    kind, short, label = EXPECTED[name]
    view = overview(model)
    [device] = view["devices"]
    assert (device["kind"], device["short_label"], device["label"]) == (kind, short, label)
    assert device["kernel_time_us"] == 150.0  # 100 + 50
    assert device["utilization_pct"] == 15.0  # 150 µs busy of the 1000 µs step
    k = kernels(model, group_by="name")
    assert (k["kernel_count"], k["total_us"]) == (2, 150.0)
    assert (k["devices"], k["device_labels"]) == ([0], [short])
    advice = {a["id"]: a for a in view["recommendations"]}
    assert advice["gpu_utilization_0"]["title"] == f"{short} is busy only 15.0 % of the time"


def test_trace_view_tracks_and_event_links(backend: tuple[str, TraceModel]) -> None:
    name, model = backend
    short = EXPECTED[name][1]
    tracks = {t["label"]: t for t in call(model, "tracks")["tracks"]}
    stream = tracks[f"{short} stream {STREAM}"]
    assert (stream["kind"], stream["device"], stream["event_count"]) == ("gpu", 0, 2)
    assert f"{EXPECTED[name][2]} utilization" in tracks
    assert not any(label.startswith("GPU ") for label in tracks)
    assert stream["process"] == f"{short} python (0)"  # not libkineto's default "GPU 0"
    kernel = call(model, "event", row=rows_named(model, "kern0")[0])
    launchers = [f["name"] for f in kernel["flows"] if f["relation"] == "launcher"]
    assert launchers == ["launch0"]  # not also the driver call "drv0"
    runtime = call(model, "event", row=rows_named(model, "launch0")[0])
    assert [f["name"] for f in runtime["flows"] if f["relation"] == "gpu_activity"] == ["kern0"]


def test_default_gpu_label_and_shared_categories_prove_nothing(tmp_path: Path) -> None:
    """libkineto's "GPU 0" process label and `kernel` / `gpu_user_annotation` categories
    on a trace with no runtime, header or properties: the kind is unknown."""
    t = TraceBuilder()
    t.events.append(
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}
    )
    t.step(1, 0, 100)
    for cat, name in (("gpu_user_annotation", "region"), ("kernel", "k")):
        t.events.append(
            {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": 10, "dur": 5,
             "args": {"device": 0, "stream": 7}}
        )  # fmt: skip
    ident = device_identities(t.model(tmp_path))[0]
    assert (ident.kind, ident.label, ident.vendor) == ("unknown", "accelerator 0", "unknown")


def test_cuda_launches_or_header_make_a_gpu(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.launch(10, 2, t.op("aten::mm", 5, 20), gpu_ts=20, gpu_dur=10)
    assert device_identities(t.model(tmp_path, "a.pt.trace.json"))[0].short_label == "GPU 0"
    t.header["roctracer_version"] = 4
    ident = device_identities(t.model(tmp_path, "b.pt.trace.json"))[0]
    assert (ident.kind, ident.short_label) == ("rocm", "GPU 0")


def test_xpu_memory_named_as_its_device(tmp_path: Path) -> None:
    t = backend_trace("xpu")
    t.memory(400, 1024, 1, 1024, device_type=12, device_id=0)
    model = t.model(tmp_path)
    assert memory_device_label(model, 12, 0, "XPU0") == EXPECTED["xpu"][2]
    assert memory_device_label(model, 19, 0, "MTIA0") == "MTIA0"  # not an MTIA: its own name


CORPUS_LABELS = {
    "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz": {17: "MTIA 17 · ARTEMIS"},
    "pytorch-kineto/docs/traces/after_fix_trace.json": {0: "GPU 0 · NVIDIA H100"},
    "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz": {
        0: "GPU 0 · AMD Radeon Graphics"
    },
}


@pytest.mark.parametrize(("rel", "labels"), CORPUS_LABELS.items())
def test_corpus_traces_keep_their_labels(rel: str, labels: dict[int, str]) -> None:
    idents = device_identities(corpus_model(rel))
    for device, label in labels.items():
        assert idents[device].label == label


def test_memory_device_type_names_the_kind(tmp_path: Path) -> None:
    """No properties, default label, launches of no known backend: the memory events'
    c10 device type (12, XPU) of device 0 says what device 0 is."""
    t = backend_trace("unknown")
    t.memory(400, 1024, 1, 1024, device_type=12, device_id=0)
    ident = device_identities(t.model(tmp_path))[0]
    assert (ident.kind, ident.label) == ("xpu", "XPU 0")


def _word(short_label: str) -> str:
    return short_label.rsplit(" ", 1)[0]


def test_views_say_the_kind_word(backend: tuple[str, TraceModel]) -> None:
    """Labels about all the devices use their kind's word (issue 43): the Overview's
    `device_type`, the gpu_idle view's `device_word`, the text report's section titles."""
    name, model = backend
    word = _word(EXPECTED[name][1])
    assert overview(model)["device_word"] == word
    idle = gpu_idle(model)
    assert idle["device_word"] == word
    text = render_gpu_idle(idle)
    assert text.startswith(f"Why is the {word} idle?")
    assert f"{word} summary" in render_overview(overview(model))


def test_corpus_mtia_overview_says_mtia() -> None:
    """HTA's MTIA inference trace: the Overview, its idle section and the text report say
    MTIA, never GPU, in what they call the device."""
    model = corpus_model("hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz")
    view = overview(model)
    assert view["device_word"] == "MTIA"
    assert [d["short_label"] for d in view["devices"]] == ["MTIA 17"]
    assert gpu_idle(model)["device_word"] == "MTIA"
    report = render_overview(view)
    assert "MTIA summary" in report and "GPU summary" not in report


def test_recommendations_use_the_word(tmp_path: Path) -> None:
    """The gloo advice on an MTIA job names no NCCL."""
    t = backend_trace("mtia")
    t.op("gloo:all_reduce", 400, 50)
    advice = {a["id"]: a for a in overview(t.model(tmp_path))["recommendations"]}
    gloo = advice["gloo_on_gpu"]
    assert gloo["title"] == "Collectives run over gloo on an MTIA job"
    assert "NCCL" not in gloo["message"] and "MTIA tensors" in gloo["message"]
