"""A synthetic job of many ranks with known slow ranks and slow links, as `RankSummary`s
(what stage 1 hands stage 2), so 2,048 ranks take a second to make.

Layout: ranks in TP groups of consecutive ranks (TP fastest), then PP stages, then DP
replicas, as Megatron orders them. Each step, on every rank: compute, the TP group's
all_reduce, compute, the DP group's all_reduce, then one send/recv to the next PP stage.
A call starts on each rank at its arrival and ends, on every member, when the last member
arrived plus the group's transfer time; a *slow rank* computes SLOW_US longer before its
TP call (or its DP call when TP is 1); a *slow group* transfers SLOW_LINK times slower.
Each rank's clock has its own origin (the view aligns them), and arrivals have a
deterministic jitter of a few µs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from builders import TraceBuilder
from kinetoscope.analysis.distributed.summary import (
    VERSION,
    ProcessGroup,
    RankSummary,
    StepTimes,
    pack_table,
)
from kinetoscope.analysis.distributed.view import RankInput

SLOW_US = 800.0
SLOW_LINK = 3.0
COMPUTE_US = (1000.0, 500.0)
TRANSFER_US = {"tp": 200.0, "dp": 400.0, "pp": 100.0}
NBYTES = {"tp": 8 << 20, "dp": 64 << 20, "pp": 4 << 20}
STEP_US = 10_000.0
BASE_NS = 1_700_000_000_000_000_000
KINDS = ["all_reduce", "all_to_all", "send_recv"]


@dataclass
class Layout:
    tp: int
    pp: int
    dp: int
    steps: int = 3
    slow_ranks: set[int] = field(default_factory=set)
    slow_groups: set[str] = field(default_factory=set)  # names as in `groups()`
    dp_kind: str = "all_reduce"  # "all_to_all": dlrm's embedding exchange
    describe: bool = True  # pg_desc "mesh_tp" etc. (else roles come from what groups run)

    @property
    def world(self) -> int:
        return self.tp * self.pp * self.dp

    def groups(self) -> dict[str, tuple[str, list[int]]]:
        """name -> (role, ranks), PyTorch-style numbered names ("0" is the world)."""
        out: dict[str, tuple[str, list[int]]] = {"0": ("world", list(range(self.world)))}
        r = np.arange(self.world).reshape(self.dp, self.pp, self.tp)
        sets = {"tp": r.reshape(-1, self.tp), "pp": r.transpose(0, 2, 1).reshape(-1, self.pp)}
        sets["dp"] = r.transpose(1, 2, 0).reshape(-1, self.dp)
        for role in ("tp", "pp", "dp"):
            if sets[role].shape[1] < 2:
                continue
            for members in sets[role]:
                out[str(len(out))] = (role, members.tolist())
        return out


def _group_of(groups: dict[str, tuple[str, list[int]]], role: str, world: int) -> np.ndarray:
    """Per rank, the index (into the names) of its group of `role`; -1 none."""
    out = np.full(world, -1, dtype=np.int64)
    for i, (r, ranks) in enumerate(groups.values()):
        if r == role:
            out[ranks] = i
    return out


class _Ranks:
    """Per rank, growing columns of collective instances (absolute time)."""

    def __init__(self, world: int) -> None:
        self.cols: list[dict[str, list[float]]] = [
            {
                k: []
                for k in ("kind", "pg", "seq", "start", "end", "nbytes", "gs", "step", "dst", "src")
            }
            for _ in range(world)
        ]

    def add(self, rank: int, **values: float) -> None:
        for k, v in values.items():
            self.cols[rank][k].append(v)


def _collective(
    job: _Ranks, layout: Layout, t: np.ndarray, role: str, step: int, seqs: np.ndarray
) -> np.ndarray:
    """Every group of `role` runs one call; returns each rank's time after it."""
    names = list(layout.groups())
    of = _group_of(layout.groups(), role, layout.world)
    if (of < 0).all():
        return t
    last = np.full(len(names), -np.inf)
    np.maximum.at(last, of[of >= 0], t[of >= 0])
    slow = np.array([SLOW_LINK if n in layout.slow_groups else 1.0 for n in names])
    end = last + TRANSFER_US[role] * slow
    kind = KINDS.index(layout.dp_kind if role == "dp" else "all_reduce")
    size = np.bincount(of[of >= 0], minlength=len(names))
    for r in np.flatnonzero(of >= 0).tolist():
        g = of[r]
        job.add(
            r,
            kind=kind,
            pg=g,
            seq=seqs[g],
            start=t[r],
            end=end[g],
            nbytes=NBYTES[role],
            gs=size[g],
            step=step,
            dst=-1,
            src=-1,
        )
    seqs[np.unique(of[of >= 0])] += 1
    return np.where(of >= 0, end[np.maximum(of, 0)], t)


def _pipeline(job: _Ranks, layout: Layout, t: np.ndarray, step: int, seqs: np.ndarray) -> None:
    """Stage s sends to stage s+1 of its PP group (send and recv both recorded), one hop
    after the other: a stage receives, then sends on."""
    names = list(layout.groups())
    t = t.copy()
    for g, (role, ranks) in enumerate(layout.groups().values()):
        if role != "pp":
            continue
        for a, b in zip(ranks, ranks[1:]):
            start = max(t[a], t[b])
            end = start + TRANSFER_US["pp"] * (SLOW_LINK if names[g] in layout.slow_groups else 1)
            common = dict(
                kind=KINDS.index("send_recv"),
                pg=g,
                seq=seqs[g],
                end=end,
                nbytes=NBYTES["pp"],
                gs=len(ranks),
                step=step,
            )
            job.add(a, start=t[a], dst=b, src=-1, **common)
            job.add(b, start=t[b], dst=-1, src=a, **common)
            t[a] = t[b] = end
            seqs[g] += 1


def job(layout: Layout) -> list[RankInput]:
    """The job's rank inputs (module doc)."""
    return [_summary(layout, r, cols) for r, cols in enumerate(simulate(layout))]


def simulate(layout: Layout) -> list[dict[str, list[float]]]:
    """Per rank, its collective instances' columns on the absolute clock (module doc)."""
    world, groups = layout.world, layout.groups()
    job_ranks = _Ranks(world)
    seqs = np.zeros(len(groups), dtype=np.int64)
    jitter = (np.arange(world) * 7919 % 5).astype(np.float64)  # 0..4 µs, whole (as traces)
    slow = np.zeros(world)
    slow[sorted(layout.slow_ranks)] = SLOW_US
    first_role = "tp" if layout.tp > 1 else "dp"
    for step in range(layout.steps):
        t = np.full(world, step * STEP_US) + jitter
        t = t + COMPUTE_US[0] + (slow if first_role == "tp" else 0)
        t = _collective(job_ranks, layout, t, "tp", step, seqs)
        t = t + COMPUTE_US[1] + (slow if first_role == "dp" else 0) + jitter
        t = _collective(job_ranks, layout, t, "dp", step, seqs)
        _pipeline(job_ranks, layout, t, step, seqs)
    return job_ranks.cols


KERNELS = {
    "all_reduce": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long)",
    "all_to_all": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
    "send_recv": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
}
COLLECTIVE_NAMES = {"all_reduce": "allreduce", "all_to_all": "all_to_all", "send_recv": ""}


def write_traces(layout: Layout, folder: Path) -> Path:
    """The same job as Kineto trace files (`rank<r>.pt.trace.json`, what PyTorch 2.x records:
    `pg_config`, `record_param_comms` args on the launching op, NCCL kernels), so stage 1
    runs on it too. Returns the run folder."""
    folder.mkdir(parents=True, exist_ok=True)
    groups = layout.groups()
    names = list(groups)
    for rank, cols in enumerate(simulate(layout)):
        shift = 1000.0 * (rank % 17)
        t = TraceBuilder()
        mine = sorted({int(g) for g in cols["pg"]})
        t.header.update(
            {
                "baseTimeNanoseconds": BASE_NS + int(shift * 1000),
                "distributedInfo": {
                    "backend": "nccl",
                    "rank": rank,
                    "world_size": layout.world,
                    "pg_count": len(mine) + 1,
                    "pg_config": [
                        {
                            "pg_name": names[g],
                            "pg_desc": _desc(layout, groups[names[g]][0]),
                            "backend_config": "cuda:nccl",
                            "pg_size": len(groups[names[g]][1]),
                            "ranks": groups[names[g]][1],
                        }
                        for g in [0, *mine]
                    ],
                },
            }
        )
        for step in range(layout.steps):
            t.step(step, step * STEP_US - shift, STEP_US)
            mm = t.op("aten::mm", step * STEP_US + 5 - shift, 5)
            t.launch(
                step * STEP_US + 6 - shift,
                2,
                mm,
                gpu_ts=step * STEP_US + 10 - shift,
                gpu_dur=COMPUTE_US[0] - 20,
                name="sm90_xmma_gemm_bf16bf16_bf16f32",
            )
        for i in range(len(cols["start"])):
            _write_instance(t, layout, cols, i, shift)
        t.write(folder / f"rank{rank}.pt.trace.json")
    return folder


def _desc(layout: Layout, role: str) -> str | None:
    return ("default_pg" if role == "world" else f"mesh_{role}") if layout.describe else None


def _write_instance(
    t: TraceBuilder, layout: Layout, cols: dict[str, list[float]], i: int, shift: float
) -> None:
    groups = layout.groups()
    names = list(groups)
    kind = KINDS[int(cols["kind"][i])]
    pg = names[int(cols["pg"][i])]
    start, end = cols["start"][i] - shift, cols["end"][i] - shift
    dst, src = int(cols["dst"][i]), int(cols["src"][i])
    name = COLLECTIVE_NAMES[kind] or ("send" if dst >= 0 else "recv")
    args: dict[str, object] = {
        "Collective name": name,
        "In msg nelems": int(cols["nbytes"][i]) // 2,
        "Out msg nelems": int(cols["nbytes"][i]) // 2,
        "dtype": "BFloat16",
        "Group size": int(cols["gs"][i]),
        "Process Group Name": pg,
        "Process Group Ranks": str(groups[pg][1]),
        "Seq": int(cols["seq"][i]),
    }
    if dst >= 0:
        args["Dst Rank"] = dst
    if src >= 0:
        args["Src Rank"] = src
    desc = _desc(layout, groups[pg][0])
    if desc:
        args["Process Group Description"] = desc
    op = t.op("record_param_comms", start - 3, 2, **args)
    t.launch(start - 2, 1, op, gpu_ts=start, gpu_dur=end - start, name=KERNELS[kind], stream=20)


def _summary(layout: Layout, rank: int, cols: dict[str, list[float]]) -> RankInput:
    shift = 1000.0 * (rank % 17)  # per-rank clocks: this rank's origin is later by this
    groups = layout.groups()
    names = list(groups)
    mine = sorted({int(g) for g in cols["pg"]})
    steps: list[StepTimes] = [
        {
            "name": f"ProfilerStep#{s}",
            "number": s,
            "start_us": s * STEP_US - shift,
            "end_us": (s + 1) * STEP_US - shift,
            "computation_us": 1500.0,
            "overlap_us": 0.0,
            "communication_us": 0.0,
            "other_us": 0.0,
            "dataloader_us": 0.0,
            "host_gap_us": 0.0,
        }
        for s in range(layout.steps)
    ]
    table = pack_table(
        KINDS,
        names,
        kind=np.array(cols["kind"]),
        pg=np.array(cols["pg"]),
        seq=np.array(cols["seq"]),
        start_us=np.array(cols["start"]) - shift,
        end_us=np.array(cols["end"]) - shift,
        nbytes=np.array(cols["nbytes"]),
        group_size=np.array(cols["gs"]),
        step=np.array(cols["step"]),
        dst=np.array(cols["dst"]),
        src=np.array(cols["src"]),
    )
    pgs = [
        ProcessGroup(
            names[g],
            f"mesh_{groups[names[g]][0]}" if layout.describe else None,
            "cuda:nccl",
            len(groups[names[g]][1]),
            groups[names[g]][1],
        )
        for g in [0, *mine]
    ]
    summary = RankSummary(
        version=VERSION,
        rank=rank,
        backend="nccl",
        world_size=layout.world,
        host=None,
        process_groups=pgs,
        mode="gpu",
        time_origin_us=1_700_000_000_000_000.0 + shift,
        steps_source="profiler_steps",
        steps=steps,
        collectives=table,
        devices=[],
        partial=False,
        warnings=[],
    )
    return RankInput(f"rank{rank}", "1", f"rank{rank}.pt.trace.json", summary, rank)
