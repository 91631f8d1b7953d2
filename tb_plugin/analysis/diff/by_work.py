"""The diff across vendors: kernels paired by what they do, not by name, and modules by
path. A `Cijk_…` GEMM on an MI300X and an `sm90_xmma_gemm_…` on an H100 share no name, but
both are the taxonomy's `gemm` work launched by `aten::mm` on the same `Input Dims`.

Each side's kernels are grouped by (work class, launching op, the op's input shapes). The
groups are then paired in rounds, each on what the previous left over: the whole key
(`match` "shape"), then work and op ("op": the same op, other shapes), then work alone
("work"); what is left is on one side only (by work and op). Times are each side's
totals over the trace, as the diff's other rows. Modules (the Modules view) are paired by
their path; only paths on both sides are listed (two different models share none).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ...model.trace_model import TraceModel
from .. import modules as modules_analysis
from ..core.kernel_classes import kernel_classes
from ..core.optree import op_tree
from ..core.taxonomy import WORKS
from ..operators import shape_codes
from .numbers import compare
from .types import ModuleRatio, WorkPair, WorkSide

TOP_KERNELS = 3  # kernel names listed per side of a pair
NO_OP = ""  # kernels no op launched (graph replays, a trace without ops)


@dataclass
class _Group:
    work: str
    op: str
    shape: Any
    calls: int = 0
    total_us: float = 0.0
    kernels: dict[str, float] = field(default_factory=dict)

    def add(self, other: _Group) -> None:
        self.calls += other.calls
        self.total_us += other.total_us
        for name, us in other.kernels.items():
            self.kernels[name] = self.kernels.get(name, 0.0) + us

    def side(self) -> WorkSide:
        top = sorted(self.kernels.items(), key=lambda kv: -kv[1])[:TOP_KERNELS]
        return {
            "calls": self.calls,
            "total_us": round(self.total_us, 3),
            "kernels": [name for name, _ in top],
            "kernel_names": len(self.kernels),
        }


def work_groups(model: TraceModel) -> list[_Group]:
    """Kernels of one trace by (work, launching op, the op's input shapes)."""
    classes = kernel_classes(model)
    rows = classes.rows
    if rows.size == 0:
        return []
    ev = model.events
    tree = op_tree(model)
    node = np.full(rows.size, -1, dtype=np.int64)
    if tree.gpu.size:
        pos = np.minimum(np.searchsorted(tree.gpu, rows), tree.gpu.size - 1)
        node = np.where(tree.gpu[pos] == rows, tree.gpu_node[pos], -1)
    has_op = node >= 0
    has_op[has_op] &= ~tree.is_step[node[has_op]]
    op_rows = np.where(has_op, tree.rows[np.maximum(node, 0)], -1)
    codes, shapes = shape_codes(model, np.maximum(op_rows, 0))
    groups: dict[tuple[int, int, int], _Group] = {}
    dur = ev["dur"][rows].astype(np.float64)
    names = ev["name"][rows]
    for i in range(rows.size):
        op_code = int(ev["name"][op_rows[i]]) if has_op[i] else -1
        shape_code = int(codes[i]) if has_op[i] else -1
        key = (int(classes.work[i]), op_code, shape_code)
        group = groups.get(key)
        if group is None:
            op = model.names[op_code] if op_code >= 0 else NO_OP
            shape = shapes[shape_code] if shape_code >= 0 else None
            group = groups[key] = _Group(WORKS[key[0]], op, shape)
        kernel = model.names[int(names[i])]
        group.calls += 1
        group.total_us += float(dur[i])
        group.kernels[kernel] = group.kernels.get(kernel, 0.0) + float(dur[i])
    return list(groups.values())


def _merged(groups: list[_Group], key: Callable[[_Group], Hashable]) -> dict[Hashable, _Group]:
    out: dict[Hashable, _Group] = {}
    for g in groups:
        k = key(g)
        if k not in out:
            out[k] = _Group(g.work, g.op, g.shape)
        out[k].add(g)
    return out


def _shape_key(g: _Group) -> Hashable:
    return (g.work, g.op, json.dumps(g.shape))


ROUNDS: list[tuple[str, Callable[[_Group], Hashable]]] = [
    ("shape", _shape_key),
    ("op", lambda g: (g.work, g.op)),
    ("work", lambda g: g.work),
]


def _pair(match: str, base: _Group | None, target: _Group | None) -> WorkPair:
    some = base or target
    assert some is not None
    return {
        "work": some.work,
        "op": some.op if match != "work" else None,
        "input_shape": some.shape if match == "shape" else None,
        "match": match,  # type: ignore[typeddict-item]
        "base": base.side() if base else None,
        "target": target.side() if target else None,
        "total_us": compare(
            round(base.total_us, 3) if base else 0.0, round(target.total_us, 3) if target else 0.0
        ),
        "ratio": round(target.total_us / base.total_us, 4)
        if base and target and base.total_us > 0
        else None,
        "per_step_us": compare(None, None),  # set by pair_by_work
    }


def pair_by_work(
    base: list[_Group], target: list[_Group], steps: tuple[int, int] = (0, 0)
) -> list[WorkPair]:
    """The pairs of the rounds (module docstring), the biggest time first; `steps`: each
    side's step count, for the times per step (0: no steps, unknown)."""
    out: list[WorkPair] = []
    for match, key in ROUNDS:
        b, t = _merged(base, key), _merged(target, key)
        common = [k for k in b if k in t]
        out.extend(_pair(match, b[k], t[k]) for k in common)
        base = [g for g in base if key(g) not in t]
        target = [g for g in target if key(g) not in b]
    by_op = ROUNDS[1][1]  # what one side alone has, by work and launching op
    out.extend(_pair("base_only", g, None) for g in _merged(base, by_op).values())
    out.extend(_pair("target_only", None, g) for g in _merged(target, by_op).values())
    out.sort(key=lambda p: -max(p["total_us"]["base"] or 0.0, p["total_us"]["target"] or 0.0))
    for pair in out:
        per_step = [
            round(total / n, 3) if n and total is not None else None
            for total, n in zip((pair["total_us"]["base"], pair["total_us"]["target"]), steps)
        ]
        pair["per_step_us"] = compare(*per_step)
    return out


def module_ratios(base: TraceModel, target: TraceModel) -> list[ModuleRatio]:
    """Modules on both sides by path: device time when both ran kernels, else host time."""
    views = [modules_analysis.modules(m) for m in (base, target)]
    if not all(v["available"] for v in views):
        return []
    both_gpu = all(v["device_total_us"] > 0 for v in views)
    metric: Literal["device_total_us", "host_total_us"] = (
        "device_total_us" if both_gpu else "host_total_us"
    )
    sides = [{row["path"]: row for row in v["modules"]} for v in views]
    out: list[ModuleRatio] = []
    for path, b in sides[0].items():
        t = sides[1].get(path)
        if t is None:
            continue
        bv, tv = float(b[metric]), float(t[metric])  # type: ignore[literal-required]
        out.append(
            {
                "path": path,
                "module_type": b["module_type"],
                "depth": b["depth"],
                "metric": metric,
                "time_us": compare(bv, tv),
                "ratio": round(tv / bv, 4) if bv > 0 else None,
            }
        )
    return out
