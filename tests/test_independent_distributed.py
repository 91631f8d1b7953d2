"""The Distributed view against `tests/independent/collectives.py`, which recomputes it
from the raw rank traces (no kinetoscope import), on every multi-rank run of the corpus
(the 2020 DDP pairs, the sampled ranks of the 128-rank job, the gloo rank alone) and on
built jobs (ranks holding different subsets of the calls, a relabelled job, a job of
process groups with a slow rank).

Compared per rank: sync wait, transfer, unmatched time and count; per collective type its
group size, where that comes from, and algorithm and bus bandwidth; per step the
straggler and its lateness; the job's slow ranks. Differences on purpose, named:

- steps: the checker puts a call in the host `ProfilerStep#N` range holding its launch,
  the product in its steps (analysis/core/steps.py), which may end on the GPU and may drop a
  rank's last step; so a step is compared only where both name a straggler by the
  product's first common collective and that call starts in both's step (the ResNet50
  pair's step 5 opens with the tail of rank 0's step 4 on the GPU, and step 8 is dropped
  on rank 0: both named in STEP_DIFFERS).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import rank_job, sampled_job
from corpus import corpus_path
from independent import collectives as checker
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.run_context import RunContext
from synthetic_job import Layout, write_traces

TRACING = "gaoteng-git-kineto/tb_plugin/test/data/tracing"
CORPUS_RUNS = [
    f"{TRACING}/bert_newAPI_fp16_ddp",
    f"{TRACING}/resnet50_newAPI_ddp",
    "hta/tests/data/trace_filter",
    "hta/tests/data/cpu_only",
]
# (run, step): the step windows differ (see the module doc)
STEP_DIFFERS = {
    ("resnet50_newAPI_ddp", "ProfilerStep#5"),
    ("resnet50_newAPI_ddp", "ProfilerStep#8"),
}
SOURCE_ORDER = ["args", "sizes", "process_group", "world_size", "ranks_found"]


def compare(folder: Path, counts: dict[str, int] | None = None) -> dict[str, list[str]]:
    """Quantity -> the disagreements (empty lists: all agree); `counts` gets how many
    values of each quantity were compared."""
    (run,) = scan_logdir(str(folder))
    view = analyze_run(RunContext.of(run))
    want = checker.analyze(folder)
    out: dict[str, list[str]] = {}

    def check(what: str, got: Any, expected: Any, tol: float = 0.0) -> None:
        out.setdefault(what, [])
        if counts is not None:
            counts[what] = counts.get(what, 0) + 1
        same = got == expected
        if isinstance(got, float) and isinstance(expected, float):
            same = abs(got - expected) <= max(tol * abs(expected), 0.01)
        if not same:
            out[what].append(f"{got!r} != {expected!r}")

    assert sorted(r["rank"] for r in view["ranks"]) == sorted(want["ranks"])
    for r in view["ranks"]:
        w = want["ranks"][r["rank"]]
        # times: float sums of ns-resolution traces agree to a few parts in 1e8
        check("wait", r["sync_wait_us"], round(w["wait_us"], 3), 1e-6)
        check("transfer", r["transfer_us"], round(w["transfer_us"], 3), 1e-6)
        check("unmatched_us", r["unmatched_us"], round(w["unmatched_us"], 3), 1e-6)
        check("unmatched", r["unmatched_collectives"], w["unmatched"])
        for c in r["collectives"]:
            k = w["kinds"].get(c["name"])
            if k is None:  # every instance unmatched: the checker has no matched row
                check("group_size", c["algbw_gbps"], None)
                continue
            check("group_size", c["group_size"], k["group_size"])
            source = max(k["sources"], key=SOURCE_ORDER.index)
            check("group_size_source", c["group_size_source"], source)
            for bw in ("algbw_gbps", "busbw_gbps"):
                expected = None if k[bw] is None else round(k[bw], 3)
                check(bw, c[bw], expected, 1e-3)
    for step in view["steps"]:
        if (folder.name, step["name"]) in STEP_DIFFERS or step["ranks"] < 2:
            continue
        mine = step["straggler"]
        theirs = want["steps"].get(step["name"])
        got = None if mine is None else (mine["rank"], mine["late_by_us"])
        expected = None if theirs is None else (theirs[0], round(theirs[1], 3))
        check("straggler", got, expected)
    check("slow_ranks", view["slow_ranks"], want["slow_ranks"])
    got_links = {(k["src"], k["dst"]): k for k in view["links"]}
    check("links", sorted(got_links), sorted(want["links"]))
    for pair, theirs in want["links"].items():
        mine = got_links.get(pair)
        if mine is not None:
            check("link_ops", mine["ops"], theirs["ops"])
            check("link_bytes", mine["bytes"], theirs["bytes"])
            check("link_time", mine["time_us"], round(theirs["time_us"], 3), 1e-6)
    return out


def assert_agrees(folder: Path) -> None:
    diffs = {k: v for k, v in compare(folder).items() if v}
    assert diffs == {}, diffs


@pytest.mark.corpus
@pytest.mark.parametrize("rel", CORPUS_RUNS, ids=lambda r: r.rsplit("/", 1)[-1])
def test_corpus_runs(rel: str) -> None:
    assert_agrees(corpus_path(rel))


# Recorded 2-rank gloo jobs on a loaded host (tests/data/ddp_gloo_loaded/README.md): one
# call's ends on the two ranks up to 24 ms apart.
LOADED_GLOO = Path(__file__).parent / "data" / "ddp_gloo_loaded"


@pytest.mark.parametrize("name", ["steps_2_to_4", "steps_7_to_9", "steps_12_to_14"])
def test_gloo_job_on_a_loaded_host(name: str) -> None:
    assert_agrees(LOADED_GLOO / name)


def test_gloo_job_whose_slow_rank_opened_its_profiler_later() -> None:
    """tests/data/gloo_late_window/README.md: rank 1, late at every step, is named."""
    folder = Path(__file__).parent / "data" / "gloo_late_window"
    assert_agrees(folder)
    assert checker.analyze(folder)["slow_ranks"] == [1]


def test_ddp_job_whose_buckets_overlap() -> None:
    """tests/data/ddp_gloo_buckets/README.md: rank 0, late at every step, is named."""
    folder = Path(__file__).parent / "data" / "ddp_gloo_buckets"
    assert_agrees(folder)
    assert checker.analyze(folder)["slow_ranks"] == [0]


def test_gloo_pipeline_of_sends_and_receives() -> None:
    """tests/data/gloo_p2p/README.md: each direction's three sends of 16 KiB, their peer
    read from the c10d op each gloo range starts in."""
    folder = Path(__file__).parent / "data" / "gloo_p2p"
    assert_agrees(folder)
    (run,) = scan_logdir(str(folder))
    links = analyze_run(RunContext.of(run))["links"]
    assert [(k["src"], k["dst"], k["ops"], k["bytes"]) for k in links] == [
        (0, 1, 3, 3 * 4096 * 4),
        (1, 0, 3, 3 * 4096 * 4),
    ]


def test_ranks_with_different_subsets_of_calls(tmp_path: Path) -> None:
    assert_agrees(sampled_job(tmp_path / "sampled"))


def test_relabelled_job(tmp_path: Path) -> None:
    assert_agrees(rank_job(tmp_path / "same", 4, steps=3, kernels_per_step=3))


def test_job_of_process_groups_with_a_slow_rank(tmp_path: Path) -> None:
    folder = write_traces(Layout(4, 2, 2, slow_ranks={5}, slow_groups={"2"}), tmp_path / "job")
    assert_agrees(folder)
    assert checker.analyze(folder)["slow_ranks"] == [5]
