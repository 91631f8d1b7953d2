"""The bench's cut of a tiled trace to a size between whole tiles (`bench/_cut.py`): what it
keeps, by hand on a small built trace, and that a real trace cut so reads as a trace."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from corpus import corpus_missing
from kinetoscope.cli.main import main as cli_main

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
REAL = SHARED / "corpus/tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"


def _bench_module(name: str) -> ModuleType:
    """A module of bench/ that imports only the standard library, by its path: bench/ is
    not put on sys.path, where its `profile.py` would hide the standard library's from
    every later import in the session (torch's `cProfile` imports it)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass finds its module there
    spec.loader.exec_module(module)
    return module


def _cut_module() -> ModuleType:
    return _bench_module("_cut")


def _write(path: Path, doc: dict[str, Any]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(doc, f)


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rb") as f:
        events: list[dict[str, Any]] = json.loads(f.read())["traceEvents"]
    return events


def _op(name: str, ts: int, dur: int) -> dict[str, Any]:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}


def test_cut_keeps_metadata_and_what_ended_by_the_cut(tmp_path: Path) -> None:
    cut = _cut_module()
    meta = {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}}
    ops = [_op("a", 0, 10), _op("long", 5, 100), _op("b", 20, 10), _op("c", 40, 10)]
    src, out = tmp_path / "src.json.gz", tmp_path / "out.json.gz"
    _write(src, {"schemaVersion": 1, "traceEvents": [ops[0], meta, *ops[1:]]})
    # Room for the header, the metadata and two of the ops, whichever they are: the ops'
    # ends are 10 (a), 30 (b), 50 (c), 105 (long); the two that end first are a and b.
    head = '{"schemaVersion": 1,\n"traceEvents": [\n\n]}\n'
    room = len(head) + sum(len(json.dumps(e)) + 2 for e in (meta, ops[0], ops[2]))
    size = cut.cut_to_size(src, out, room)
    kept = _events(out)
    assert kept == [meta, ops[0], ops[2]]  # metadata first, then the file's own order
    assert size <= room
    with gzip.open(out, "rb") as f:
        assert json.loads(f.read())["schemaVersion"] == 1


def test_cut_of_a_real_trace_is_its_size_and_reads(tmp_path: Path, capsys: Any) -> None:
    if not REAL.is_file():
        corpus_missing(str(REAL.relative_to(SHARED)))
    cut = _cut_module()
    with gzip.open(REAL, "rb") as f:
        whole = len(f.read())
    out = tmp_path / "run" / "worker0.1700000000000.pt.trace.json.gz"
    out.parent.mkdir()
    target = int(whole * 0.6)
    size = cut.cut_to_size(REAL, out, target)
    assert 0.97 * target <= size <= target
    events = _events(out)
    assert 0 < len(events) < len(_events(REAL))
    assert cli_main(["report", str(out), "--format", "json", "--no-cache"]) == 0
    views = json.loads(capsys.readouterr().out)
    assert views["status"]["state"] == "ready" and not views["status"]["partial"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert kernels and views["kernels"]["kernel_count"] == len(kernels)


@pytest.mark.parametrize("budget", [0, 10])
def test_a_budget_smaller_than_any_event_keeps_none(budget: int) -> None:
    cut = _cut_module()
    events = [_op("a", 0, 10)]
    assert cut.cut_time(events, budget) == float("-inf")


def test_the_bench_makes_a_cut_file_once(tmp_path: Path) -> None:
    """`make_cut` (what `run.py --cut` calls): a run folder of its own with HTA's link,
    the size asked, and the same file again on a second call."""
    tiler = SHARED / "tools" / "make_big_trace.py"
    for needed in (REAL, tiler):
        if not needed.is_file():
            corpus_missing(str(needed.relative_to(SHARED)))
    traces = _bench_module("_traces")
    tiled = traces.make_tiled(tiler, SHARED / "corpus", REAL, 2, tmp_path, "x2", 120.0)
    target = int(tiled.json_bytes * 0.75)
    first = traces.make_cut(tiled, target, tmp_path, "cut")
    assert not first.reused and 0.97 * target <= first.json_bytes <= target
    assert first.path.is_file() and first.path.parent.parent == first.logdir
    assert (first.hta_dir / f"{first.key}.json.gz").resolve() == first.path.resolve()
    again = traces.make_cut(tiled, target, tmp_path, "cut")
    assert again.reused and again.json_bytes == first.json_bytes
