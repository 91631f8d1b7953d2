"""The distributed view's per-rank numbers recomputed from the raw rank traces of a run,
without kinetoscope: each rank's collectives, paired across ranks by the call's identity,
then per rank its wait, transfer and unmatched time, group sizes and bandwidth, the
straggler of each step and the ranks the others wait for.

Method (written from the definitions of docs/distributed.md, not from the product's code):

- an instance is an NCCL/RCCL kernel (name has `nccl`/`rccl`), or a `gloo:*` range on a
  CPU rank. What it is comes from `Collective name` (the kernel's args, then the
  communication ops that contain its launch on the launching thread, innermost first),
  else from those ops' names (`nccl:all_reduce`), else from the kernel's name. Bytes are
  `In msg nelems` x the dtype's size, else the first tensor of `Input Dims` x `Input type`.
  Group size: `Group size`, else for all_gather / reduce_scatter the ratio of the two
  tensors of an op taking (output, input), else the process group's size, else the world
  size, else the ranks found;
- identity: (process group, type, `Seq`) when every instance of that group and type has a
  `Seq`. Otherwise, first the k-th instance of a `ProfilerStep#N` on a rank is the k-th of
  that step on the rank with the most instances, in steps where both ran as many and
  their bytes agree (a group's calls are issued in one order on every rank), unless those
  pairs' ends differ by more than TOLERANCE_US in the median; then an order-preserving
  alignment (dynamic programming) of each rank's remaining instances of one type against
  the calls still free, pairing the most instances whose
  bytes agree (types with the same bytes on every rank) and whose ends are within
  TOLERANCE_US of the call's (rooted types, broadcast and reduce, whose root may leave
  early: any ends), the least end difference among those;
- wait = last start among the call's instances - own start, clipped to [0, duration];
  transfer = duration - wait, for instances on two ranks or more; the others are unmatched;
- per step (a `ProfilerStep#N` host range holding the launch), the straggler is the rank
  that starts the step's earliest call held by all the step's ranks last, late by its start
  minus the median start of the others (None below 1 µs, or when there is no such call);
- slow ranks (docs/distributed.md#communication-groups): per call, held = the last start
  minus the one before (or the end of that one's previous synchronizing call, when it
  started before that ended), at most what that one waited; the last rank is blamed when its
  gap since its previous synchronizing call (one every member was still in when the last
  arrived) exceeds the other members' mean gap by half of held or more; a group waits for
  the rank blamed for the most held time, in two calls or more, when that is half of the
  group's held time and a tenth of its calls' transfer (the last arriver's) + sync (mean
  wait), both over the calls whose last arriver has a gap (a previous synchronizing call).
"""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .raw import read_raw

TOLERANCE_US = 10_000.0
TYPES = [  # squashed name substring -> type, first match wins
    ("reducescatter", "reduce_scatter"),
    ("allgather", "all_gather"),
    ("allreduce", "all_reduce"),
    ("alltoall", "all_to_all"),
    ("broadcast", "broadcast"),
    ("bcast", "broadcast"),
    ("sendrecv", "send_recv"),
    ("send", "send_recv"),
    ("recv", "send_recv"),
    ("barrier", "barrier"),
    ("gather", "gather"),
    ("scatter", "scatter"),
    ("reduce", "reduce"),
]
SAME_BYTES = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "barrier"}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}
BUS = {  # (scale, ring)
    "all_reduce": (2.0, True),
    "all_gather": (1.0, True),
    "reduce_scatter": (1.0, True),
    "all_to_all": (1.0, True),
    "broadcast": (1.0, False),
    "reduce": (1.0, False),
    "send_recv": (1.0, False),
}
DTYPES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "c10::half": 2,
    "float16": 2, "bfloat16": 2, "c10::bfloat16": 2, "long": 8, "int64": 8, "int": 4,
    "int32": 4, "short": 2, "int16": 2, "signed char": 1, "unsigned char": 1, "char": 1,
    "byte": 1, "int8": 1, "uint8": 1, "bool": 1,
}  # fmt: skip
COMM_OP = re.compile(r"^(record_param_comms|nccl:|c10d::|gloo:)")


def type_of(name: str) -> str | None:
    squashed = name.lower().replace("_", "").replace(" ", "").replace("-", "")
    return next((t for s, t in TYPES if s in squashed), None)


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _elements(dims: Any) -> int | None:
    if not isinstance(dims, list) or not dims or not isinstance(dims[0], list) or not dims[0]:
        return None
    n = 1
    for d in dims[0]:
        if not isinstance(d, int):
            return None
        n *= d
    return n


@dataclass
class Inst:
    rank: int
    kind: str
    pg: str
    seq: int | None
    start: float
    end: float
    nbytes: int | None
    group_size: int | None
    gs_from: str | None
    step: str | None
    call: int = -1
    wait: float = 0.0
    matched: bool = False
    dst: int | None = None  # a send's global peer
    src: int | None = None  # a receive's global peer


@dataclass
class Rank:
    rank: int
    world: int | None
    groups: dict[str, int] = field(default_factory=dict)  # pg name -> size
    insts: list[Inst] = field(default_factory=list)
    base_us: float = 0.0  # baseTimeNanoseconds / 1000: the file's ts are from this epoch time


def _facts(chain: list[dict[str, Any]]) -> dict[str, Any]:
    """What the args (kernel first, then ops innermost first) say of the collective."""
    out: dict[str, Any] = {}
    for e in chain:
        a = e.get("args") or {}
        name = e.get("name", "")
        is_op = e.get("cat") not in ("kernel", "Kernel")
        if "kind" not in out and isinstance(a.get("Collective name"), str):
            out["kind"] = type_of(a["Collective name"])
        if "kind" not in out and is_op and name.startswith(("nccl:", "gloo:")):
            out["kind"] = type_of(name.split(":", 1)[1])
        if "pg" not in out and a.get("Process Group Name") is not None:
            out["pg"] = str(a["Process Group Name"])
        # c10d::send(tensors, group, dstRank, tag), recv_(..., srcRank, tag): a group rank
        concrete = a.get("Concrete Inputs")
        side = {"c10d::send": "dst", "c10d::recv_": "src"}.get(name)
        peer = _int(concrete[2]) if isinstance(concrete, list) and len(concrete) > 2 else None
        if "peer" not in out and side and peer is not None and peer >= 0:
            out["peer"] = (side, peer)
        for key, arg in (("dst", "Dst Rank"), ("src", "Src Rank")):
            if key not in out and _int(a.get(arg)) is not None:
                out[key] = _int(a.get(arg))
        seq = _int(a.get("Seq", a.get("seq")))
        if "seq" not in out and seq is not None:
            out["seq"] = seq
        if "gs" not in out and _int(a.get("Group size")):
            out["gs"] = _int(a.get("Group size"))
        dims = a.get("Input Dims", a.get("Input dims"))
        types = a.get("Input type", a.get("Input types"))
        nel = _int(a.get("In msg nelems"))
        if "bytes" not in out and nel is not None and str(a.get("dtype", "")).lower() in DTYPES:
            out["bytes"] = nel * DTYPES[str(a["dtype"]).lower()]
        if "bytes" not in out and isinstance(types, list) and types and _elements(dims):
            size = DTYPES.get(str(types[0]).lower())
            if size:
                out["bytes"] = _elements(dims) * size
        if "ratio" not in out and isinstance(dims, list) and len(dims) >= 2:
            x, y = _elements(dims[:1]), _elements(dims[1:2])
            if x and y and x != y and max(x, y) % min(x, y) == 0:
                out["ratio"] = max(x, y) // min(x, y)
    return out


def read_rank(path: Path, order: int) -> Rank:
    t = read_raw(path)
    info = t.header.get("distributedInfo") or {}
    rank = _int(info.get("rank"))
    if rank is None:
        m = re.search(r"(?:rank|worker)[-_]?(\d+)", path.name)
        rank = int(m.group(1)) if m else order
    r = Rank(rank, _int(info.get("world_size")))
    members: dict[str, list[int]] = {}
    for pg in info.get("pg_config") or []:
        if isinstance(pg, dict) and pg.get("pg_name") is not None:
            size = _int(pg.get("pg_size")) or len(pg.get("ranks") or []) or None
            if size:
                r.groups[str(pg["pg_name"])] = size
            if isinstance(pg.get("ranks"), list):
                members[str(pg["pg_name"])] = pg["ranks"]
    r.base_us = (_int(t.header.get("baseTimeNanoseconds")) or 0) / 1000.0
    xs = [e for e in t.events if e.get("ph") == "X" and "ts" in e]
    steps = [
        e
        for e in xs
        if re.fullmatch(r"ProfilerStep#\d+", e.get("name", ""))
        and e.get("cat") not in ("gpu_user_annotation",)
    ]
    ops: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for e in xs:
        if COMM_OP.match(e.get("name", "")) and e.get("cat") not in ("kernel", "Kernel"):
            ops.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    launches = {
        (e.get("args") or {}).get("correlation"): e
        for e in xs
        if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver")
    }
    for e in xs:
        name = e.get("name", "")
        if e.get("cat") in ("kernel", "Kernel") and (
            "nccl" in name.lower() or "rccl" in name.lower()
        ):
            launch = launches.get((e.get("args") or {}).get("correlation"))
            at = launch["ts"] if launch else e["ts"]
            thread = ops.get((launch.get("pid"), launch.get("tid")), []) if launch else []
            around = [o for o in thread if o["ts"] <= at <= o["ts"] + o.get("dur", 0)]
            around.sort(key=lambda o: o.get("dur", 0))
            chain = [e, *around]
        elif name.startswith("gloo:") and e.get("cat") in ("cpu_op", "user_annotation", "Operator"):
            thread = ops.get((e.get("pid"), e.get("tid")), [])
            around = [
                o for o in thread if o is not e and o["ts"] <= e["ts"] <= o["ts"] + o.get("dur", 0)
            ]
            around.sort(key=lambda o: o.get("dur", 0))
            at, chain = e["ts"], [e, *around]
        else:
            continue
        f = _facts(chain)
        kind = f.get("kind") or type_of(name) or "other"
        gs, gs_from = f.get("gs"), "args" if f.get("gs") else None
        if gs is None and kind in ("all_gather", "reduce_scatter") and f.get("ratio"):
            gs, gs_from = f["ratio"], "sizes"
        step = next((s["name"] for s in steps if s["ts"] <= at < s["ts"] + s["dur"]), None)
        start = float(e["ts"])  # onto the job's clock in `analyze`
        dst, src = _peers(f, members)
        r.insts.append(
            Inst(
                rank,
                kind,
                f.get("pg", ""),
                f.get("seq"),
                start,
                start + float(e.get("dur", 0)),
                f.get("bytes"),
                gs,
                gs_from,
                step,
                dst=dst,
                src=src,
            )  # fmt: skip
        )
    r.insts.sort(key=lambda i: i.start)
    return r


def _peers(f: dict[str, Any], members: dict[str, list[int]]) -> tuple[int | None, int | None]:
    """(dst, src) global ranks: the args' own, else a c10d op's group rank in its named
    group, or the trace's one group."""
    if "dst" in f or "src" in f:
        return f.get("dst"), f.get("src")
    if "peer" not in f:
        return None, None
    side, local = f["peer"]
    ranks = members.get(f["pg"]) if f.get("pg") else None
    if ranks is None and not f.get("pg") and len(members) == 1:
        ranks = next(iter(members.values()))
    if ranks is None or local >= len(ranks):
        return None, None
    return (ranks[local], None) if side == "dst" else (None, ranks[local])


# --- pairing -----------------------------------------------------------------------------


def _agree(kind: str, a: int | None, b: int | None) -> bool:
    return kind not in SAME_BYTES or a is None or b is None or a == b


def _align(kind: str, own: list[Inst], calls: list[list[Inst]]) -> list[int]:
    """Order-preserving alignment of `own` against `calls` (by their first end): most
    pairs, then least end difference. Per own instance, the call index or -1."""
    ends = [c[0].end for c in calls]
    n, m = len(own), len(calls)
    # score[i][j] = (pairs, -cost) of own[:i] vs calls[:j]
    score = [[(0, 0.0)] * (m + 1) for _ in range(n + 1)]
    move = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            best, how = score[i - 1][j], 1
            if score[i][j - 1] > best:
                best, how = score[i][j - 1], 2
            x, c = own[i - 1], calls[j - 1]
            d = abs(x.end - ends[j - 1])
            ok = _agree(kind, x.nbytes, c[0].nbytes) and all(y.rank != x.rank for y in c)
            if ok and (kind in ROOTED or d <= TOLERANCE_US):
                p, cost = score[i - 1][j - 1]
                cand = (p + 1, cost - d)
                if cand > best:
                    best, how = cand, 3
            score[i][j], move[i][j] = best, how
    out = [-1] * n
    i, j = n, m
    while i and j:
        if move[i][j] == 3:
            out[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif move[i][j] == 1:
            i -= 1
        else:
            j -= 1
    return out


def _by_step(kind: str, own: list[Inst], ref: list[Inst]) -> dict[int, Inst]:
    """Own position -> the reference rank's instance that is the same call: the k-th of
    the same step on both, in steps where both ran as many (bytes agreeing); none when
    those pairs' ends differ by more than TOLERANCE_US in the median (steps of the same
    name that are not the same iteration)."""
    mine: dict[str, list[int]] = {}
    theirs: dict[str, list[int]] = {}
    for xs, out in ((own, mine), (ref, theirs)):
        for i, x in enumerate(xs):
            if x.step:
                out.setdefault(x.step, []).append(i)
    pairs: dict[int, Inst] = {}
    for step, idx in mine.items():
        other = theirs.get(step, [])
        if len(other) == len(idx):
            for i, j in zip(idx, other):
                if _agree(kind, own[i].nbytes, ref[j].nbytes):
                    pairs[i] = ref[j]
    ends = [abs(own[i].end - y.end) for i, y in pairs.items()]
    return pairs if ends and statistics.median(ends) <= TOLERANCE_US else {}


def pair(ranks: list[Rank]) -> list[list[Inst]]:
    """Every call: its instances (one per rank)."""
    blocks: dict[tuple[str, str], list[Inst]] = {}
    for r in ranks:
        for x in r.insts:
            blocks.setdefault((x.pg, x.kind), []).append(x)
    calls: list[list[Inst]] = []
    for (_, kind), insts in sorted(blocks.items()):
        if all(x.seq is not None for x in insts):
            by_seq: dict[int, list[Inst]] = {}
            for x in insts:
                by_seq.setdefault(x.seq or 0, []).append(x)
            calls += list(by_seq.values())
            continue
        per_rank: dict[int, list[Inst]] = {}
        for x in insts:
            per_rank.setdefault(x.rank, []).append(x)
        order = sorted(per_rank, key=lambda r: (-len(per_rank[r]), r))
        found = [[x] for x in per_rank[order[0]]]
        for r in order[1:]:
            own = per_rank[r]
            anchored = _by_step(kind, own, per_rank[order[0]])
            home = {id(c[0]): c for c in found}  # a reference instance opens its call
            for i, y in anchored.items():
                home[id(y)].append(own[i])
            taken = {id(y) for y in anchored.values()}
            free = [c for c in found if id(c[0]) not in taken]
            rest = [x for i, x in enumerate(own) if i not in anchored]
            at = _align(kind, rest, free)
            for x, j in zip(rest, at):
                if j >= 0:
                    free[j].append(x)
            found += [[x] for x, j in zip(rest, at) if j < 0]
            found.sort(key=lambda c: c[0].end)
        calls += found
    for k, c in enumerate(calls):
        last = max(x.start for x in c)
        for x in c:
            x.call, x.matched = k, len(c) >= 2
            x.wait = min(max(last - x.start, 0.0), x.end - x.start) if x.matched else 0.0
    return calls


# --- per rank, per step, per group ---------------------------------------------------------


def _group_size(x: Inst, r: Rank, n_ranks: int) -> tuple[int, str]:
    if x.group_size:
        return x.group_size, x.gs_from or "args"
    if x.pg in r.groups:
        return r.groups[x.pg], "process_group"
    if r.world:
        return r.world, "world_size"
    return n_ranks, "ranks_found"


def rank_numbers(r: Rank, n_ranks: int) -> dict[str, Any]:
    out: dict[str, Any] = {"wait_us": 0.0, "transfer_us": 0.0, "unmatched_us": 0.0}
    out["unmatched"] = sum(1 for x in r.insts if not x.matched)
    kinds: dict[str, dict[str, Any]] = {}
    for x in r.insts:
        dur = x.end - x.start
        if not x.matched:
            out["unmatched_us"] += dur
            continue
        out["wait_us"] += x.wait
        out["transfer_us"] += dur - x.wait
        k = kinds.setdefault(
            x.kind, {"sizes": set(), "from": set(), "size": 0.0, "bus": 0.0, "t": 0.0}
        )
        n, source = _group_size(x, r, n_ranks)
        k["sizes"].add(n)
        k["from"].add(source)
        if x.nbytes is not None and x.kind in BUS:
            scale, ring = BUS[x.kind]
            size = x.nbytes * (n if x.kind == "all_gather" else 1)
            k["size"] += size
            k["bus"] += size * (scale * (n - 1) / n if ring else scale)
            k["t"] += dur - x.wait
    out["kinds"] = {
        name: {
            "group_size": next(iter(k["sizes"])) if len(k["sizes"]) == 1 else None,
            "sources": sorted(k["from"]),
            "algbw_gbps": k["size"] / k["t"] / 1e3 if k["t"] > 0 else None,
            "busbw_gbps": k["bus"] / k["t"] / 1e3 if k["t"] > 0 else None,
        }
        for name, k in kinds.items()
    }
    return out


def stragglers(ranks: list[Rank]) -> dict[str, tuple[int, float] | None]:
    """Per step held by two ranks or more: (late rank, late by µs) or None. Without a call
    of all the step's ranks, each rank's first call of the step against its other members
    (`_first_group_calls`)."""
    steps: dict[str, set[int]] = {}
    for r in ranks:
        for x in r.insts:
            if x.step:
                steps.setdefault(x.step, set()).add(r.rank)
    out: dict[str, tuple[int, float] | None] = {}
    for step, members in steps.items():
        if len(members) < 2:
            continue
        by_call: dict[int, list[Inst]] = {}
        for r in ranks:
            for x in r.insts:
                if x.step == step and x.rank in members:
                    by_call.setdefault(x.call, []).append(x)
        common = [c for c in by_call.values() if {x.rank for x in c} == members]
        if not common:
            out[step] = _first_group_calls(ranks, step, members, by_call)
            continue
        first = min(common, key=lambda c: min(x.start for x in c))
        arrival = {}
        for x in first:
            arrival[x.rank] = min(arrival.get(x.rank, x.start), x.start)
        late = max(arrival, key=lambda k: arrival[k])
        late_by = arrival[late] - statistics.median(v for k, v in arrival.items() if k != late)
        out[step] = (late, late_by) if late_by >= 1.0 else None
    return out


def _first_group_calls(
    ranks: list[Rank], step: str, members: set[int], by_call: dict[int, list[Inst]]
) -> tuple[int, float] | None:
    """No call of all the step's ranks (a job of groups): each rank's first matched call
    of the step, late by its start minus the median start of that call's other members."""
    lateness: dict[int, float] = {}
    for r in ranks:
        mine = [x for x in r.insts if x.step == step and x.matched and r.rank in members]
        if not mine:
            continue
        x = min(mine, key=lambda i: i.start)
        others = [y.start for y in by_call[x.call] if y is not x]
        lateness[r.rank] = x.start - statistics.median(others)
    if not lateness:
        return None
    late = max(lateness, key=lambda k: lateness[k])
    return (late, lateness[late]) if lateness[late] >= 1.0 else None


def slow_ranks(ranks: list[Rank], calls: list[list[Inst]]) -> list[int]:
    synced = {
        k
        for k, c in enumerate(calls)
        if len(c) >= 2 and min(x.end for x in c) >= max(x.start for x in c)
    }
    gap: dict[int, float] = {}  # id(inst) -> gap
    since: dict[int, float] = {}  # id(inst) -> the end of its rank's previous synced call
    for r in ranks:
        anchor = None
        for x in r.insts:
            if anchor is not None:
                gap[id(x)] = max(x.start - anchor, 0.0)
                since[id(x)] = anchor
            if x.call in synced:
                anchor = x.end if anchor is None else max(anchor, x.end)
    groups: dict[str, dict[str, Any]] = {}
    for c in calls:
        if len(c) < 2 or c[0].kind == "send_recv":
            continue
        c = sorted(c, key=lambda x: x.start)
        last, second = c[-1], c[-2]
        # an overlapping call (started before its previous synced call ended) waits
        # from that end on: the wait before it was that call's
        second_start = max(second.start, since.get(id(second), second.start))
        held = max(min(last.start - second_start, second.wait), 0.0)
        g = groups.setdefault(last.pg, {"held": 0.0, "total": 0.0, "blame": {}})
        if id(last) not in gap:
            continue  # the last one's own delay is unknown: the call counts nowhere
        g["held"] += held
        g["total"] += (last.end - last.start - last.wait) + sum(x.wait for x in c) / len(c)
        others = [gap[id(x)] for x in c[:-1] if id(x) in gap]
        if held <= 0:
            continue
        own = gap[id(last)] - (sum(others) / len(others) if others else 0.0)
        if own >= 0.5 * held:
            b = g["blame"].setdefault(last.rank, [0, 0.0])
            b[0] += 1
            b[1] += held
    out = set()
    for g in groups.values():
        if not g["blame"]:
            continue
        who, (times, held) = max(g["blame"].items(), key=lambda kv: kv[1][1])
        if times >= 2 and held >= 0.5 * g["held"] and held >= 0.1 * g["total"]:
            out.add(who)
    return sorted(out)


def analyze(folder: Path) -> dict[str, Any]:
    """The checker's numbers for one run folder (one trace file per rank)."""
    files = sorted(p for p in folder.iterdir() if p.name.endswith((".json", ".json.gz")))
    ranks = [read_rank(p, i) for i, p in enumerate(files)]
    # one clock: the earliest epoch base. Adding epoch microseconds (~1.8e15) to each ts
    # would round it to 0.25 µs, so only the bases' difference is added (bases in float
    # µs: exact for the whole seconds Kineto writes)
    first = min((r.base_us for r in ranks), default=0.0)
    for r in ranks:
        shift = r.base_us - first
        for x in r.insts:
            x.start, x.end = x.start + shift, x.end + shift
    calls = pair(ranks)
    return {
        "ranks": {r.rank: rank_numbers(r, len(ranks)) for r in ranks},
        "steps": stragglers(ranks),
        "slow_ranks": slow_ranks(ranks, calls),
        "links": links(ranks),
    }


def links(ranks: list[Rank]) -> dict[tuple[int, int], dict[str, Any]]:
    """Per (src, dst) global rank pair: from its sends, else (no rank recorded a send of
    it) its receives: ops, bytes (None: none known), transfer time (duration - wait)."""
    rows: dict[tuple[int, int], dict[str, list[Inst]]] = {}
    for r in ranks:
        for x in r.insts:
            if x.dst is not None:
                rows.setdefault((r.rank, x.dst), {"send": [], "recv": []})["send"].append(x)
            elif x.src is not None:
                rows.setdefault((x.src, r.rank), {"send": [], "recv": []})["recv"].append(x)
    out = {}
    for pair, sides in rows.items():
        used = sides["send"] or sides["recv"]
        sized = [x for x in used if x.nbytes is not None]
        out[pair] = {
            "ops": len(used),
            "bytes": sum(x.nbytes for x in sized) if sized else None,
            "time_us": sum(x.end - x.start - x.wait for x in used),
        }
    return out


if __name__ == "__main__":  # python -m independent.collectives RUN_DIR, from tests/
    import json

    print(json.dumps(analyze(Path(sys.argv[1])), indent=1, default=str))
