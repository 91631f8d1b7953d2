"""Kernel view: exact answers on hand-built traces, the old plugin's goldens, AMD launch
configurations, nn.DataParallel devices. Kernel names: tests/test_taxonomy.py."""

from __future__ import annotations

import glob
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import CORPUS, corpus_model, corpus_path, corpus_trace_model, corpus_traces
from kinetoscope.analysis.core.common import (
    SMALL_UNIQUE,
    unique_codes,
    unique_inverse,
    unique_rows,
)
from kinetoscope.analysis.kernels.endpoint import supports
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.api.endpoints import VIEWS, ViewParamError, supported_views
from kinetoscope.ingest.build import build_model
from kinetoscope.model.categories import Kind

SGEMM = "volta_sgemm_128x64_nn"
HGEMM = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"


def kernel_trace() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0, 1000)
    mm = t.op("aten::mm", 10, 100)
    cfg = {"grid": [80, 1, 1], "block": [256, 1, 1], "registers per thread": 64}
    t.launch(
        12, 2, mm, gpu_ts=200, gpu_dur=30, name=SGEMM,
        **{"blocks per SM": 2.0, "est. achieved occupancy %": 50, "shared memory": 0}, **cfg,
    )  # fmt: skip
    t.launch(
        20, 2, mm, gpu_ts=240, gpu_dur=10, name=SGEMM,
        **{"blocks per SM": 6.0, "est. achieved occupancy %": 10, "shared memory": 0}, **cfg,
    )  # fmt: skip
    add = t.op("aten::add", 120, 50)
    # the same kernel launched by another op, with another grid and no metrics
    t.launch(
        125, 2, add, gpu_ts=260, gpu_dur=20, name=SGEMM,
        grid=[4, 1, 1], block=[256, 1, 1], **{"shared memory": 1024},
    )  # fmt: skip
    t.launch(130, 2, add, gpu_ts=300, gpu_dur=40, name=HGEMM, stream=9)
    t.launch(140, 2, add, gpu_ts=350, gpu_dur=5, name="k_dev1", device=1, stream=7)
    # a memcpy is GPU work but not a kernel
    t.launch(150, 2, add, kind="gpu_memcpy", gpu_ts=360, gpu_dur=8, name="Memcpy HtoD")
    return t


def by_name(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in view["rows"]}


def test_kernel_rows_by_hand(tmp_path: Path) -> None:
    view = kernels(kernel_trace().model(tmp_path))
    rows = by_name(view)
    assert set(rows) == {SGEMM, HGEMM, "k_dev1"}
    sgemm = rows[SGEMM]
    assert sgemm["calls"] == 3 and sgemm["total_us"] == 60
    assert (sgemm["mean_us"], sgemm["min_us"], sgemm["max_us"]) == (20, 10, 30)
    # duration-weighted over the calls that carry the value (the third has none)
    assert sgemm["blocks_per_sm"] == pytest.approx((2 * 30 + 6 * 10) / 40)
    assert sgemm["occupancy_pct"] == pytest.approx((50 * 30 + 10 * 10) / 40)
    # configuration of the longest call
    assert sgemm["grid"] == [80, 1, 1] and sgemm["block"] == [256, 1, 1]
    assert sgemm["registers_per_thread"] == 64 and sgemm["shared_memory"] == 0
    assert sgemm["device"] == 0 and sgemm["stream"] == 7
    assert not sgemm["tensor_cores_used"] and sgemm["op_tensor_core_eligible"]  # aten::mm
    hgemm = rows[HGEMM]
    # aten::add is not eligible by name, but it launched a tensor-core kernel
    assert hgemm["tensor_cores_used"] and hgemm["op_tensor_core_eligible"]
    assert hgemm["blocks_per_sm"] is None and hgemm["occupancy_pct"] is None
    assert hgemm["stream"] == 9
    assert view["rows"][0]["name"] == SGEMM  # by total time
    # k_dev1's name tells nothing: unknown, left out of the share, not counted as "no"
    assert rows["k_dev1"]["tensor_cores_used"] is None and rows["k_dev1"]["work"] == "other"
    assert sgemm["work"] == "gemm" and hgemm["work"] == "gemm"
    assert view["tensor_core_time_us"] == 40 and view["non_tensor_core_time_us"] == 60
    assert view["tensor_core_unknown_time_us"] == 5
    assert view["matrix_core_name"] == "Matrix cores"  # the built trace names no vendor
    assert view["total_us"] == 105 and view["tensor_core_pct"] == pytest.approx(40.0)
    assert view["devices"] == [0, 1] and view["streams"] == [7, 9]
    assert view["kernel_count"] == 5


def test_filters(tmp_path: Path) -> None:
    model = kernel_trace().model(tmp_path)
    only1 = kernels(model, device=1)
    assert [r["name"] for r in only1["rows"]] == ["k_dev1"]
    assert only1["devices"] == [0, 1]  # what the filter can choose from, unfiltered
    s9 = kernels(model, stream=9)
    assert [r["name"] for r in s9["rows"]] == [HGEMM] and s9["stream"] == 9
    assert kernels(model, device=0, stream=9)["total_us"] == 40
    assert kernels(model, device=5)["rows"] == []
    view = VIEWS["kernels"]
    assert view.of_span(model, view.decode({"device": "1"}))["device"] == 1
    for bad in ({"device": "gpu0"}, {"stream": "x"}, {"group_by": "stream"}):
        with pytest.raises(ViewParamError):
            view.of_span(model, view.decode(bad))


def test_group_by_op(tmp_path: Path) -> None:
    view = kernels(kernel_trace().model(tmp_path), "op")
    rows = [(r["name"], r["op_name"], r["grid"], r["calls"], r["total_us"]) for r in view["rows"]]
    assert sorted(rows, key=str) == sorted(
        [
            (SGEMM, "aten::mm", [80, 1, 1], 2, 40),
            (SGEMM, "aten::add", [4, 1, 1], 1, 20),
            (HGEMM, "aten::add", None, 1, 40),
            ("k_dev1", "aten::add", None, 1, 5),
        ],
        key=str,
    )
    add_sgemm = next(r for r in view["rows"] if r["op_name"] == "aten::add" and r["name"] == SGEMM)
    assert add_sgemm["shared_memory"] == 1024 and add_sgemm["blocks_per_sm"] is None


def test_kernel_without_an_op(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.launch(5, 1, 0, gpu_ts=10, gpu_dur=3, name="k_orphan")  # no op around the launch
    t.step(1, 100, 100)
    t.launch(110, 1, 0, gpu_ts=120, gpu_dur=4, name="k_in_step")  # only a step around it
    view = kernels(t.model(tmp_path), "op")
    assert {(r["name"], r["op_name"]) for r in view["rows"]} == {
        ("k_orphan", None),
        ("k_in_step", None),
    }


def test_unique_rows_is_numpys_row_unique() -> None:
    """Kernel groups and queue lanes: the same rows, order and inverse as np.unique."""
    rng = np.random.default_rng(3)
    for n, columns, high in (
        (1, 1, 2),
        (50, 2, 3),
        (2000, 2, 40),
        (2000, 4, 9),
        (500, 3, 1 << 40),
        (20000, 5, 1 << 40),
    ):
        keys = rng.integers(-3, high, size=(n, columns)).astype(np.int64)
        uniq, inverse = unique_rows(keys)
        expected, expected_inverse = np.unique(keys, axis=0, return_inverse=True)
        assert np.array_equal(uniq, expected)
        assert np.array_equal(inverse, expected_inverse.reshape(-1))


def test_unique_inverse_is_numpys_unique() -> None:
    """Operator and kernel groups: the same values (and dtype), order and inverse as
    np.unique, marked in a table or sorted (a range too wide for a table)."""
    rng = np.random.default_rng(5)
    cases = [np.empty(0, np.int64), np.array([7], np.int32), np.array([True, False, True])]
    for n, low, high, dtype in (
        (50, 0, 3, np.uint8),
        (2000, -40, 40, np.int32),
        (5000, 1 << 40, (1 << 40) + 9000, np.int64),
        (300, 0, 1 << 40, np.int64),
        (20000, -(1 << 20), 1 << 20, np.int64),
        (60, 0, 300, np.int32),  # a rank's few: sorted, whatever their range
        (SMALL_UNIQUE, -20000, 20000, np.int16),
        (SMALL_UNIQUE + 1, 0, 5000, np.int32),  # the first size marked in a table
    ):
        cases.append(rng.integers(low, high, size=n).astype(dtype))
    cases.append(rng.random(100))  # not integers: numpy's own
    for values in cases:
        uniq, inverse = unique_inverse(values)
        expected, expected_inverse = np.unique(values, return_inverse=True)
        assert uniq.dtype == expected.dtype
        assert inverse.dtype == np.int64
        assert np.array_equal(uniq, expected)
        assert np.array_equal(inverse, expected_inverse.reshape(-1))


def test_unique_codes_is_numpys_unique() -> None:
    """Interned codes in [0, bound): a few sorted, many marked, the same answer."""
    rng = np.random.default_rng(6)
    for n, bound, dtype in (
        (0, 10, np.int32),
        (40, 50_000, np.int32),
        (SMALL_UNIQUE, 3000, np.int16),
        (5000, 3000, np.int32),
        (5000, 70_000, np.int64),
    ):
        codes = rng.integers(0, bound, size=n).astype(dtype)
        uniq, inverse = unique_codes(codes, bound)
        expected, expected_inverse = np.unique(codes, return_inverse=True)
        assert uniq.dtype == expected.dtype
        assert inverse.dtype == np.int64
        assert np.array_equal(uniq, expected)
        assert np.array_equal(inverse, expected_inverse.reshape(-1))


def test_cpu_only_trace_has_no_kernel_view(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("aten::mm", 0, 10)
    model = t.model(tmp_path)
    assert not supports(model)
    assert "kernels" not in supported_views(model)
    assert "no GPU kernels" in operators(model)["kernel_view_absent_reason"]
    assert kernels(model)["rows"] == []


# --- real traces ----------------------------------------------------------------------------

SAMPLES = "pytorch-kineto/tb_plugin/samples"
GOLDEN_FILES = {
    3: f"{SAMPLES}/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    8: f"{SAMPLES}/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
}


@pytest.mark.parametrize("line", sorted(GOLDEN_FILES))
def test_matches_the_old_plugin_goldens(line: int) -> None:
    """Its table rounds the mean to an integer and the means of blocks per SM and
    occupancy to 2 decimals; calls, total, min and max are exact."""
    lines = corpus_path("goldens/tb_plugin_result_check_file.txt").read_text().splitlines()
    table = json.loads(lines[line])["data"]["rows"]
    pie = json.loads(lines[line + 1])["total"]["rows"]
    model = corpus_model(GOLDEN_FILES[line])
    view = kernels(model)
    ours = by_name(view)
    assert len(ours) == len(table)
    for name, tc, calls, total, mean, hi, lo, bps, occ in table:
        o = ours[name]
        # Ours is tri-state: the old plugin said "No" for names it could not tell.
        assert o["tensor_cores_used"] is (True if tc == "Yes" else o["tensor_cores_used"])
        assert tc == "Yes" or o["tensor_cores_used"] is not True
        assert (o["calls"], o["total_us"], o["max_us"], o["min_us"]) == (calls, total, hi, lo)
        assert o["mean_us"] == pytest.approx(mean, abs=0.5)
        assert o["blocks_per_sm"] == pytest.approx(bps, abs=0.0051)
        # On purpose: calls with occupancy 0 (unknown) are left out of our mean; the old
        # plugin averaged them in as 0.
        assert _occupancy_counting_zeros(model, name) == pytest.approx(occ, abs=0.0051)
    assert all(ours[n]["total_us"] == v for n, v in pie)
    assert view["tensor_core_time_us"] == 0 and view["devices"] == [0]


def _occupancy_counting_zeros(model: Any, name: str) -> float:
    """The old plugin's mean occupancy of a kernel name: zeros count as values."""
    ev = model.events
    rows = model.complete_rows(Kind.KERNEL)
    rows = rows[ev["name"][rows] == model.name_code(name)]
    occ = model.column_at("occupancy", rows).astype(float)
    dur = ev["dur"][rows].astype(float)
    has = np.isfinite(occ)
    if not has.any():
        return 0.0
    return round(float((occ[has] * dur[has]).sum() / dur[has].sum()), 2)


def _profile_goldens() -> list[tuple[str, str]]:
    out = []
    for path in sorted(glob.glob(str(CORPUS / "goldens" / "*..profile.json"))):
        run = Path(path).name.split("..")[0]
        base = CORPUS / "gaoteng-git-kineto/tb_plugin/test/data/tracing" / run
        for trace in sorted(glob.glob(str(base / "worker*.pt.trace.json.gz"))):
            out.append((path, trace))
    return out


@pytest.mark.parametrize("golden,trace", _profile_goldens(), ids=lambda p: Path(p).name)
def test_matches_the_early_plugin_profiles(golden: str, trace: str) -> None:
    """Per kernel name (summed over devices: the early plugin did not split them) and per
    kernel + op. Kernels whose launch has no op are `op_name: null` here; the early plugin
    listed some under `CallTreeRoot` and dropped the others, so those rows differ."""
    doc = json.loads(Path(golden).read_text())
    worker = Path(trace).name.split(".pt.trace")[0]
    (profile,) = [
        p["py/tuple"][1]
        for p in doc["profiles"]["py/reduce"][4]["py/tuple"]
        if p["py/tuple"][0] == worker
    ]
    model = build_model(trace)
    if not profile.get("kernel_table"):
        assert not supports(model)
        return
    agg: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, float("inf"), 0.0])
    for r in kernels(model)["rows"]:
        a = agg[r["name"]]
        a[0] += r["calls"]
        a[1] += r["total_us"]
        a[2] = min(a[2], r["min_us"])
        a[3] = max(a[3], r["max_us"])
    for name, calls, total, _mean, hi, lo in profile["kernel_table"]["data"]["rows"]:
        assert agg[name] == [calls, total, lo, hi], name
    by_op: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for r in kernels(model, "op")["rows"]:
        a = by_op[(r["name"], r["op_name"] or "CallTreeRoot")]
        a[0] += r["calls"]
        a[1] += r["total_us"]
    for name, op, calls, total, *_ in profile["kernel_op_table"]["data"]["rows"]:
        if op != "CallTreeRoot":
            assert by_op[(name, op)] == [calls, total], (name, op)


def test_data_parallel_gives_a_row_per_device() -> None:
    model = build_model(
        str(
            corpus_path(
                "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_fp16_dp/worker0_round1.pt.trace.json.gz"
            )
        )
    )
    view = kernels(model)
    assert view["devices"] == [0, 1]
    per_name: dict[str, set[int]] = defaultdict(set)
    for r in view["rows"]:
        per_name[r["name"]].add(r["device"])
    both = [n for n, devs in per_name.items() if devs == {0, 1}]
    assert len(both) > 50
    assert sum(r["calls"] for r in view["rows"]) == view["kernel_count"]
    dev1 = kernels(model, device=1)
    assert {r["device"] for r in dev1["rows"]} == {1}
    assert dev1["kernel_count"] + kernels(model, device=0)["kernel_count"] == view["kernel_count"]


def test_amd_launch_configuration_comes_from_the_runtime_call() -> None:
    model = corpus_model("hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    for group_by in ("name", "op"):
        view = kernels(model, group_by)
        assert view["rows"] and view["devices"] == [2]
        for r in view["rows"]:
            assert r["grid"] is not None and r["block"] is not None, r["name"]
            assert r["shared_memory"] is not None
    gemm = next(r for r in kernels(model, "op")["rows"] if r["name"].startswith("Cijk_Alik"))
    assert gemm["grid"] == [512, 1, 1] and gemm["block"] == [256, 1, 1]
    assert gemm["op_name"] == "aten::addmm" and gemm["op_tensor_core_eligible"]
    assert gemm["tensor_cores_used"]  # MFMA (matrix core) kernel: MI16x16x1


@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_every_corpus_trace(path: Path) -> None:
    if "derived" in path.parts:
        pytest.skip("bad input: covered by test_decode")
    model = corpus_trace_model(path)
    if not supports(model):
        assert kernels(model)["rows"] == []
        return
    for group_by in ("name", "op"):
        view = kernels(model, group_by)
        assert sum(r["calls"] for r in view["rows"]) == view["kernel_count"] > 0
        assert view["tensor_core_time_us"] + view["non_tensor_core_time_us"] + view[
            "tensor_core_unknown_time_us"
        ] == pytest.approx(view["total_us"])
        for r in view["rows"]:
            assert r["min_us"] <= r["mean_us"] + 1e-6 and r["mean_us"] <= r["max_us"] + 1e-6
            assert r["occupancy_pct"] is None or 0 <= r["occupancy_pct"] <= 100
    ops = operators(model)
    assert ops["kernel_view_absent_reason"] is None
