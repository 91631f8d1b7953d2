"""One rule for the op that launched a collective kernel (optree.collective_owner): the
innermost op around the launch call when that is a communication op (`nccl:all_reduce`),
not the `record_param_comms` its External id names. Both flame graphs, the Kernel view's
`group_by=op` and the Operators' device time follow it."""

from __future__ import annotations

from pathlib import Path

from builders import TraceBuilder
from corpus import corpus_model, corpus_path
from independent.raw import read_raw
from kinetoscope.analysis.flamegraph.view import flamegraph
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.operators.view import operators
from kinetoscope.model.trace_model import TraceModel

NCCL = "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
T = 1000.0


def _raw_innermost_ops() -> dict[str, set[str]]:
    """Per NCCL kernel name, the innermost cpu_op/user_annotation around its launch call
    on the launching thread, from the raw JSON."""
    raw = read_raw(corpus_path(NCCL))
    xs = [e for e in raw.events if e.get("ph") == "X"]
    calls = {
        e["args"]["correlation"]: e
        for e in xs
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    ops = [e for e in xs if e.get("cat") in ("cpu_op", "user_annotation")]
    out: dict[str, set[str]] = {}
    for k in xs:
        if k.get("cat") != "kernel" or "nccl" not in k["name"].lower():
            continue
        call = calls[k["args"]["correlation"]]
        around = [
            o
            for o in ops
            if (o["pid"], o["tid"]) == (call["pid"], call["tid"])
            and o["ts"] <= call["ts"]
            and o["ts"] + o["dur"] >= call["ts"] + call["dur"]
        ]
        inner = max(around, key=lambda o: (o["ts"], -o["dur"]))
        out.setdefault(k["name"], set()).add(inner["name"])
    return out


def _gpu_flame_ops(model: TraceModel) -> dict[str, set[str]]:
    """Per kernel name, the op frames right above its launch call in the GPU flame graph."""
    view = flamegraph(model, "gpu")
    frames, parent, nf = view["frames"], view["node_parent"], view["node_frame"]
    out: dict[str, set[str]] = {}
    for i, f in enumerate(nf):
        if frames[f]["kind"] == "kernel":
            op = parent[parent[i]]
            out.setdefault(frames[f]["name"], set()).add(frames[nf[op]]["name"])
    return out


def _cpu_flame_parents(model: TraceModel, call: str) -> set[tuple[str, str]]:
    """(op, its parent op) above each `call` runtime frame of the CPU flame graph."""
    view = flamegraph(model, "cpu")
    frames, parent, nf = view["frames"], view["node_parent"], view["node_frame"]
    return {
        (frames[nf[parent[i]]]["name"], frames[nf[parent[parent[i]]]]["name"])
        for i, f in enumerate(nf)
        if frames[f]["name"] == call and frames[f]["kind"] == "runtime"
    }


def test_corpus_nccl_kernels_belong_to_the_nccl_call() -> None:
    model = corpus_model(NCCL)
    want = _raw_innermost_ops()
    assert want and all(len(v) == 1 and next(iter(v)).startswith("nccl:") for v in want.values())
    got = _gpu_flame_ops(model)
    assert {k: got[k] for k in want} == want
    rows = kernels(model, "op")["rows"]
    by_op = {r["name"]: set() for r in rows if r["name"] in want}
    for r in rows:
        if r["name"] in want:
            by_op[r["name"]].add(r["op_name"])
    assert by_op == want


def _collective(t: TraceBuilder) -> None:
    """c10d::allreduce_ > record_param_comms (External id 500) > nccl:all_reduce, and the
    launch call inside nccl:all_reduce carrying External id 500, as libkineto writes it."""
    t.step(1, T, 1000)
    t.op("c10d::allreduce_", T + 100, 300)
    t.op("record_param_comms", T + 110, 250, external_id=500)
    t.annotation("nccl:all_reduce", T + 120, 100)
    t.launch(T + 150, 10, 500, gpu_ts=T + 170, gpu_dur=400, name="ncclKernel_AllReduce")


def test_built_collective(tmp_path: Path) -> None:
    model = TraceBuilder()
    _collective(model)
    m = model.model(tmp_path)
    assert _gpu_flame_ops(m) == {"ncclKernel_AllReduce": {"nccl:all_reduce"}}
    assert _cpu_flame_parents(m, "cudaLaunchKernel") == {("nccl:all_reduce", "record_param_comms")}
    (row,) = kernels(m, "op")["rows"]
    assert row["op_name"] == "nccl:all_reduce"
    device = {r["name"]: r["device_self_us"] for r in operators(m)["rows"]}
    assert device["nccl:all_reduce"] == 400 and device["record_param_comms"] == 0


def test_external_id_still_wins_outside_collectives(tmp_path: Path) -> None:
    """A launch inside an annotation that is not a communication op (a compiled region)
    still belongs to the op its External id names."""
    t = TraceBuilder()
    t.step(1, T, 1000)
    ext = t.op("aten::mm", T + 100, 300)
    t.annotation("## Call CompiledFxGraph ##", T + 120, 100)
    t.launch(T + 150, 10, ext, gpu_ts=T + 170, gpu_dur=40, name="gemm")
    (row,) = kernels(t.model(tmp_path), "op")["rows"]
    assert row["op_name"] == "aten::mm"
