"""Name rules kept as data (tb_plugin/data/*.json), loaded once."""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from importlib import resources
from typing import Any

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")


@cache
def load(name: str) -> dict[str, Any]:
    text = resources.files("kinetoscope").joinpath("data", f"{name}.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def is_dataloader_range(name: str) -> bool:
    return (name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__")) or (
        name.startswith("enumerate(DataPipe)#")
    )


def is_comm_kernel(name: str) -> bool:
    low = name.lower()
    return any(s in low for s in load("communication")["kernel_name_substrings"])


def is_comm_op(name: str) -> bool:
    return name.startswith(tuple(load("communication")["launching_op_prefixes"]))


def is_host_transfer_op(name: str) -> bool:
    """Ops of CPU collective backends, whose own duration is the transfer."""
    return name.startswith(tuple(load("communication")["host_transfer_op_prefixes"]))


def uses_tensor_cores(kernel_name: str) -> bool:
    low = kernel_name.lower()
    return any(s in low for s in load("tensor_cores")["kernel_name_substrings"])


def is_tensor_core_eligible_op(op_name: str) -> bool:
    return op_name in _eligible_ops()


@lru_cache(maxsize=1)
def _eligible_ops() -> frozenset[str]:
    return frozenset(load("tensor_cores")["eligible_op_names"])
