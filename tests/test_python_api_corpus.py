"""The notebook API on real traces of both vendors: every frame equals the JSON the plugin's
route answers for the same span (the notebook computes without the disk cache, so the two
are computed apart), and the events frame's nanoseconds are the file's to the digit."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import kinetoscope as ks
import pytest
from corpus import corpus_path
from python_api_compare import assert_rows, assert_span_frames_match_routes, route

pytestmark = pytest.mark.corpus

# (corpus file, vendor): old and new NVIDIA schemas, AMD training and serving.
TRACES = [
    (
        "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "nvidia",
    ),  # noqa: E501
    ("tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "nvidia"),
    ("pytorch-kineto/docs/traces/after_fix_trace.json", "nvidia"),
    ("hta/tests/data/triton_example/triton_example.json.gz", "nvidia"),
    ("hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "amd"),
    (
        "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
        "amd",
    ),  # noqa: E501
]
DDP_RUN = "gaoteng-git-kineto/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp"


@pytest.mark.parametrize("rel, vendor", TRACES, ids=[Path(r).name for r, _ in TRACES])
def test_frames_equal_the_routes(rel: str, vendor: str, plugin_client: Any) -> None:
    path = corpus_path(rel)
    client = plugin_client(path.parent)
    with ks.open(path, cache=False) as run:
        trace = run.trace()
        assert_span_frames_match_routes(trace, client)
        devices = trace.devices()
    if len(devices):  # the vendor the trace says it ran on
        assert set(devices["vendor"].str.lower()) == {vendor}


def test_distributed_frame_equals_the_route(plugin_client: Any) -> None:
    folder = corpus_path(DDP_RUN)
    client = plugin_client(folder)
    with ks.open(folder, cache=False) as run:
        assert len(run.workers) == 2
        ranks = run.distributed()
    view = route(client, "distributed", run=".")
    assert_rows(ranks, view["ranks"])
    assert ranks["rank"].tolist() == [0, 1]


def _file_document(path: Path) -> Any:
    """The file's JSON with exact decimal numbers."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw, parse_float=Decimal)


@pytest.mark.parametrize(
    "rel",
    [
        "hta/tests/data/triton_example/triton_example.json.gz",  # float µs, relative
        "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "pytorch-kineto/tb_plugin/test/gpu_metrics_input.json",  # integer epoch µs
    ],
)
def test_nanoseconds_are_the_files(rel: str) -> None:
    path = corpus_path(rel)
    with ks.open(path, cache=False) as run:
        events = run.trace().events()
    doc = _file_document(path)
    listed = doc["traceEvents"] if isinstance(doc, dict) else doc
    expected = [e for e in listed if e.get("ph") != "M"]  # the model leaves metadata out
    assert len(events) == len(expected)
    timed = [(i, e) for i, e in enumerate(expected) if isinstance(e.get("ts"), (int, Decimal))]
    got = events["ts_ns"].to_numpy()
    wrong = [i for i, e in timed if got[i] != int(Decimal(e["ts"]) * 1000)]
    assert not wrong, f"{len(wrong)} of {len(timed)} differ, first at row {wrong[0]}"
    if isinstance(doc, dict) and "baseTimeNanoseconds" in doc:
        assert events.attrs["time_origin_ns"] == int(doc["baseTimeNanoseconds"])
