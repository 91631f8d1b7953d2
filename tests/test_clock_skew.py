"""`rank_clock_skew` (analysis/distributed/clock_skew.py): a rank whose timestamps are
shifted by a known amount is found with exactly that offset; a clean job has none; the
`distributed` view and `kinetoscope check` report it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from builders import rank_job
from corpus import corpus_path
from kinetoscope.analysis.distributed.clock_skew import SKEW_TOLERANCE_US, end_offsets
from kinetoscope.analysis.distributed.matching import Instances
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.cli.main import main
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext

SHIFT_US = 2500.0


def _shift(path: Path, by_us: float) -> None:
    """Every event of one rank's file later by `by_us`: that rank's clock is ahead. Keeps
    the file's form (gzip, a bare event list as in 2020 traces)."""
    raw = path.read_bytes()
    packed = raw[:2] == b"\x1f\x8b"
    doc = json.loads(gzip.decompress(raw) if packed else raw)
    for event in doc if isinstance(doc, list) else doc["traceEvents"]:
        if "ts" in event:
            event["ts"] += by_us
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if packed else data)


def _view(folder: Path) -> dict:
    (run,) = scan_logdir(str(folder))
    return analyze_run(RunContext.of(run))


def test_a_shifted_rank_is_found_with_its_offset(tmp_path: Path) -> None:
    job = rank_job(tmp_path / "job", 4, steps=5, kernels_per_step=4)
    _shift(job / "rank2.pt.trace.json", SHIFT_US)
    view = _view(job)
    offsets = {r["rank"]: r for r in view["clock_offsets"]}
    assert offsets[2]["offset_us"] == SHIFT_US and offsets[2]["skewed"]
    assert offsets[2]["calls"] == 5  # one all_reduce a step
    assert all(offsets[r]["offset_us"] == 0.0 and not offsets[r]["skewed"] for r in (0, 1, 3))
    (check,) = view["health"]
    assert check["id"] == "rank_clock_skew" and check["severity"] == "warning"
    assert check["count"] == 1 and [e["rank"] for e in check["examples"]] == [2]


def test_a_clean_job_has_no_skew(tmp_path: Path) -> None:
    view = _view(rank_job(tmp_path / "job", 3, steps=3, kernels_per_step=4))
    assert [r["offset_us"] for r in view["clock_offsets"]] == [0.0, 0.0, 0.0]
    assert [r["calls"] for r in view["clock_offsets"]] == [3, 3, 3]
    (check,) = view["health"]
    assert check["count"] == 0 and check["examples"] == [] and check["unknown"] is None


def test_two_ranks_name_both_and_small_offsets_are_tolerated(tmp_path: Path) -> None:
    two = rank_job(tmp_path / "two", 2, steps=3, kernels_per_step=4)
    _shift(two / "rank1.pt.trace.json", -SHIFT_US)
    offsets = [(r["rank"], r["offset_us"]) for r in _view(two)["clock_offsets"]]
    assert offsets == [(0, SHIFT_US), (1, -SHIFT_US)]  # which one is off cannot be told
    small = rank_job(tmp_path / "small", 3, steps=3, kernels_per_step=4)
    _shift(small / "rank0.pt.trace.json", SKEW_TOLERANCE_US / 2)
    view = _view(small)
    assert view["clock_offsets"][0]["offset_us"] == SKEW_TOLERANCE_US / 2
    assert view["health"][0]["count"] == 0


def test_one_rank_is_unknown_not_zero(tmp_path: Path) -> None:
    (check,) = _view(rank_job(tmp_path / "one", 1, steps=2, kernels_per_step=2))["health"]
    assert check["count"] is None and "one rank" in (check["unknown"] or "")


def test_median_of_the_other_ranks_ends() -> None:
    """Hand-computed: one call on four ranks ending at 10, 12, 13 and 30 µs; a second call
    on ranks 0 and 1 only; a third seen on rank 3 alone (no offset)."""
    rank = np.array([0, 1, 2, 3, 0, 1, 3])
    end = np.array([10.0, 12.0, 13.0, 30.0, 50.0, 54.0, 99.0])
    match = np.array([0, 0, 0, 0, 1, 1, 2])
    zeros = np.zeros(7)
    inst = Instances(
        [], [], rank, zeros, zeros, zeros, zeros, end, zeros, zeros, zeros, zeros, zeros
    )
    inst.match, inst.matched = match, np.bincount(match)[match] >= 2
    got = end_offsets(inst)
    # others' median: rank0 {12,13,30}=13, rank1 {10,13,30}=13, rank2 {10,12,30}=12,
    # rank3 {10,12,13}=12; second call: each the other's end.
    assert got[:6].tolist() == [-3.0, -1.0, 1.0, 18.0, -4.0, 4.0]
    assert np.isnan(got[6])


def test_check_names_the_skewed_rank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = rank_job(tmp_path / "logs" / "job", 3, steps=3, kernels_per_step=4)
    logdir = str(tmp_path / "logs")
    assert main(["check", logdir, "--no-cache", "--strict"]) == 0
    capsys.readouterr()
    _shift(job / "rank1.pt.trace.json", SHIFT_US)
    assert main(["check", logdir, "--no-cache"]) == 0
    assert main(["check", logdir, "--no-cache", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "job · all ranks · span 1: warnings" in out
    assert "rank_clock_skew" in out and f"rank 1: +{SHIFT_US:.3f} µs (3 calls)" in out
    assert main(["check", logdir, "--no-cache", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["job"]["all ranks"]["1"]
    assert found["checks"][0]["examples"][0]["rank"] == 1


TRACING = "gaoteng-git-kineto/tb_plugin/test/data/tracing"
# Corpus pairs: (folder, rank 1's offset to rank 0 as found, rank 1's offset once shifted by
# 5 s). None is skewed as recorded: their calls' end differences spread far wider than the
# offset (see clock_skew.py). The ResNet50 pair has no `Seq`: its calls are matched by
# occurrence, aligned by nearest end (matching.py), and a 5 s skew moves that alignment,
# so the shifted offset is not 5 s more than the recorded one (but is found, and named).
CORPUS_PAIRS = [
    (f"{TRACING}/bert_newAPI_fp16_ddp", 432.0, 5e6 + 432.0),
    (f"{TRACING}/resnet50_newAPI_ddp", 1354.0, 5850685.0),
    ("hta/tests/data/trace_filter", 0.0, 5e6),
]


@pytest.mark.parametrize(("folder", "found_us", "shifted_us"), CORPUS_PAIRS)
def test_corpus_pairs_and_an_injected_skew(
    folder: str, found_us: float, shifted_us: float, tmp_path: Path
) -> None:
    """Each pair as it is, then with every timestamp of rank 1 5 s later (a host whose clock
    is ahead): both ranks are named, the offset 5 s more where the matching holds."""
    view = _view(corpus_path(folder))
    assert [(r["rank"], r["offset_us"]) for r in view["clock_offsets"]] == [
        (0, -found_us),
        (1, found_us),
    ]
    assert view["health"][0]["count"] == 0
    copy = tmp_path / "job"
    copy.mkdir()
    rank0, rank1 = sorted(corpus_path(folder).iterdir())
    (copy / rank0.name).write_bytes(rank0.read_bytes())
    (copy / rank1.name).write_bytes(rank1.read_bytes())
    _shift(copy / rank1.name, 5e6)
    shifted = _view(copy)
    offsets = [(r["rank"], r["offset_us"]) for r in shifted["clock_offsets"]]
    assert offsets == [(0, -shifted_us), (1, shifted_us)]
    assert shifted["health"][0]["count"] == 2
