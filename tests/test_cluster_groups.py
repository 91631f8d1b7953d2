"""Communication groups at scale: synthetic jobs with known slow ranks and slow links
(tests/synthetic_job.py: several layouts, 8 to 2,048 ranks, both faults at once) are found
exactly; stage 1 reads process groups and p2p peers from the collectives' args; the corpus
128-rank job and the 2-rank pairs give plausible groups."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.analysis.distributed.groups import role_of
from kinetoscope.analysis.distributed.matching import Instances, match_instances
from kinetoscope.analysis.distributed.rank_summaries import analyze_run
from kinetoscope.analysis.distributed.stragglers import _first_call_lateness
from kinetoscope.analysis.distributed.summary import COLUMNS
from kinetoscope.analysis.distributed.text import render_distributed
from kinetoscope.analysis.distributed.view import RankSummary, analyze, summarize_rank
from kinetoscope.ingest.build import build_model
from kinetoscope.store.run_context import RunContext
from synthetic_job import SLOW_LINK, SLOW_US, TRANSFER_US, Layout, job, write_traces
from test_distributed_corpus import run_of

LAYOUTS = [
    # (tp, pp, dp), slow ranks, slow groups (names as Layout.groups() numbers them)
    pytest.param(Layout(8, 1, 1, slow_ranks={3}), id="8-tp-only"),
    pytest.param(Layout(1, 1, 8, slow_ranks={6}), id="8-dp-only"),
    pytest.param(Layout(4, 2, 2, slow_ranks={5}, slow_groups={"2"}), id="16-tp-pp-dp-both"),
    pytest.param(Layout(2, 4, 8, slow_ranks={9, 40}, slow_groups={"3", "20"}), id="64-two-each"),
    pytest.param(
        Layout(8, 1, 32, slow_ranks={100}, slow_groups={"7"}, describe=False), id="256-undescribed"
    ),
    pytest.param(Layout(8, 1, 256, slow_ranks={1234}, slow_groups={"17"}), id="2048-tp8-dp256"),
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_slow_ranks_and_slow_links_are_found_exactly(layout: Layout) -> None:
    view = analyze(job(layout))
    assert view["ranks_found"] == layout.world
    assert view["slow_ranks"] == sorted(layout.slow_ranks)
    assert sorted(view["slow_groups"]) == sorted(layout.slow_groups)
    rows = {g["name"]: g for g in view["groups"]}
    groups = layout.groups()
    for name, row in rows.items():
        role, members = groups[name]
        assert row["ranks"] == members and row["ranks_found"] == len(members)
        assert row["role"] == role.upper()
        assert row["collectives"] == (0 if role == "pp" else layout.steps)
        if role == "pp":
            continue
        slow_here = layout.slow_ranks & set(members)
        # The slow rank is waited for in the group whose call follows its slow computation
        # (TP, or DP without TP); elsewhere its lateness came with it from that call.
        blamed = slow_here if role == ("tp" if layout.tp > 1 else "dp") else set()
        assert row["waits_for"] == (min(blamed) if blamed else None)
        expected = (
            "slow_link" if name in layout.slow_groups else ("waits_for_rank" if blamed else "ok")
        )
        assert row["verdict"] == expected, name
        factor = SLOW_LINK if name in layout.slow_groups else 1.0
        assert row["transfer_us"] == pytest.approx(layout.steps * TRANSFER_US[role] * factor)
        call = row["call"]
        assert call is not None and call["type"] == (
            "all_to_all" if role == "dp" and layout.dp_kind == "all_to_all" else "all_reduce"
        )
        if expected == "waits_for_rank":  # the call it held longest: its lateness + transfer
            assert call["rank"] == row["waits_for"]
            span = SLOW_US + TRANSFER_US[role]
            assert call["end_us"] - call["start_us"] == pytest.approx(span, abs=10)
        if expected == "slow_link":
            # its slowest transfer, from the first arrival (waits included)
            assert call["end_us"] - call["start_us"] >= TRANSFER_US[role] * SLOW_LINK
        peers = sum(1 for r, _ in groups.values() if r == role)
        assert row["transfer_ratio"] == (pytest.approx(factor) if peers >= 3 else None)
    # The per-step straggler is the slow rank, late by its extra computation (± jitter).
    if len(layout.slow_ranks) == 1:
        for step in view["steps"]:
            straggler = step["straggler"]
            assert straggler is not None and straggler["rank"] in layout.slow_ranks
            assert straggler["late_by_us"] == pytest.approx(SLOW_US, abs=5)


def test_a_job_without_a_slow_rank_names_no_straggler() -> None:
    """The issue's report: 256 groups of 8 with no straggler named rank 0, late by 0 µs."""
    view = analyze(job(Layout(8, 1, 4)))
    assert view["slow_ranks"] == [] and view["slow_groups"] == []
    assert all(g["verdict"] == "ok" for g in view["groups"])
    for step in view["steps"]:
        s = step["straggler"]
        assert s is None or s["late_by_us"] > 0


def test_pipeline_links_and_bus_bandwidth() -> None:
    layout = Layout(2, 4, 2, slow_groups={"4"})
    view = analyze(job(layout))
    links = {(row["src"], row["dst"]): row for row in view["links"]}
    # Every PP group of 4 stages has 3 sends, one per step each: (tp, dp) pairs x 3 hops.
    assert len(links) == 2 * 2 * 3
    assert (0, 2) in links and (2, 4) in links and (4, 6) in links
    link = links[(0, 2)]
    assert link["ops"] == layout.steps and link["bytes"] == layout.steps * (4 << 20)
    assert link["gbps"] == pytest.approx((4 << 20) / TRANSFER_US["pp"] / 1e3, rel=1e-3)
    tp = next(g for g in view["groups"] if g["role"] == "TP")
    # all_reduce of 8 MiB over 2 ranks in 200 µs: busbw = size/time x 2(n-1)/n
    assert tp["busbw_gbps"] == pytest.approx((8 << 20) / 200 / 1e3 * 1.0, rel=1e-3)


def test_dlrm_style_all_to_all() -> None:
    layout = Layout(1, 1, 16, dp_kind="all_to_all", slow_ranks={11}, describe=False)
    view = analyze(job(layout))
    (group,) = [g for g in view["groups"] if g["collectives"]]
    assert group["role"] == "EP" and group["waits_for"] == 11
    assert group["busbw_gbps"] == pytest.approx((64 << 20) / 400 / 1e3 * 15 / 16, rel=1e-3)
    assert view["slow_ranks"] == [11]


@pytest.mark.parametrize(
    ("name", "description", "kinds", "ranks", "role"),
    [
        ("5", "mesh_tp", {"all_reduce"}, [0, 1], "TP"),
        ("5", "expert_parallel", {"all_reduce"}, [0, 8], "EP"),
        ("0", "default_pg", {"all_reduce"}, [0, 1], "world"),
        ("7", None, {"send_recv"}, [0, 8], "PP"),
        ("7", None, {"all_reduce"}, [0, 1, 2, 3], "TP"),
        ("7", None, {"all_reduce"}, [0, 8, 16], "DP"),
        ("", None, {"all_to_all"}, [0, 1], ""),
    ],
)
def test_roles(
    name: str, description: str | None, kinds: set[str], ranks: list[int], role: str
) -> None:
    assert role_of(name, description, kinds, ranks) == role


def p2p_rank(rank: int) -> TraceBuilder:
    """A rank of a 4-rank job without pg_config: groups and peers only in the args."""
    t = TraceBuilder()
    t.header["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 4}
    t.step(1, 0, 1000)
    common = {"Process Group Name": "3", "Process Group Description": "pp_group", "Seq": 1}
    send = t.op(
        "record_param_comms",
        100,
        10,
        **{
            "Collective name": "send",
            "In msg nelems": 256,
            "dtype": "BFloat16",
            "Group size": 2,
            "Process Group Ranks": "[1, 3]",
            "Dst Rank": 3,
            **common,
        },
    )
    t.launch(101, 2, send, gpu_ts=120, gpu_dur=50, name="ncclDevKernel_SendRecv(ncclDevComm*)")
    ar = t.op(
        "record_param_comms",
        300,
        10,
        **{
            "Collective name": "allreduce",
            "In msg nelems": 10,
            "dtype": "Float",
            "Group size": 2,
            "Process Group Name": "9",
            "Process Group Ranks": "[0, 2, ...]",
            "Global rank start": 0,
            "Global rank stride": 2,
            "Seq": 4,
        },
    )
    t.launch(301, 2, ar, gpu_ts=320, gpu_dur=50, name="ncclDevKernel_AllReduce_Sum_f32_RING_LL")
    return t


def test_stage_one_reads_groups_and_peers_from_args(tmp_path: Path) -> None:
    summary = summarize_rank(p2p_rank(1).model(tmp_path))
    groups = {pg.name: pg for pg in summary.process_groups}
    assert (groups["3"].description, groups["3"].ranks, groups["3"].size) == ("pp_group", [1, 3], 2)
    # A truncated list is rebuilt from the start, stride and size.
    assert groups["9"].ranks == [0, 2]
    t = summary.collectives
    kinds = [t.kinds[k] for k in t.column("kind")]
    assert kinds == ["send_recv", "all_reduce"]
    assert t.column("dst").tolist() == [3, -1] and t.column("src").tolist() == [-1, -1]
    assert t.column("nbytes").tolist() == [512.0, 40.0]
    # Packed and small: round-trips through the cache's JSON.
    assert msgspec.json.decode(msgspec.json.encode(summary), type=RankSummary) == summary


def test_summaries_stay_small_at_scale() -> None:
    table = job(Layout(8, 1, 8, steps=50))[0].summary.collectives
    assert table.count == 100
    # 59 bytes an instance in memory (12 packed columns), base64 of that on disk: not a
    # Python object per number.
    assert sum(len(getattr(table, c)) for c in COLUMNS) == 100 * 59
    assert len(msgspec.json.encode(table)) < 100 * 85  # base64: 4/3 of 59, plus the names


@pytest.mark.corpus
def test_corpus_128_rank_job_gives_plausible_groups() -> None:
    view = analyze_run(RunContext.of(run_of(corpus_path("hta/tests/data/trace_filter"))))
    (group,) = view["groups"]
    # That job's traces name no process group: one row for the unnamed collectives.
    assert group["name"] == "" and group["role"] == "" and group["ranks"] == [0, 1]
    assert group["collectives"] > 0 and group["transfer_us"] > 0 and group["sync_us"] > 0
    assert group["busbw_gbps"] is not None and 0 < group["busbw_gbps"] < 1000
    assert view["links"] == [] and json.dumps(view)


@pytest.mark.corpus
def test_corpus_nccl_pair_names_its_default_group() -> None:
    view = analyze_run(RunContext.of(run_of(corpus_path("hta/tests/data/nccl_parser_config"))))
    rows = {g["name"]: g for g in view["groups"]}
    assert rows["0"]["description"] == "default_pg" and rows["0"]["role"] == "world"
    assert rows["0"]["ranks"] == [0, 1]


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(Layout(2, 2, 4, slow_ranks={6}, slow_groups={"1"}), id="16-both"),
        pytest.param(Layout(2, 4, 2, slow_ranks={9}, slow_groups={"2"}), id="16-pipeline-4"),
        pytest.param(
            Layout(1, 1, 8, dp_kind="all_to_all", slow_ranks={2}, describe=False), id="8-a2a"
        ),
    ],
)
def test_trace_files_give_what_the_summaries_give(tmp_path: Path, layout: Layout) -> None:
    """Stage 1 on real trace files of the same job (pg_config, record_param_comms args,
    NCCL kernels) finds the same groups, slow ranks, slow links and links."""
    write_traces(layout, tmp_path / "job")
    from_files = analyze_run(RunContext.of(run_of(tmp_path / "job")))
    from_summaries = analyze(job(layout))
    assert from_files["slow_ranks"] == sorted(layout.slow_ranks)
    assert from_files["slow_groups"] == sorted(layout.slow_groups)
    # The call to open lies in its rank's own trace times (each rank's clock differs).
    by_rank = {r["rank"]: r for r in from_files["ranks"]}
    for row in from_files["groups"]:
        if row["call"] is not None:
            steps = by_rank[row["call"]["rank"]]["steps"]
            assert any(
                st["start_us"] <= row["call"]["start_us"] < row["call"]["end_us"] <= st["end_us"]
                for st in steps
            ), row
    # Equal but for float rounding: a trace's origin (baseTimeNanoseconds, ~1.7e18 ns) is
    # not exact in float64 microseconds, so the files' clocks align within a microsecond.
    for table in ("groups", "links"):
        assert len(from_files[table]) == len(from_summaries[table])
        for got, want in zip(from_files[table], from_summaries[table]):
            for key, value in want.items():
                if isinstance(value, dict):
                    assert got[key] == pytest.approx(value, abs=1), key
                elif isinstance(value, float):
                    assert got[key] == pytest.approx(value, rel=0.01, abs=layout.world), key
                else:
                    assert got[key] == value, key


def test_first_call_lateness_against_the_other_members_median() -> None:
    """Hand-computed: call A on ranks 0-3 starting at 0, 10, 20, 100 (odd others: the
    middle one), call B on ranks 4-6 at 0, 5, 30 (even others: their mean); rank 3 also
    has a later call, which is not its first."""
    starts = [0.0, 10.0, 20.0, 100.0, 0.0, 5.0, 30.0, 500.0]
    n = len(starts)
    inst = Instances(
        kind_names=["all_reduce"],
        pg_names=["1", "2"],
        rank=np.array([0, 1, 2, 3, 4, 5, 6, 3]),
        kind=np.zeros(n, dtype=np.int64),
        pg=np.array([0, 0, 0, 0, 1, 1, 1, 0]),
        seq=np.array([0, 0, 0, 0, 0, 0, 0, 1]),
        start=np.array(starts),
        end=np.array(starts) + 1000,
        nbytes=np.full(n, 8.0),
        group_size=np.array([4, 4, 4, 4, 3, 3, 3, 4]),
        step=np.zeros(n, dtype=np.int64),
        dst=np.full(n, -1),
        src=np.full(n, -1),
        offset=np.zeros(7),
    )
    match_instances(inst)
    found = _first_call_lateness(inst, np.arange(n), np.arange(7))
    assert found is not None
    arrivals, lateness = found
    assert arrivals.tolist() == starts[:7]
    assert lateness.tolist() == [-20.0, -10.0, 10.0, 90.0, -17.5, -10.0, 27.5]


def test_the_text_report_names_the_slow_rank_and_the_slow_link() -> None:
    layout = Layout(4, 1, 4, slow_ranks={6}, slow_groups={"4"})
    view = {**analyze(job(layout)), "errors": []}
    text = render_distributed(view)
    assert "slow ranks [6], slow links in groups ['4']" in text
    assert "group 2 (TP, 4 ranks): waits for rank 6" in text
    assert "group 4 (TP, 4 ranks): transfer 3.0x its peers'" in text


@pytest.mark.corpus
def test_undefined_descriptions_are_no_descriptions() -> None:
    """SGLang on MI300X (RCCL, backend "nccl"): seven groups, most "undefined"."""
    model = build_model(
        str(
            corpus_path(
                "tracelens/tests/traces/inference/sglang_prefilldecode/"
                "sglang_Qwen3-8B_prefilldecode.json.gz"
            )
        )
    )
    groups = summarize_rank(model).process_groups
    assert len(groups) == 7
    assert groups[0].description == "default_pg"
    assert all(g.description != "undefined" for g in groups)
    assert groups[1].description is None
