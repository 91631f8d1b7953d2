"""Event kinds: one small enum every view shares, and the category names that map to it.

Trace writers renamed categories over the years (`Operator` → `cpu_op`, `Runtime` →
`cuda_runtime`, ...); views never look at category strings, only at these kinds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class Kind(IntEnum):
    OTHER = 0
    CPU_OP = 1
    USER_ANNOTATION = 2
    GPU_USER_ANNOTATION = 3
    KERNEL = 4
    MEMCPY = 5
    MEMSET = 6
    RUNTIME = 7
    DRIVER = 8
    PYTHON = 9
    MEMORY = 10
    FLOW = 11
    COUNTER = 12
    TRACE_SPAN = 13
    SYNC = 14
    INSTANT = 15


# Lower-cased category → kind. Categories not listed are OTHER.
CATEGORY_KINDS: dict[str, Kind] = {
    "cpu_op": Kind.CPU_OP,
    "operator": Kind.CPU_OP,
    "python": Kind.CPU_OP,  # 2021 traces: `Python` ranges counted as CPU ops by the old plugin
    "user_annotation": Kind.USER_ANNOTATION,
    "gpu_user_annotation": Kind.GPU_USER_ANNOTATION,
    "kernel": Kind.KERNEL,
    "mtia_ccp_events": Kind.KERNEL,
    "gpu_memcpy": Kind.MEMCPY,
    "memcpy": Kind.MEMCPY,
    "gpu_memset": Kind.MEMSET,
    "memset": Kind.MEMSET,
    "cuda_runtime": Kind.RUNTIME,
    "runtime": Kind.RUNTIME,
    "mtia_runtime": Kind.RUNTIME,
    "xpu_runtime": Kind.RUNTIME,
    "privateuse1_runtime": Kind.RUNTIME,
    "glow_runtime": Kind.RUNTIME,
    "cuda_driver": Kind.DRIVER,
    # XPU's driver calls share their runtime call's correlation id; the launch is the
    # runtime call (analysis/core/common.py prefers it), as only it starts the ac2g flow.
    "xpu_driver": Kind.DRIVER,
    "privateuse1_driver": Kind.DRIVER,
    "python_function": Kind.PYTHON,
    "trace": Kind.TRACE_SPAN,
    "cuda_sync": Kind.SYNC,
    "ac2g": Kind.FLOW,
    "async": Kind.FLOW,
    "async_cpu_to_gpu": Kind.FLOW,
    "async_gpu": Kind.FLOW,
    "fwdbwd": Kind.FLOW,
}

# Categories Kineto writes (libkineto `ActivityType.h`, 2026) that no view reads: drawn on
# the Trace page, counted nowhere else, and named in health (`unread_categories`).
KNOWN_UNREAD_CATEGORIES = frozenset(
    {
        "overhead",  # the profiler's own overhead spans
        "cuda_event",  # CUDA event record / query activities (CUDA 13)
        "cuda_profiler_range",
        "collective_comm",
        "cpu_instant_event",  # instants other than memory events
        "external_correlation",
        "mtia_insight",
        "mtia_counters",
        "hpu_op",
        "xpu_scope_profiler",
        "xpu_sync",
    }
)

GPU_ACTIVITY_KINDS = (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)
LAUNCH_KINDS = (Kind.RUNTIME, Kind.DRIVER)
HOST_RANGE_KINDS = (Kind.CPU_OP, Kind.USER_ANNOTATION)


class Phase(IntEnum):
    """Chrome trace `ph` values that matter, as small codes."""

    COMPLETE = 0  # X
    INSTANT = 1  # i, I
    FLOW_START = 2  # s
    FLOW_END = 3  # f
    FLOW_STEP = 4  # t
    COUNTER = 5  # C
    BEGIN = 6  # B
    END = 7  # E
    OTHER = 8


PHASE_CODES: dict[str, Phase] = {
    "X": Phase.COMPLETE,
    "i": Phase.INSTANT,
    "I": Phase.INSTANT,
    "s": Phase.FLOW_START,
    "f": Phase.FLOW_END,
    "t": Phase.FLOW_STEP,
    "C": Phase.COUNTER,
    "B": Phase.BEGIN,
    "E": Phase.END,
}


MEMORY_EVENT_NAME = "[memory]"  # an instant event of this name is a memory event


def kind_of(category: str, phase: Phase, name: str) -> Kind:
    """The kind of an event; phase and name refine what the category says."""
    if phase == Phase.INSTANT:
        return Kind.MEMORY if name == MEMORY_EVENT_NAME else Kind.INSTANT
    if phase in (Phase.FLOW_START, Phase.FLOW_END, Phase.FLOW_STEP):
        return Kind.FLOW
    if phase == Phase.COUNTER:
        return Kind.COUNTER
    return CATEGORY_KINDS.get(category.lower(), Kind.OTHER)


# c10::DeviceType numbers (memory events' `Device Type`) → label prefix; CUDA and HIP
# (AMD) are both "GPU".
DEVICE_PREFIXES = {
    1: "GPU",
    6: "GPU",
    9: "XLA",
    12: "XPU",
    13: "MPS",
    15: "HPU",
    19: "MTIA",
}
GPU_TYPES = (1, 6)
# c10::DeviceType numbers of the other accelerators → their kind (analysis/core/device_kinds.py)
ACCELERATOR_TYPE_KINDS = {12: "xpu", 15: "hpu", 19: "mtia", 20: "privateuse1"}


def kind_mask(kind: np.ndarray, kinds: Sequence[int]) -> np.ndarray:
    """Whether each event's kind (the model's u1 column) is one of `kinds`: for a few
    kinds, one comparison per kind (a pass over bytes each); for more, one gather through
    a 256-entry table (np.isin sorts or builds its table per call; the gather casts every
    kind to an index first: ~1 ms per 0.9M rows, against ~0.04 ms a comparison)."""
    import numpy as np  # here: the views' endpoints import this module, and not numpy

    wanted = sorted({int(k) for k in kinds})
    if len(wanted) <= _COMPARED_KINDS:
        mask = np.zeros(kind.shape, dtype=bool)
        for k in wanted:
            mask |= kind == k
        return mask
    table = np.zeros(256, dtype=bool)
    table[wanted] = True
    return table[kind]


_COMPARED_KINDS = 4  # up to this many kinds compared one by one, more through the table


def memory_names(names: Sequence[object]) -> np.ndarray | None:
    """Per name of a table, whether an instant event of it is a memory event (`kind_of`);
    None where no name is (looked for first: most chunks have no memory events)."""
    import numpy as np  # here: as `kind_mask`

    if MEMORY_EVENT_NAME not in names:
        return None
    return np.array([v == MEMORY_EVENT_NAME for v in names], dtype=bool)


def complete_mask(events: Mapping[str, np.ndarray], kinds: Sequence[int]) -> np.ndarray:
    """Whether each row of a model's `events` is a duration (`X`) event of one of `kinds`
    (made in place: no second bool column beside the mask)."""
    mask = kind_mask(events["kind"], kinds)
    mask &= events["ph"] == Phase.COMPLETE
    return mask
