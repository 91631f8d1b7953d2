"""Per communication group: the slow link and the rank the others wait for; p2p links.

Each call of a collective (one match of `matching.py`: a process group, a type and a
sequence number, seen on two or more ranks) has, on each member rank, an arrival (its
start), a wait (until the last member arrived) and a transfer (the rest). Per call:

- transfer = the last arriver's duration (it waited for no one): the link's time;
- sync = the members' mean wait;
- held = the last arrival minus the one before it, at most what that one waited (its
  wait, clipped to its duration): what the call waited for that one rank alone. Where
  the one before started while its previous synchronizing collective was still running
  (asynchronous calls overlap: DDP's buckets on gloo's worker threads), from that
  collective's end: the wait before it was that collective's, counted there;
- the last arriver's own delay = its gap (arrival minus the end of its previous
  synchronizing collective, `_gaps`) minus the other members' mean gap. A rank that
  arrives late because its previous collective (in another group) ended late has no own
  delay: the lateness came with it, and the group is not said to wait for it; a rank late
  at a broadcast whose root did not wait for it keeps its lateness (that broadcast did
  not synchronize anyone) and is blamed where the others do wait. The call *waits for*
  the last arriver when its own delay is at least half of `held`.

Per group (process group name): `waits_for` is the rank held responsible for at least
half of all the group's held time, in two calls or more, when that time is at least
WAITS_SHARE of the group's collective time (transfer + sync). Both totals are of the calls
whose last arriver's own delay is known: at a rank's first synchronizing call of its
trace it is not (its profiler may have opened later, and starting it held that rank for
a second in a recorded 2-rank job), and that call's held time, whoever caused it, would
otherwise outweigh the rank's delays in every later step. `transfer_ratio` compares
the group's median transfer per (type, bytes, members) class with the median of that
class over all groups having it (needs MIN_PEERS groups): the weighted ratio; at least
SLOW_LINK_RATIO is `slow_link`. Verdict: `slow_link`, else `waits_for_rank` when a rank
is waited for, else `ok`. Send/recv instances are not calls: they give `links`, one row
per (source, destination) global rank pair from the sender's side (`Dst Rank`), or the
receiver's (`Src Rank`) for pairs no sender recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.rules import bandwidth_size_multiplier, bus_bandwidth_factor
from .matching import Instances
from .types import GroupCall, GroupRow, LinkRow, ProcessGroupView

P2P = "send_recv"
SLOW_LINK_RATIO = 1.5
MIN_PEERS = 3
WAITS_SHARE = 0.1
OWN_DELAY_SHARE = 0.5
ROLE_WORDS = {
    "DP": ("dp", "data", "ddp", "fsdp", "replicate", "shard"),
    "TP": ("tp", "tensor"),
    "PP": ("pp", "pipe", "pipeline"),
    "EP": ("ep", "expert", "moe"),
    "CP": ("cp", "context"),
}


def _r(x: float) -> float:
    return round(float(x), 3)


class Calls:
    """One entry per call (sorted by match): its group, last arriver and measures."""

    def __init__(self, inst: Instances, ranks: np.ndarray) -> None:
        p2p = _kind_id(inst, P2P)
        sel = np.flatnonzero(inst.matched & (inst.kind != p2p))
        order = sel[np.lexsort((inst.start[sel], inst.match[sel]))]
        n = order.size
        firsts = np.flatnonzero(np.r_[True, np.diff(inst.match[order]) != 0]) if n else order
        lasts = np.r_[firsts[1:], n] - 1 if n else order
        count = np.diff(np.r_[firsts, n]) if n else order
        last, second = order[lasts], order[np.maximum(lasts - 1, 0)]
        anchor = _anchors(inst)
        gap = np.clip(inst.start - anchor, 0, None)  # NaN where no anchor
        known = np.isfinite(gap[order])
        gap_sum = np.add.reduceat(np.where(known, gap[order], 0.0), firsts) if n else gap[:0]
        gap_n = np.add.reduceat(known.astype(np.int64), firsts) if n else count
        last_gap = gap[last]
        others = np.maximum(gap_n - np.isfinite(last_gap), 1)
        other_gap = (gap_sum - np.where(np.isfinite(last_gap), last_gap, 0.0)) / others
        self.pg = inst.pg[last]
        self.kind = inst.kind[last]
        self.members = count
        self.nbytes = inst.nbytes[last]
        self.group_size = inst.group_size[last]
        self.transfer = inst.transfer[last]
        self.sync = (np.add.reduceat(inst.wait[order], firsts) / count) if n else count * 0.0
        # what the others actually waited for it: the one before it waited at most its
        # own duration (a broadcast's root may leave before the receivers come)
        second_start = np.fmax(inst.start[second], anchor[second])  # NaN anchor: its start
        self.held = np.clip(np.minimum(inst.start[last] - second_start, inst.wait[second]), 0, None)
        own = last_gap - other_gap
        self.decided = np.isfinite(own)  # the last arriver's own delay is known
        self.blamed = self.decided & (self.held > 0) & (own >= OWN_DELAY_SHARE * self.held)
        self.last_rank = ranks[inst.rank[last]]
        self.last_index = inst.rank[last]
        self.seq = inst.seq[last]
        self.first_start = inst.start[order[firsts]] if n else inst.start[:0]
        self.end = np.maximum.reduceat(inst.end[order], firsts) if n else inst.end[:0]


def _kind_id(inst: Instances, name: str) -> int:
    return inst.kind_names.index(name) if name in inst.kind_names else -1


def _anchors(inst: Instances) -> np.ndarray:
    """Per instance, the latest end of the rank's earlier instances whose call
    synchronized its members (NaN when there is none): its start minus it, clipped at 0,
    is the time the rank spent outside synchronizing collectives before it (its gap). A
    call synchronizes when every member was still in it when the last one arrived; a
    broadcast whose root left before the others came did not, and a rank late there
    still carries that lateness."""
    out = np.full(inst.start.size, np.nan)
    if inst.start.size == 0:
        return out
    first_end = np.full(int(inst.match.max()) + 1, np.inf)
    np.minimum.at(first_end, inst.match, inst.end)
    last_start = np.full(first_end.size, -np.inf)
    np.maximum.at(last_start, inst.match, inst.start)
    synced = inst.matched & (first_end[inst.match] >= last_start[inst.match])
    anchor = np.where(synced, inst.end, -np.inf)
    order = np.lexsort((inst.start, inst.rank))
    bounds = np.flatnonzero(np.diff(inst.rank[order])) + 1
    for idx in np.split(order, bounds):
        if idx.size > 1:
            prev_end = np.maximum.accumulate(anchor[idx])[:-1]
            known = np.isfinite(prev_end)
            out[idx[1:][known]] = prev_end[known]
    return out


def _transfer_ratio(calls: Calls, n_groups: int) -> np.ndarray:
    """Per group, its transfer time against groups of the same class (see the module doc);
    NaN where no class has MIN_PEERS groups."""
    expected = np.zeros(n_groups)
    actual = np.zeros(n_groups)
    if calls.kind.size == 0:
        return np.full(n_groups, np.nan)
    cls = np.stack([calls.kind, calls.nbytes.astype(np.int64), calls.members], axis=1)
    class_id = np.unique(cls, axis=0, return_inverse=True)[1].ravel()
    for c in np.unique(class_id).tolist():
        mine = np.flatnonzero(class_id == c)
        pgs = calls.pg[mine]
        groups = np.unique(pgs)
        if groups.size < MIN_PEERS:
            continue
        medians = np.array([np.median(calls.transfer[mine[pgs == g]]) for g in groups])
        typical = float(np.median(medians))
        weight = np.array([(pgs == g).sum() for g in groups])
        expected[groups] += typical * weight
        actual[groups] += medians * weight
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, actual / expected, np.nan)


def _bus_bytes(inst: Instances, calls: Calls) -> np.ndarray:
    """Per call, NCCL's bus bytes (size x multiplier x factor; 0 when unknown)."""
    out = np.zeros(calls.kind.size)
    n = np.where(calls.group_size >= 1, calls.group_size, calls.members)
    for k, name in enumerate(inst.kind_names):
        for size in np.unique(n[calls.kind == k]).tolist():
            factor = bus_bandwidth_factor(name, int(size))
            if factor is None:
                continue
            sel = (calls.kind == k) & (n == size) & (calls.nbytes >= 0)
            out[sel] = calls.nbytes[sel] * bandwidth_size_multiplier(name, int(size)) * factor
    return out


def _waits_for(calls: Calls, g: int) -> tuple[int | None, float]:
    """The rank group `g` waits for again and again, and the time it held the group."""
    mine = (calls.pg == g) & calls.blamed
    if mine.sum() < 2:
        return None, 0.0
    decided = (calls.pg == g) & calls.decided
    held_all = float(calls.held[decided].sum())
    total_us = float(calls.transfer[decided].sum() + calls.sync[decided].sum())
    who, inverse = np.unique(calls.last_rank[mine], return_inverse=True)
    held = np.bincount(inverse.ravel(), weights=calls.held[mine])
    times = np.bincount(inverse.ravel())
    best = int(np.argmax(held))
    if times[best] < 2 or held[best] < 0.5 * held_all or held[best] < WAITS_SHARE * total_us:
        return None, 0.0
    return int(who[best]), float(held[best])


def _call(
    inst: Instances, calls: Calls, g: int, waits_for: int | None, slow_link: bool
) -> GroupCall | None:
    """The group's call that shows its verdict best (GroupCall), on the last arriver's
    clock (the waited-for rank's, for `waits_for_rank`)."""
    mine = np.flatnonzero(calls.pg == g)
    if mine.size == 0:
        return None
    if waits_for is not None and not slow_link:
        held = np.where(
            calls.blamed[mine] & (calls.last_rank[mine] == waits_for), calls.held[mine], -1
        )
        i = mine[int(np.argmax(held))]
    elif slow_link:
        i = mine[int(np.argmax(calls.transfer[mine]))]
    else:
        i = mine[int(np.argmax(calls.end[mine] - calls.first_start[mine]))]
    offset = float(inst.offset[calls.last_index[i]])
    seq = int(calls.seq[i])
    return {
        "type": inst.kind_names[int(calls.kind[i])],
        "seq": seq if seq >= 0 else None,
        "rank": int(calls.last_rank[i]),
        "start_us": _r(calls.first_start[i] - offset),
        "end_us": _r(calls.end[i] - offset),
    }


def role_of(name: str, description: str | None, kinds: set[str], ranks: list[int] | None) -> str:
    """DP / TP / PP / EP / CP from the group's description, else what it runs; "world" for
    the default group; "" when nothing shows it (and for "", the collectives whose group the
    trace does not name, which may mix several groups)."""
    if not name:
        return ""
    words = "".join(c if c.isalnum() else " " for c in (description or "").lower()).split()
    for role, names in ROLE_WORDS.items():
        if any(w in names or any(w.startswith(n + "_") for n in names) for w in words):
            return role
    if description == "default_pg" or name == "0":
        return "world"
    if kinds == {P2P}:
        return "PP"
    if "all_to_all" in kinds:
        return "EP"
    if ranks and len(ranks) >= 2:
        stride = np.diff(np.asarray(ranks))
        return "TP" if (stride == 1).all() else "DP" if (stride > 1).all() else ""
    return ""


def group_rows(
    inst: Instances, ranks: list[int], groups: dict[str, ProcessGroupView]
) -> list[GroupRow]:
    """One row per process group with collectives (module doc)."""
    rank_of = np.asarray(ranks, dtype=np.int64)
    calls = Calls(inst, rank_of)
    n_groups = len(inst.pg_names)
    ratio = _transfer_ratio(calls, n_groups)
    bus = _bus_bytes(inst, calls)
    p2p = _kind_id(inst, P2P)
    rows: list[GroupRow] = []
    for g, name in enumerate(inst.pg_names):
        mine = calls.pg == g
        in_pg = inst.pg == g
        if not in_pg.any():
            continue
        config = groups.get(name)
        members = config["ranks"] if config and config["ranks"] else None
        seen = sorted(set(rank_of[np.unique(inst.rank[in_pg])].tolist()))
        transfer, sync = float(calls.transfer[mine].sum()), float(calls.sync[mine].sum())
        waits_for, held = _waits_for(calls, g)
        timed = mine & (bus > 0)
        bus_time = float(calls.transfer[timed].sum())
        slow_link = bool(np.isfinite(ratio[g]) and ratio[g] >= SLOW_LINK_RATIO)
        kinds = {inst.kind_names[k] for k in np.unique(inst.kind[in_pg]).tolist()}
        description = config["description"] if config else None
        rows.append(
            {
                "name": name,
                "description": description,
                "role": role_of(name, description, kinds, members or seen),
                "ranks": members if members is not None else seen,
                "ranks_found": len(seen),
                "collectives": int(mine.sum()),
                "p2p_ops": int((in_pg & (inst.kind == p2p)).sum()),
                "transfer_us": _r(transfer),
                "sync_us": _r(sync),
                "busbw_gbps": _r(bus[timed].sum() / bus_time / 1e3) if bus_time > 0 else None,
                "transfer_ratio": _r(ratio[g]) if np.isfinite(ratio[g]) else None,
                "waits_for": waits_for,
                "waits_for_us": _r(held),
                "verdict": "slow_link"
                if slow_link
                else "waits_for_rank"
                if waits_for is not None
                else "ok",
                "call": _call(inst, calls, g, waits_for, slow_link),
            }
        )
    return rows


@dataclass
class Cluster:
    groups: list[GroupRow]
    slow_ranks: list[int]  # the ranks some group waits for
    slow_groups: list[str]  # the groups with a slow link
    links: list[LinkRow]


def cluster_view(inst: Instances, ranks: list[int], groups: dict[str, ProcessGroupView]) -> Cluster:
    rows = sorted(group_rows(inst, ranks, groups), key=lambda g: natural_order(g["name"]))
    return Cluster(
        groups=rows,
        slow_ranks=sorted({g["waits_for"] for g in rows if g["waits_for"] is not None}),
        slow_groups=[g["name"] for g in rows if g["verdict"] == "slow_link"],
        links=links(inst, ranks),
    )


def natural_order(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 62, name)


def links(inst: Instances, ranks: list[int]) -> list[LinkRow]:
    """Send/recv pairs as (source, destination) global rank rows (module doc)."""
    rank_of = np.asarray(ranks, dtype=np.int64)
    own = rank_of[inst.rank] if inst.rank.size else inst.rank
    send = inst.dst >= 0
    recv = (inst.src >= 0) & ~send
    src = np.concatenate([own[send], inst.src[recv]])
    dst = np.concatenate([inst.dst[send], own[recv]])
    side = np.r_[np.zeros(send.sum(), dtype=np.int64), np.ones(recv.sum(), dtype=np.int64)]
    rows = np.concatenate([np.flatnonzero(send), np.flatnonzero(recv)])
    if rows.size == 0:
        return []
    key = np.stack([src, dst], axis=1)
    pairs, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    sent_pairs = np.zeros(len(pairs), dtype=bool)
    sent_pairs[inverse[side == 0]] = True
    use = (side == 0) | ~sent_pairs[inverse]
    nbytes = inst.nbytes[rows]
    sized = use & (nbytes >= 0)
    total_bytes = np.bincount(inverse[sized], weights=nbytes[sized], minlength=len(pairs))
    any_size = np.bincount(inverse[sized], minlength=len(pairs)) > 0
    time = np.bincount(inverse[use], weights=inst.transfer[rows[use]], minlength=len(pairs))
    sized_time = np.bincount(
        inverse[sized], weights=inst.transfer[rows[sized]], minlength=len(pairs)
    )
    ops = np.bincount(inverse[use], minlength=len(pairs))
    out: list[LinkRow] = []
    for i, (s, d) in enumerate(pairs.tolist()):
        out.append(
            {
                "src": int(s),
                "dst": int(d),
                "ops": int(ops[i]),
                "bytes": int(total_bytes[i]) if any_size[i] else None,
                "time_us": _r(time[i]),
                "gbps": _r(total_bytes[i] / sized_time[i] / 1e3)
                if any_size[i] and sized_time[i] > 0
                else None,
            }
        )
    return out
