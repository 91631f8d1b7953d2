"""Real traces of every vendor and schema in the corpus, read from their JSON form and from
their Perfetto protobuf form (written by tests/perfetto_writer.py), give the same numbers
in every span view. Skipped without the corpus (a failure in CI).

Where the protobuf form cannot say what the JSON said (docs/formats.md): Perfetto flows
have no names, categories or times of their own, so trace health's `unmatched_flows`
examples are compared without their names (a lone arrow's kind is a guess from its
slice), and the check is left out where a flow event of the JSON is bound to no slice or
its id is used twice (such flows have no protobuf form of their own)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_path
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext
from perfetto_writer import write_perfetto_file
from view_compare import differences, span_views

ROW_KEYS = frozenset({"row", "first_row"})

# One or two traces per vendor, device generation and schema year.
TRACES = [
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp/worker0_round1.pt.trace.json.gz",
    "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/tests/data/trace_filter/sampled_rank-0.json.gz",
    "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "hta/tests/data/negative_queue_length_values_check/rank0.json.gz",
    "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
    "tracelens/tests/traces/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz",
    "pytorch-kineto/docs/traces/before_fix_trace.json",
]


def _flow_names(view: dict[str, Any]) -> None:
    for check in view["checks"]:
        if check["id"] == "unmatched_flows":
            for example in check["examples"]:
                example.pop("name")


def _flow_facts(view: dict[str, Any]) -> None:
    view["checks"] = [c for c in view["checks"] if c["id"] != "unmatched_flows"]


@pytest.mark.parametrize("rel", TRACES, ids=lambda r: r.rsplit("/", 1)[-1][:40])
def test_corpus_trace_gives_the_same_views_as_protobuf(rel: str, tmp_path: Path) -> None:
    source = corpus_path(rel)
    json_path = Path(shutil.copy(source, tmp_path / source.name))
    pb_path = tmp_path / "trace.pftrace.gz"
    unbound = write_perfetto_file(str(json_path), str(pb_path))
    a, b = build_model(str(json_path)), build_model(str(pb_path))
    assert len(a) == len(b)
    assert (a.header, a.process_names, a.thread_names) == (
        b.header,
        b.process_names,
        b.thread_names,
    )
    va, vb = span_views(a), span_views(b)
    for view in (va, vb):
        if "health" in view:
            _flow_names(view["health"])
            if unbound:
                _flow_facts(view["health"])
    found = {k: differences(va[k], vb[k], ignore=ROW_KEYS) for k in va}
    assert {k: v[:5] for k, v in found.items() if v} == {}


def test_distributed_view_of_a_job_in_protobuf_form(tmp_path: Path) -> None:
    """Two ranks of a 128-rank NCCL job: the run-level `distributed` view (steps,
    collectives, stragglers) is the same from the JSON files and from their protobuf forms."""
    sampled = corpus_path("hta/tests/data/trace_filter")
    json_run, pb_run = tmp_path / "json" / "job", tmp_path / "pb" / "job"
    json_run.mkdir(parents=True)
    pb_run.mkdir(parents=True)
    for rank in (0, 1):
        src = sampled / f"sampled_rank-{rank}.json.gz"
        shutil.copy(src, json_run / f"rank{rank}.json.gz")
        write_perfetto_file(str(src), str(pb_run / f"rank{rank}.pftrace.gz"))
    (a,) = scan_logdir(str(json_run.parent))
    (b,) = scan_logdir(str(pb_run.parent))
    va, vb = analyze_run(RunContext.of(a)), analyze_run(RunContext.of(b))
    assert len(va["ranks"]) == 2
    assert differences(va, vb, ignore=ROW_KEYS | {"file", "path", "worker"}) == []
