"""Per rank and collective type, and for the whole job: calls, bytes, time, sync wait,
transfer, unmatched time, bandwidth (algbw, busbw) and group size with its source (the
rules: view.py's doc)."""

from __future__ import annotations

import numpy as np

from ..core.rules import bandwidth_size_multiplier, bus_bandwidth_factor
from .matching import Instances
from .rounding import rounded as _r
from .summary import GS_SOURCES
from .types import CollectiveStats


def per_rank_kind(
    inst: Instances, parts: tuple[np.ndarray, np.ndarray], n_ranks: int, n_kinds: int
) -> dict[str, np.ndarray]:
    shape = (max(n_ranks, 1), max(n_kinds, 1))
    out = {
        k: np.zeros(shape)
        for k in (
            "calls",
            "sized",
            "bytes",
            "total",
            "wait",
            "transfer",
            "unmatched",
            "bw_size",
            "bus_size",
            "bw_time",
            "n_min",
            "n_max",
            "n_from",
        )
    }
    out["n_min"][:] = np.inf
    if inst.start.size == 0:
        return out
    where = (inst.rank, inst.kind)
    transfer, unmatched = parts
    known = (inst.nbytes >= 0) & inst.matched  # bandwidth: matched calls only
    np.add.at(out["calls"], where, 1)
    sized = inst.nbytes >= 0
    np.add.at(out["sized"], where, sized)
    np.add.at(out["bytes"], where, np.where(sized, inst.nbytes, 0))
    np.add.at(out["total"], where, np.clip(inst.end - inst.start, 0, None))
    np.add.at(out["wait"], where, inst.wait)
    np.add.at(out["transfer"], where, transfer)
    np.add.at(out["unmatched"], where, unmatched)
    size = np.zeros(inst.start.size)
    bus = np.zeros(inst.start.size)
    for k, name in enumerate(inst.kind_names):
        for n in np.unique(inst.group_size[inst.kind == k]).tolist():
            sel = known & (inst.kind == k) & (inst.group_size == n)
            factor = bus_bandwidth_factor(name, int(n))
            if factor is None:
                continue
            size[sel] = inst.nbytes[sel] * bandwidth_size_multiplier(name, int(n))
            bus[sel] = size[sel] * factor
    np.minimum.at(out["n_min"], where, inst.group_size)
    np.maximum.at(out["n_max"], where, inst.group_size)
    np.maximum.at(out["n_from"], where, inst.gs_from)  # the least direct source
    has_formula = size > 0
    np.add.at(out["bw_size"], where, size)
    np.add.at(out["bus_size"], where, bus)
    np.add.at(out["bw_time"], where, np.where(has_formula, transfer, 0))
    return out


def over_ranks(key: str, value: np.ndarray) -> np.ndarray:
    """A per (rank, type) table for the whole job: sums, but the group sizes' bounds."""
    if key == "n_min":
        return value.min(axis=0, keepdims=True)
    if key in ("n_max", "n_from"):
        return value.max(axis=0, keepdims=True)
    return value.sum(axis=0, keepdims=True)


def stats_rows(
    table: dict[str, np.ndarray], row: int, kind_names: list[str]
) -> list[CollectiveStats]:
    out: list[CollectiveStats] = []
    for k, name in enumerate(kind_names):
        calls = int(table["calls"][row, k])
        if calls == 0:
            continue
        time = table["bw_time"][row, k]
        n_min, n_max = table["n_min"][row, k], table["n_max"][row, k]
        source = int(table["n_from"][row, k])
        out.append(
            {
                "name": name,
                "calls": calls,
                "bytes": int(table["bytes"][row, k]) if table["sized"][row, k] else None,
                "total_us": _r(table["total"][row, k]),
                "avg_us": _r(table["total"][row, k] / calls),
                "sync_wait_us": _r(table["wait"][row, k]),
                "transfer_us": _r(table["transfer"][row, k]),
                "unmatched_us": _r(table["unmatched"][row, k]),
                # bytes per microsecond / 1e3 = GB/s
                "algbw_gbps": _r(table["bw_size"][row, k] / time / 1e3) if time > 0 else None,
                "busbw_gbps": _r(table["bus_size"][row, k] / time / 1e3) if time > 0 else None,
                "group_size": int(n_min) if n_min == n_max and n_min >= 1 else None,
                "group_size_source": GS_SOURCES[source] if source > 0 else None,
            }
        )
    out.sort(key=lambda c: -c["total_us"])
    return out
