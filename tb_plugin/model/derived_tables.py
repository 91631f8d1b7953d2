"""What the model's derived structures (`TraceModel.derived`: indexes, trees) hold, which
of them a computation asks for, and letting go of those nothing left to compute reads (a
one-shot report: `api/report`)."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Collection, Iterator
from typing import Any

import msgspec
import numpy as np

KEY_LOCKS = threading.Lock()  # guards each model's table of derived locks and keys
# The keys `derived` is asked for while `record_derived` runs (the innermost's set).
ASKED: list[set[str]] = []
# Threads whose asks are not a view's (work begun after a load, for later requests):
# recorded, they would make the record depend on what else runs (tests/table_uses.py).
_UNRECORDED = threading.local()
_POINTER_BYTES = 8


@contextlib.contextmanager
def record_derived() -> Iterator[set[str]]:
    """The keys of the derived structures asked for (built or found), by any thread and
    of any model, while the block runs: what a view reads (tests/table_uses.py)."""
    asked: set[str] = set()
    ASKED.append(asked)
    try:
        yield asked
    finally:
        ASKED.remove(asked)


def is_recording() -> bool:
    """Whether `derived` asks made in this thread now are recorded (`record_derived`)."""
    return bool(ASKED) and not getattr(_UNRECORDED, "on", False)


def unrecorded(work: Callable[..., None]) -> Callable[..., None]:
    """`work`, whose asks of derived structures no `record_derived` records (background
    work for later requests, not the view being recorded)."""

    def run_unrecorded(*args: Any) -> None:
        _UNRECORDED.on = True
        try:
            work(*args)
        finally:
            _UNRECORDED.on = False

    return run_unrecorded


def is_derived(model: Any, key: str) -> bool:
    """Whether the structure `model.derived(key, ...)` keeps is built now (never waits
    for a build under way)."""
    return model.__dict__.get(key) is not None


def forget_derived(model: Any, keep: Collection[str]) -> int:
    """Let go of `model`'s derived structures whose keys are not in `keep` (asked for
    again, they are built again, the same: each is a pure function of the model). About
    the bytes they held."""
    held = model.__dict__
    with KEY_LOCKS:
        keys = held.get("_derived_keys", [])
        held["_derived_keys"] = [key for key in keys if key in keep]
        gone = [held.pop(key) for key in keys if key not in keep]
    return sum(held_nbytes(value) for value in gone)


def held_nbytes(value: Any, depth: int = 0) -> int:
    """Arrays count their bytes, containers a pointer per item plus their items' (a few
    levels deep: an estimate for the memory budget, not an exact count)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if depth > 3:
        return 0
    if isinstance(value, dict):
        items: Any = value.values()
        count = len(value)
    elif isinstance(value, (list, tuple)):
        items, count = value, len(value)
    elif isinstance(value, msgspec.Struct):  # its fields, and what it caches (dict=True)
        items, count = (
            [*msgspec.structs.astuple(value), *getattr(value, "__dict__", {}).values()],
            0,
        )
    elif hasattr(value, "__dict__"):
        items, count = vars(value).values(), 0
    elif hasattr(value, "__slots__"):
        items = [getattr(value, n, None) for n in value.__slots__]
        count = 0
    else:
        return 0
    sample = list(itertools.islice(items, 64))
    held = sum(held_nbytes(v, depth + 1) for v in sample)
    if count > len(sample) and sample:
        held = held * count // len(sample)
    return held + count * _POINTER_BYTES
