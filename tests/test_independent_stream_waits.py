"""The cross-stream waits the critical path infers from runtime calls, and the autograd
handoffs it links, against `tests/independent/stream_waits.py` (raw JSON, no kinetoscope
import) on every multi-stream corpus trace that makes wait calls and on the jobs recorded on
an H200 (tests/data/gpu_streams, tests/data/gpu_training):

- every inferred wait holds on the raw JSON (two streams of one device, in order, a record
  call after the waited launch and a wait call before the waiting one);
- where a trace recorded its waits (`cuda_sync` events), the trace stripped of them (the
  default settings' shape) gives every recorded wait that set a start (the waiting work
  began within CONFIRM_US of the waited work's end); a wait already met when its work
  could start may be placed on other work of the thread's current stream (said as
  inferred by call order);
- the backward thread's bursts linked to the training thread are the ones the checker
  finds by interleaving the two threads' ops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_path
from independent import stream_waits as checker
from independent.raw import ns, read_raw
from kinetoscope.analysis.critical_path.build import rank_graph
from kinetoscope.analysis.critical_path.stream_waits import CONFIRM_US
from kinetoscope.ingest.build import build_model

TRACING = "gaoteng-git-kineto/tb_plugin/test/data/tracing"
# Every corpus trace with kernels on two streams or more and cudaStreamWaitEvent calls.
MULTI_STREAM = [
    f"{TRACING}/bert_newAPI_fp16_ddp/worker0_round1.pt.trace.json.gz",
    f"{TRACING}/bert_newAPI_fp16_ddp/worker1_round1.pt.trace.json.gz",
    f"{TRACING}/bert_newAPI_fp16_dp/worker0_round1.pt.trace.json.gz",
    f"{TRACING}/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz",
    f"{TRACING}/resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz",
    "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
    "hta/tests/data/nccl_parser_config/nccl_data.json.gz",
    "hta/tests/data/negative_queue_length_values_check/rank0.json.gz",
    "hta/tests/data/trace_diff/control/control.json.gz",
    "pytorch-kineto/tb_plugin/samples/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz",
    "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
]
RECORDED = [p for p in MULTI_STREAM if "critical_path" in p]
# The jobs recorded on an H200 (CUDA 13): the two-stream job, the training job.
GPU_STREAMS = sorted((Path(__file__).parent / "data" / "gpu_streams").glob("*/*.pt.trace.json.gz"))
GPU_TRAINING = sorted(
    (Path(__file__).parent / "data" / "gpu_training").glob("*/*.pt.trace.json.gz")
)
WITH_BACKWARD_THREAD = [p for p in MULTI_STREAM if "ddp" in p]


def _inferred_pairs(path: Path) -> set[tuple[checker.Key, checker.Key]]:
    """The inferred waits as the checker names activities: (correlation, device)."""
    model = build_model(str(path))
    rg = rg_of(model)
    corr = model.column_at("correlation", rg.acts.rows).tolist()
    device = model.column_at("device", rg.acts.rows).tolist()
    key = list(zip(corr, device))
    assert rg.inferred is not None
    waited, waiting = rg.inferred.waited.tolist(), rg.inferred.waiting.tolist()
    return {(key[k], key[n]) for k, n in zip(waited, waiting)}


def rg_of(model: Any) -> Any:
    return rank_graph(model)


@pytest.mark.parametrize("rel", MULTI_STREAM)
def test_every_inferred_wait_holds_on_the_raw_json(rel: str) -> None:
    path = corpus_path(rel)
    pairs = _inferred_pairs(path)
    assert checker.violations(read_raw(path), pairs) == []


@pytest.mark.parametrize("path", GPU_STREAMS, ids=lambda p: p.parent.name)
def test_every_inferred_wait_of_the_recorded_gpu_job_holds_on_the_raw_json(path: Path) -> None:
    pairs = _inferred_pairs(path)
    assert len(pairs) == 24  # two waits a step, 12 steps
    assert checker.violations(read_raw(path), pairs) == []


@pytest.mark.parametrize("rel", RECORDED)
def test_the_recorded_waits_are_inferred_without_their_sync_events(
    rel: str, tmp_path: Path
) -> None:
    raw = read_raw(corpus_path(rel))
    truth = checker.recorded_waits(raw)
    stripped = checker.without_sync_events(raw, tmp_path / "stripped.pt.trace.json")
    found = _inferred_pairs(stripped)
    gpu = checker.gpu_activities(raw)
    binding = {
        (k, n)
        for k, n in truth
        if ns(gpu[n]["ts"]) - ns(gpu[k]["ts"]) - ns(gpu[k]["dur"]) <= CONFIRM_US * 1000
    }
    assert binding <= found
    assert checker.violations(raw, found) == []


def test_the_alexnet_trace_gives_every_recorded_wait(tmp_path: Path) -> None:
    """HTA's multi-stream AlexNet: 6 waits between streams recorded, all 6 inferred from
    the calls alone (2 set their work's start, 4 were met before)."""
    raw = read_raw(corpus_path(RECORDED[0]))
    truth = checker.recorded_waits(raw)
    stripped = checker.without_sync_events(raw, tmp_path / "stripped.pt.trace.json")
    assert len(truth) == 6 and truth == _inferred_pairs(stripped)


@pytest.mark.parametrize("path", GPU_TRAINING, ids=lambda p: p.parent.name)
def test_the_handoffs_of_the_recorded_gpu_training_are_the_checkers(path: Path) -> None:
    rg = rank_graph(build_model(str(path)))
    assert rg.handoffs == checker.backward_bursts(read_raw(path)) == 12  # one a step


@pytest.mark.parametrize("rel", WITH_BACKWARD_THREAD)
def test_the_handoffs_are_the_bursts_the_checker_finds(rel: str) -> None:
    path = corpus_path(rel)
    rg = rank_graph(build_model(str(path)))
    bursts = checker.backward_bursts(read_raw(path))
    assert bursts > 0 and rg.handoffs == bursts
