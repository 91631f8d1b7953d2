"""The diff of two traces (`analysis/diff`, the `diff` route, `kinetoscope diff`): small
traces with known differences, every delta computed by hand; a CPU-only side; different
devices; the corpus (two spans of one worker; resnet50 with 0 and 4 data-loader workers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from corpus import corpus_model
from kinetoscope.analysis.diff.numbers import compare
from kinetoscope.analysis.diff.view import diff
from kinetoscope.analysis.overview.view import overview
from kinetoscope.cli.main import main

SAMPLES = "pytorch-kineto/tb_plugin/samples"
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920}
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85520809984}


def number(
    base: float | None, target: float | None, delta: float | None, pct: float | None
) -> dict[str, float | None]:
    return {"base": base, "target": target, "delta": delta, "delta_pct": pct}


def base_trace() -> TraceBuilder:
    """Step [0, 100]: aten::mm 10-40 launching (15-20) gemm_k 20-30; aten::relu 50-60."""
    t = TraceBuilder()
    t.step(1, 0, 100)
    mm = t.op("aten::mm", 10, 30, **{"Input Dims": [[2, 3], [3, 4]]})
    t.launch(15, 5, mm, gpu_ts=20, gpu_dur=10, name="gemm_k")
    t.op("aten::relu", 50, 10)
    t.memory(12, 1024, 4096, total_allocated=1024, total_reserved=2048)
    return t


def target_trace() -> TraceBuilder:
    """Step [0, 120]: the same aten::mm, its gemm_k slower (20-45); aten::relu removed;
    aten::add 60-70 added; aten::copy_ 80-100 added, launching (82-85) a memcpy 85-91."""
    t = TraceBuilder()
    t.step(1, 0, 120)
    mm = t.op("aten::mm", 10, 30, **{"Input Dims": [[2, 3], [3, 4]]})
    t.launch(15, 5, mm, gpu_ts=20, gpu_dur=25, name="gemm_k")
    t.op("aten::add", 60, 10)
    copy = t.op("aten::copy_", 80, 20)
    t.launch(82, 3, copy, kind="gpu_memcpy", runtime="cudaMemcpyAsync", gpu_ts=85, gpu_dur=6)
    t.memory(12, 2048, 4096, total_allocated=2048, total_reserved=4096)
    return t


@pytest.fixture
def view(tmp_path: Path) -> Any:
    return diff(base_trace().model(tmp_path, "a.json"), target_trace().model(tmp_path, "b.json"))


def test_compare_keeps_unknown_apart_from_zero() -> None:
    assert compare(4, 5) == number(4.0, 5.0, 1.0, 25.0)
    assert compare(0, 5) == number(0.0, 5.0, 5.0, None)  # no % of 0
    assert compare(None, 5) == number(None, 5.0, None, None)  # unknown, not 0
    assert compare(3, 3) == number(3.0, 3.0, 0.0, 0.0)
    assert compare(3, 2.999999) == number(3.0, 2.999999, 0.0, 0.0)  # no negative zero


def test_steps_and_breakdown_deltas(view: Any) -> None:
    assert view["steps"] == {
        "step_count": number(1.0, 1.0, 0.0, 0.0),
        "average_step_us": number(100.0, 120.0, 20.0, 20.0),
    }
    # Base: kernel 20-30 = 10; runtime 15-20 = 5; CPU ops 10-40 and 50-60 = 40 minus the 15
    # above = 25; other 100 - 40 = 60. Target: kernel 20-45 = 25; memcpy 85-91 = 6; runtime
    # 15-20 and 82-85 = 8; CPU ops 10-40, 60-70, 80-100 = 60 minus kernel 20-40 (20),
    # runtime (8) and memcpy (6) = 26; other 120 - 65 = 55.
    average = {b["part"]: b["average_us"] for b in view["breakdown"]}
    assert average == {
        "kernel": number(10.0, 25.0, 15.0, 150.0),
        "memcpy": number(0.0, 6.0, 6.0, None),
        "memset": number(0.0, 0.0, 0.0, None),
        "communication": number(0.0, 0.0, 0.0, None),
        "runtime": number(5.0, 8.0, 3.0, 60.0),
        "dataloader": number(0.0, 0.0, 0.0, None),
        "cpu_exec": number(25.0, 26.0, 1.0, 4.0),
        "other": number(60.0, 55.0, -5.0, -8.33),
    }
    share = {b["part"]: b["share_pct"] for b in view["breakdown"]}
    assert share["kernel"] == number(10.0, 20.833, 10.833, 108.33)  # 25 / 120
    assert share["memcpy"] == number(0.0, 5.0, 5.0, None)  # 6 / 120
    assert share["other"] == number(60.0, 45.833, -14.167, -23.61)  # 55 / 120


def test_gpu_and_memory_deltas(view: Any) -> None:
    unknown = number(None, None, None, None)  # no blocks per SM, occupancy or known kernel
    assert view["gpu"] == [
        {
            "id": 0,
            "short_label": "GPU 0",
            "base_name": "GPU 0",
            "target_name": "GPU 0",
            "utilization_pct": number(10.0, 20.83, 10.83, 108.3),  # 10/100, 25/120
            "sm_efficiency_pct": unknown,
            "achieved_occupancy_pct": unknown,
            "tensor_core_pct": unknown,
            "kernel_time_us": number(10.0, 25.0, 15.0, 150.0),
        }
    ]
    assert view["memory"] == [
        {
            "device": "GPU0",
            "peak_allocated_bytes": number(1024.0, 2048.0, 1024.0, 100.0),
            "peak_reserved_bytes": number(2048.0, 4096.0, 2048.0, 100.0),
        }
    ]
    assert view["communication"] == [] and view["notes"] == [] and not view["devices_differ"]


def test_operators_added_removed_slower(view: Any) -> None:
    assert view["operator_metric"] == "device_self_us"
    rows = {r["name"]: r for r in view["operators"]}
    # Sorted by |change| of device self time: mm 15, copy_ 6, then add and relu (0) by name.
    assert list(rows) == ["aten::mm", "aten::copy_", "aten::add", "aten::relu"]
    mm = rows["aten::mm"]
    assert mm["status"] == "changed"
    assert mm["calls"] == number(1.0, 1.0, 0.0, 0.0)
    assert mm["host_self_us"] == number(25.0, 25.0, 0.0, 0.0)  # 30 minus its runtime call
    assert mm["host_total_us"] == number(30.0, 30.0, 0.0, 0.0)
    assert mm["device_self_us"] == mm["device_total_us"] == number(10.0, 25.0, 15.0, 150.0)
    copy = rows["aten::copy_"]
    assert copy["status"] == "added"
    assert copy["calls"] == number(0.0, 1.0, 1.0, None)
    assert copy["host_self_us"] == number(0.0, 17.0, 17.0, None)  # 20 minus 3 of runtime
    assert copy["host_total_us"] == number(0.0, 20.0, 20.0, None)
    assert copy["device_self_us"] == number(0.0, 6.0, 6.0, None)  # the memcpy
    add = rows["aten::add"]
    assert add["status"] == "added" and add["host_self_us"] == number(0.0, 10.0, 10.0, None)
    relu = rows["aten::relu"]
    assert relu["status"] == "removed"
    assert relu["calls"] == number(1.0, 0.0, -1.0, -100.0)
    assert relu["host_total_us"] == number(10.0, 0.0, -10.0, -100.0)


def test_kernels_and_top_changes(view: Any) -> None:
    assert view["kernels"] == [
        {
            "name": "gemm_k",
            "status": "changed",
            "calls": number(1.0, 1.0, 0.0, 0.0),
            "total_us": number(10.0, 25.0, 15.0, 150.0),
            "mean_us": number(10.0, 25.0, 15.0, 150.0),
        }
    ]
    bars = [(b["kind"], b["name"], b["metric"], b["delta"]) for b in view["top_changes"]]
    assert bars == [
        ("operator", "aten::mm", "device_self_us", 15.0),
        ("kernel", "gemm_k", "total_us", 15.0),
        ("operator", "aten::copy_", "device_self_us", 6.0),
    ]


def test_group_by_shape_matches_name_and_shape(tmp_path: Path) -> None:
    target = target_trace()
    target.op("aten::mm", 101, 4, **{"Input Dims": [[4, 4], [4, 4]]})
    view = diff(base_trace().model(tmp_path, "a.json"), target.model(tmp_path, "b.json"), "shape")
    mm = {
        (r["name"], str(r["input_shape"])): r["status"]
        for r in view["operators"]
        if r["name"] == "aten::mm"
    }
    assert mm == {
        ("aten::mm", "[[2, 3], [3, 4]]"): "changed",
        ("aten::mm", "[[4, 4], [4, 4]]"): "added",
    }


def test_the_same_trace_is_all_same(tmp_path: Path) -> None:
    model = base_trace().model(tmp_path)
    view = diff(model, model)
    assert {r["status"] for r in view["operators"] + view["kernels"]} == {"same"}
    assert view["top_changes"] == []
    assert all(b["average_us"]["delta"] == 0 for b in view["breakdown"])


def cpu_trace() -> TraceBuilder:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 30)
    return t


def test_cpu_only_side_has_no_gpu_numbers(tmp_path: Path) -> None:
    view = diff(cpu_trace().model(tmp_path, "a.json"), target_trace().model(tmp_path, "b.json"))
    assert view["base"]["device_type"] == "CPU" and view["target"]["device_type"] == "GPU"
    assert view["gpu"] == [] and view["kernels"] == []  # said, not zeros
    assert "the base is CPU-only: no GPU, kernel or device time comparison" in view["notes"]
    assert "the base has no memory events: its memory peaks are unknown" in view["notes"]
    assert view["operator_metric"] == "host_self_us"
    mm = next(r for r in view["operators"] if r["name"] == "aten::mm")
    assert mm["device_self_us"] == number(None, 25.0, None, None)  # unknown on the CPU side
    assert mm["host_self_us"] == number(30.0, 25.0, -5.0, -16.67)
    memory = view["memory"][0]
    assert memory["peak_allocated_bytes"] == number(None, 2048.0, None, None)


def test_different_devices_are_said(tmp_path: Path) -> None:
    base, target = base_trace(), target_trace()
    base.header["deviceProperties"] = [A100]
    target.header["deviceProperties"] = [H100]
    view = diff(base.model(tmp_path, "a.json"), target.model(tmp_path, "b.json"))
    assert view["devices_differ"]
    assert view["base"]["devices"] == [A100["name"]]
    assert view["target"]["devices"] == [H100["name"]]
    assert view["gpu"][0]["base_name"] == A100["name"]
    assert view["gpu"][0]["target_name"] == H100["name"]
    assert view["notes"][0] == f"the devices differ: base {A100['name']}, target {H100['name']}"


# --- the route and the CLI -------------------------------------------------------------------


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    for run, trace in (("before", base_trace()), ("after", target_trace())):
        (root / run).mkdir(parents=True)
        trace.write(root / run / "worker0.100.pt.trace.json")
    return root


@pytest.fixture
def client(logdir: Path) -> Iterator[PluginClient]:
    made = PluginClient(logdir)
    yield made
    made.close()


PAIR = {"run": "before", "worker": "worker0", "target_run": "after", "target_worker": "worker0"}


def route_body(client: PluginClient, **query: str) -> bytes:
    for _ in range(3000):
        response = client.get("diff", **query)
        if response.status_code != 202:
            break
        client.wait_ready(query["run"], query["worker"])
        client.wait_ready(query["target_run"], query["target_worker"])
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_data()


def test_cli_json_is_the_route_body(
    client: PluginClient, logdir: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    body = route_body(client, **PAIR, group_by="shape")
    args = ["diff", str(logdir), "--base", "before", "--target", "after:worker0:1"]
    assert main([*args, "--format", "json", "--group-by", "shape", "--no-cache"]) == 0
    assert capsysbinary.readouterr().out == body + b"\n"  # the same bytes
    decoded = msgspec.json.decode(body)
    assert decoded["group_by"] == "shape" and decoded["steps"]["average_step_us"]["delta"] == 20


def test_cli_text_tables(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(logdir), "--base", "before", "--target", "after", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "base before:worker0:1" in text and "target after:worker0:1" in text
    rows = [line.split() for line in text.splitlines()]
    assert ["average", "step", "ms", "0.100", "0.120", "0.020", "20.00"] in rows
    assert ["Memcpy", "ms", "0.000", "0.006", "0.006", "-"] in rows  # no % of 0
    assert ["changed", "aten::mm", "1→1", "0.010", "0.025", "0.015", "150.00"] in rows
    assert ["added", "aten::copy_", "0→1", "0.000", "0.006", "0.006", "-"] in rows
    assert ["removed", "aten::relu", "1→0", "0.000", "0.000", "0.000", "-"] in rows


def test_cli_unknown_names(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(logdir), "--base", "before:worker9", "--target", "after"]) == 3
    assert "no worker 'worker9' in run 'before' (known: worker0)" in capsys.readouterr().err
    assert main(["diff", str(logdir), "--base", "nothing", "--target", "after"]) == 3


def test_route_errors(client: PluginClient) -> None:
    assert client.get("diff", **{**PAIR, "target_run": "nothing"}).status_code == 404
    assert client.get("diff", **{**PAIR, "target_span": "7"}).status_code == 404
    missing = {k: v for k, v in PAIR.items() if k != "target_run"}
    response = client.get("diff", **missing)
    assert response.status_code == 400
    assert "missing parameter: target_run" in response.get_data(as_text=True)
    assert client.get("diff", **PAIR, group_by="stack").status_code == 400


# --- corpus ------------------------------------------------------------------------------------


def test_two_spans_of_one_worker_agree_with_their_overviews() -> None:
    run = f"{SAMPLES}/resnet50_num_workers_0"
    first = corpus_model(f"{run}/worker0.1623143089861.pt.trace.json.gz")
    second = corpus_model(f"{run}/worker0.1623143566756.pt.trace.json.gz")
    view = diff(first, second)
    for side, model in (("base", first), ("target", second)):
        page = overview(model)
        assert view["steps"]["average_step_us"][side] == page["average_step_us"]
        for b in view["breakdown"]:
            assert b["average_us"][side] == page["average_breakdown_us"][b["part"]]
    assert not view["devices_differ"] and view["gpu"] and view["kernels"]
    assert {r["status"] for r in view["operators"]} <= {"changed", "same", "added", "removed"}


def test_more_dataloader_workers_drop_the_dataloader_share() -> None:
    base = corpus_model(f"{SAMPLES}/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
    target = corpus_model(
        f"{SAMPLES}/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"
    )
    loader = next(b for b in diff(base, target)["breakdown"] if b["part"] == "dataloader")
    share = loader["share_pct"]
    assert share["base"] > 30 and share["target"] < 1  # 33.37% of a step, then 0.84%
    assert share["delta"] < -30 and loader["average_us"]["delta"] < 0


def test_a_ddp_rank_against_itself_compares_its_collectives() -> None:
    rank = corpus_model(
        "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
        "worker0_span1.pt.trace.json.gz"
    )
    view = diff(rank, rank)
    assert {c["name"] for c in view["communication"]} == {"all_reduce", "broadcast"}
    assert all(c["calls"]["delta"] == 0 and c["calls"]["base"] for c in view["communication"])


def test_gpus_of_two_ranks_are_compared_in_order(tmp_path: Path) -> None:
    """Two serving ranks' traces (GPU 0 against GPU 6): one row comparing them, said in a
    note, not two half-empty rows."""
    from builders import TraceBuilder
    from kinetoscope.analysis.diff.view import diff

    def one(device: int, gpu_dur: float) -> TraceBuilder:
        t = TraceBuilder()
        t.step(1, 0.0, 1000)
        op = t.op("aten::mm", 10.0, 100)
        t.launch(20.0, 5, op, gpu_ts=30.0, gpu_dur=gpu_dur, name="gemm", device=device)
        return t

    base = one(0, 400).model(tmp_path, "base.pt.trace.json")
    target = one(6, 200).model(tmp_path, "target.pt.trace.json")
    view = diff(base, target)
    (row,) = view["gpu"]
    assert row["short_label"] == "GPU 0 / GPU 6"
    assert (
        row["utilization_pct"]["base"] is not None and row["utilization_pct"]["target"] is not None
    )
    assert "compared in order (GPU 0 with GPU 6)" in " ".join(view["notes"])
