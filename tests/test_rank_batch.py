"""Many ranks' models joined into one table (`model.rank_batch`): checked against a join
made another way, the ranks' JSON joined as text (every id moved there) and read as one
trace, and by hand on a small built pair."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.analysis.core.common import name_flags
from kinetoscope.analysis.core.rank_batches import share_tables
from kinetoscope.analysis.core.rules import is_step_name
from kinetoscope.analysis.core.taxonomy import is_comm_op
from kinetoscope.ingest.build import build_model
from kinetoscope.model.rank_batch import (
    NotJoined,
    RankBatch,
    bounds_of,
    join_ranks,
    rank_of,
    why_not_joined,
)
from kinetoscope.model.trace_model import EVENT_COLUMNS, TraceModel
from synthetic_job import Layout, write_traces

_DDP = "gaoteng-git-kineto/tb_plugin/test/data/tracing/resnet50_newAPI_ddp"
_SAMPLED = "hta/tests/data/trace_filter/sampled_rank-{}.json.gz"  # a 128-rank job's two
_BERT_SMALL = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
# Args holding ids the join moves by its id stride, and the devices it moves.
_ID_ARGS = ("correlation", "External id", "Python id", "Python parent id")
_DEVICE_ARGS = ("device", "Device Id")


def _text(path: Path) -> Any:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def _moved_pid(pid: Any, k: int, stride: int) -> Any:
    """A pid as the text join moves it: independent of the product's rule's code."""
    if k == 0:
        return pid
    if isinstance(pid, int):
        return pid + k * stride if pid >= 0 else pid - k * stride
    if isinstance(pid, str) and pid.lstrip("-").isdigit():
        return str(int(pid) + k * stride) if int(pid) >= 0 else str(int(pid) - k * stride)
    return f"{pid}#{k}"


def _moved_event(event: dict[str, Any], k: int, batch: RankBatch) -> dict[str, Any]:
    event = dict(event)
    if "pid" in event:
        event["pid"] = _moved_pid(event["pid"], k, batch.pid_stride)
    if isinstance(event.get("id"), int) and event["id"] >= 0:  # a flow's
        event["id"] += k * batch.id_stride
    args = event.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key, stride in [(a, batch.id_stride) for a in _ID_ARGS] + [
            (a, batch.device_stride) for a in _DEVICE_ARGS
        ]:
            if isinstance(args.get(key), int) and args[key] >= 0:
                args[key] += k * stride
        event["args"] = args
    return event


def _joined_as_text(paths: list[Path], batch: RankBatch, out: Path) -> TraceModel:
    events = []
    for k, path in enumerate(paths):
        trace = _text(path)
        own = trace if isinstance(trace, list) else trace["traceEvents"]  # the old form: a list
        events += [_moved_event(e, k, batch) for e in own]
    out.write_text(json.dumps({"traceEvents": events}), encoding="utf-8")
    return build_model(str(out))


def _without_moved_args(raw: bytes) -> Any:
    args = json.loads(raw) if raw else {}
    return {k: v for k, v in args.items() if k not in _ID_ARGS + _DEVICE_ARGS}


def _assert_same(joined: TraceModel, read: TraceModel) -> None:
    """The two models hold the same rows: every column's values, the string tables, the
    names keyed by process and thread, the memory rows, each row's args."""
    assert len(joined) == len(read)
    # Not compared: where args end (moved ids are longer texts) and the hash of the work
    # args' text (json.dumps spaces them otherwise): `_check_against_text` compares that
    # with the ranks' own.
    for key in EVENT_COLUMNS.keys() - {"args_end", "work_sig"}:
        assert np.array_equal(joined.full_column(key), read.full_column(key), True), key
    for attr in ("names", "categories", "pids", "tids", "process_names", "thread_names"):
        assert getattr(joined, attr) == getattr(read, attr), attr
    for key in read.memory:
        assert np.array_equal(joined.memory[key], read.memory[key], True), key
    for row in range(len(read)):
        raw_joined, raw_read = joined.raw_args(row), read.raw_args(row)
        if raw_joined != raw_read:  # the ids in the args' text are each file's own
            assert _without_moved_args(raw_joined) == _without_moved_args(raw_read), row


def _check_against_text(paths: list[Path], tmp_path: Path) -> RankBatch:
    models = [build_model(str(p)) for p in paths]
    batch = join_ranks(models)
    _assert_same(batch.model, _joined_as_text(paths, batch, tmp_path / "joined.json"))
    assert batch.first_rows.tolist() == np.cumsum([0, *map(len, models)]).tolist()
    assert batch.headers == [m.header for m in models]
    work = batch.model.full_column("work_sig")
    for k, model in enumerate(models):
        assert np.array_equal(work[batch.rows_of(k)], model.full_column("work_sig"))
    return batch


def test_a_job_of_process_groups_joins_as_its_text_joined_reads(tmp_path: Path) -> None:
    run = write_traces(Layout(2, 1, 2, steps=2), tmp_path / "job")
    paths = sorted(run.glob("*.pt.trace.json"), key=lambda p: int(p.name[4:].split(".")[0]))
    batch = _check_against_text(paths, tmp_path)
    assert len(batch) == 4 and batch.pid_stride >= 10


@pytest.mark.corpus
def test_two_ranks_with_the_profilers_text_pids_join_as_their_text(tmp_path: Path) -> None:
    paths = [corpus_path(_SAMPLED.format(r)) for r in (0, 1)]
    batch = _check_against_text(paths, tmp_path)
    assert "Spans" in batch.model.pids and "Spans#1" in batch.model.pids


@pytest.mark.corpus
def test_an_id_of_zero_is_refused() -> None:
    """2020-21 traces give NCCL kernels and copies `external id` 0: read as none where a
    stage asks `> 0`, as an id where it looks ids up. Neither moving nor keeping it keeps
    every rank's answers, so the pair is not joined (its ranks go one by one)."""
    models = [
        build_model(str(corpus_path(f"{_DDP}/worker{r}_span1.pt.trace.json.gz"))) for r in (0, 1)
    ]
    assert why_not_joined(models) == (
        "model 0 has external_id 0, which some stages read as none, others as an id"
    )


@pytest.mark.corpus
def test_python_ids_memory_and_flows_move_as_in_the_text(tmp_path: Path) -> None:
    path = corpus_path(_BERT_SMALL)
    batch = _check_against_text([path, path, path], tmp_path)
    model = batch.model
    for column in ("python_id", "flow_id", "correlation"):
        values = model.full_column(column)
        first, third = values[batch.rows_of(0)], values[batch.rows_of(2)]
        assert (first >= 0).any(), column
        assert np.array_equal(np.where(first >= 0, first + 2 * batch.id_stride, first), third)
    assert model.memory["row"].size == 3 * build_model(str(path)).memory["row"].size


def _small_rank(device: int | None) -> TraceBuilder:
    t = TraceBuilder()
    ext = t.op("aten::mm", 10.0, 5.0)
    args = {"External id": ext, "correlation": 7, "stream": 7}
    if device is not None:
        args["device"] = device
    t.events.append(
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": device or 0, "tid": 7,
         "ts": 12.0, "dur": 3.0, "args": args}
    )  # fmt: skip
    return t


def test_two_small_ranks_by_hand(tmp_path: Path) -> None:
    models = []
    for r in (0, 1):
        path = tmp_path / f"rank{r}.json"
        _small_rank(device=1).write(path)
        models.append(build_model(str(path)))
    batch = join_ranks(models)
    model = batch.model
    assert batch.first_rows.tolist() == [0, 2, 4]
    assert batch.device_stride == 2  # devices 0..1 a rank
    assert model.full_column("device").tolist() == [-1, 1, -1, 3]
    assert model.full_column("correlation").tolist() == [-1, 7, -1, 7 + batch.id_stride]
    assert model.names == models[0].names  # one table of the shared names
    assert [model.names[c] for c in model.events["name"].tolist()] == ["aten::mm", "gemm"] * 2
    pids = [model.pids[c] for c in model.events["pid"].tolist()]
    assert pids[2:] == [p + batch.pid_stride for p in pids[:2]]
    assert rank_of(np.arange(4), batch.first_rows).tolist() == [0, 0, 1, 1]
    # Grouped by rank, any order within one; a rank with none is empty.
    assert bounds_of(np.array([1, 0, 3, 2]), batch.first_rows) == [(0, 2), (2, 4)]
    assert bounds_of(np.array([3, 2]), batch.first_rows) == [(0, 0), (0, 2)]
    assert bounds_of(np.array([1, 0]), np.array([0, 2])) == [(0, 2)]  # one rank


def test_ranks_with_their_own_names_read_their_flags_from_the_batch(tmp_path: Path) -> None:
    """Rank 1 interns names rank 0 lacks, in another order: each rank's codes into the
    batch's table give its own names, and its name flags read through the batch (as
    `share_tables` leaves them) are those of its file read alone."""
    paths = [tmp_path / "rank0.json", tmp_path / "rank1.json"]
    _small_rank(device=1).write(paths[0])
    other = TraceBuilder()
    other.step(3, 1.0, 30.0)
    other.op("aten::mm", 2.0, 5.0)
    other.op("nccl:all_reduce", 9.0, 5.0)
    other.write(paths[1])
    models = [build_model(str(p)) for p in paths]
    batch = join_ranks(models)
    for codes, model in zip(batch.name_codes, models):
        assert [batch.model.names[c] for c in codes.tolist()] == model.names
    share_tables(batch, models, gpu_work=False)
    for path, model in zip(paths, models):
        alone = build_model(str(path))
        for predicate in (is_step_name, is_comm_op):
            assert name_flags(model, predicate).tolist() == name_flags(alone, predicate).tolist()
    assert name_flags(models[1], is_step_name).tolist() == [True, False, False]


def test_gpu_work_named_only_by_its_pid_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    _small_rank(device=None).write(path)
    models = [build_model(str(path))] * 2
    assert why_not_joined(models) == (
        "model 0 has GPU work whose device is named only by its process id"
    )
    with pytest.raises(NotJoined, match="only by its process id"):
        join_ranks(models)
