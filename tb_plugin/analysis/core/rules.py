"""Name rules kept as data (tb_plugin/data/*.json), loaded once. What a kernel is lives in
`taxonomy.py` (data/kernel_taxonomy.json)."""

from __future__ import annotations

import json
import os
import re
from functools import cache, lru_cache
from typing import Any

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
MODULE_PREFIX = "nn.Module: "  # a Python frame of an nn.Module's forward (Modules view)


# The package's data folder, beside its modules (the package is installed as files, its
# compiled parts with it): read by path, not through `importlib.resources`, whose import
# (its readers, zipfile) a report paid for only to find this folder.
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "data")


@cache
def load(name: str) -> dict[str, Any]:
    with open(os.path.join(DATA_DIR, f"{name}.json"), encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def data_version(name: str) -> int:
    """The version of the data file `name` (it keys the cached views that read it)."""
    return int(load(name)["version"])


def is_module_name(name: str) -> bool:
    return name.startswith(MODULE_PREFIX)


def is_step_name(name: str) -> bool:
    return STEP_NAME.match(name) is not None


def is_dataloader_range(name: str) -> bool:
    return (name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__")) or (
        name.startswith("enumerate(DataPipe)#")
    )


def is_tensor_core_eligible_op(op_name: str) -> bool:
    return op_name in _eligible_ops()


@lru_cache(maxsize=1)
def _eligible_ops() -> frozenset[str]:
    return frozenset(load("matrix_core_ops")["eligible_op_names"])


def collective_type(name: str) -> str | None:
    """Canonical collective of a kernel/op name or a `Collective name` arg (`all_reduce`,
    `all_gather`, ...), or None when the name is not a collective."""
    return _collective_type(name)


@lru_cache(maxsize=4096)
def _collective_type(name: str) -> str | None:
    squashed = name.lower().replace("_", "").replace(" ", "").replace("-", "")
    for canonical, substrings in load("communication")["collective_types"]:
        if any(s in squashed for s in substrings):
            return str(canonical)
    return None


def dtype_size(dtype: str) -> int | None:
    """Bytes per element of a dtype name as trace args spell it (`Float`, `c10::Half`)."""
    size = load("communication")["dtype_bytes"].get(dtype.strip().lower())
    return int(size) if size is not None else None


def bus_bandwidth_factor(collective: str, ranks: int) -> float | None:
    """NCCL's bus-bandwidth factor of a collective over `ranks` ranks (None: no formula)."""
    rule = load("communication")["bus_bandwidth"].get(collective)
    if rule is None or ranks < 1:
        return None
    scale = float(rule["scale"])
    return scale * (ranks - 1) / ranks if rule["ring"] else scale


def bandwidth_size_multiplier(collective: str, ranks: int) -> int:
    """The size NCCL's bandwidth formulas use, in units of the input bytes."""
    rule = load("communication")["bus_bandwidth"].get(collective) or {}
    return max(ranks, 1) if rule.get("size") == "output" else 1


def same_bytes_on_every_rank(collective: str) -> bool:
    """Whether one call of this type moves the same number of bytes on every rank
    (communication.json `same_bytes`)."""
    return collective in load("communication")["same_bytes"]


def is_rooted_collective(collective: str) -> bool:
    """Whether the root of a call of this type may finish before the others arrive
    (communication.json `rooted`)."""
    return collective in load("communication")["rooted"]
