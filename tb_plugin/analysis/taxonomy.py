"""What each GPU kernel is: communication (and which collective), matrix-core GEMM/attention/
convolution, or other work; and whether it runs on matrix cores: yes, no or unknown.

The rules are data (`data/kernel_taxonomy.json`, versioned): families of kernel-name
patterns per vendor, plus the host ops inside which every launched kernel is communication.
A kernel is classified from its name (one regex pass per distinct name, not per event) and
from its launching op chain (the op tree's owner of the kernel and that owner's ancestors):
a kernel that no name rule calls communication or matrix work, launched inside
`record_param_comms`, `_c10d_functional::*`, `c10d::*`, `symm_mem::*`, `vllm::all_reduce`
..., is communication. Every view (Overview, Kernel, Operator, Distributed, recommendations)
reads `kernel_classes`, so the pages agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from ..model.categories import Kind
from ..model.trace_model import TraceModel
from .common import complete_rows, name_flags
from .devices import trace_vendor
from .rules import collective_type, load
from .tree_arrays import inherit_missing

WORKS = ("other", "communication", "gemm", "attention", "conv")
MATRIX_YES, MATRIX_NO, MATRIX_UNKNOWN = 1, 0, -1
_MATRIX_CODES = {"yes": MATRIX_YES, "no": MATRIX_NO, "unknown": MATRIX_UNKNOWN}


@dataclass(frozen=True)
class Family:
    id: str
    vendors: frozenset[str]
    work: str
    matrix_core: int
    patterns: tuple[re.Pattern[str], ...]
    collective: str | None
    examples: tuple[str, ...]

    def applies_to(self, vendor: str) -> bool:
        return vendor == "unknown" or "any" in self.vendors or vendor in self.vendors

    def matches(self, name: str) -> bool:
        return any(p.search(name) for p in self.patterns)


@dataclass(frozen=True)
class NameClass:
    family: str | None  # None: no rule knows this name
    work: str
    matrix_core: int  # MATRIX_YES, MATRIX_NO or MATRIX_UNKNOWN
    collective: str | None


UNKNOWN = NameClass(None, "other", MATRIX_UNKNOWN, None)


@cache
def families() -> tuple[Family, ...]:
    out = []
    for raw in load("kernel_taxonomy")["families"]:
        out.append(
            Family(
                id=raw["id"],
                vendors=frozenset(raw["vendors"]),
                work=raw["work"],
                matrix_core=_MATRIX_CODES[raw["matrix_core"]],
                patterns=tuple(re.compile(p, re.IGNORECASE) for p in raw["patterns"]),
                collective=raw.get("collective"),
                examples=tuple(raw.get("examples", ())),
            )
        )
    return tuple(out)


def taxonomy_version() -> int:
    return int(load("kernel_taxonomy")["version"])


@lru_cache(maxsize=65536)
def classify_name(name: str, vendor: str = "unknown") -> NameClass:
    """The class a kernel name alone gives, for a trace of `vendor`."""
    for family in families():
        if family.applies_to(vendor) and family.matches(name):
            collective = family.collective
            if family.work == "communication" and collective is None:
                collective = collective_type(name)
            return NameClass(family.id, family.work, family.matrix_core, collective)
    return UNKNOWN


def is_comm_op(name: str) -> bool:
    """A host op inside which every launched kernel is communication."""
    return name.startswith(_comm_op_prefixes())


def is_host_transfer_op(name: str) -> bool:
    """Ops of CPU collective backends, whose own duration is the transfer."""
    return name.startswith(_host_transfer_prefixes())


@cache
def _comm_op_prefixes() -> tuple[str, ...]:
    return tuple(load("kernel_taxonomy")["communication_ops"]["prefixes"])


@cache
def _host_transfer_prefixes() -> tuple[str, ...]:
    return tuple(load("kernel_taxonomy")["communication_ops"]["host_transfer_prefixes"])


@dataclass
class KernelClasses:
    """Per kernel row (`rows`, ascending): work code (index into WORKS), matrix-core use,
    the collective type (None when not communication or unknown) and the family id."""

    rows: np.ndarray
    work: np.ndarray  # int8, index into WORKS
    matrix: np.ndarray  # int8: 1 yes, 0 no, -1 unknown
    collective: list[str | None]
    family: list[str | None]
    via_op: np.ndarray  # bool: communication because of the launching op chain

    @property
    def comm(self) -> np.ndarray:
        return self.work == WORKS.index("communication")


def kernel_classes(model: TraceModel) -> KernelClasses:
    return model.derived("_kernel_classes", _classify_kernels)


def name_classes(model: TraceModel) -> list[NameClass]:
    """The name-only class of every interned name a kernel carries, by name code (UNKNOWN
    for the others: op, Python-frame and runtime names outnumber kernel names and are
    never read, and each classification is a pass of regular expressions)."""
    return model.derived("_name_classes", _kernel_name_classes)


def _kernel_name_classes(model: TraceModel) -> list[NameClass]:
    vendor = trace_vendor(model)
    out = [UNKNOWN] * len(model.names)
    for code in np.unique(model.events["name"][complete_rows(model, Kind.KERNEL)]).tolist():
        out[code] = classify_name(model.names[code], vendor)
    return out


def _classify_kernels(model: TraceModel) -> KernelClasses:
    rows = complete_rows(model, Kind.KERNEL)
    by_name = name_classes(model)
    codes = model.events["name"][rows]
    work_of_name = np.array([WORKS.index(c.work) for c in by_name], dtype=np.int8)
    matrix_of_name = np.array([c.matrix_core for c in by_name], dtype=np.int8)
    work = work_of_name[codes] if rows.size else np.zeros(0, np.int8)
    matrix = matrix_of_name[codes] if rows.size else np.zeros(0, np.int8)
    # Per name, then per kernel by one object-array lookup (not a Python pass per kernel).
    collective: list[str | None] = _per_name(by_name, "collective")[codes].tolist()
    family: list[str | None] = _per_name(by_name, "family")[codes].tolist()
    comm_code = WORKS.index("communication")
    op_names = _launching_comm_op(model, rows)
    # The op chain says communication only where the name does not say matrix work.
    via_op = (op_names >= 0) & (work != comm_code) & (matrix != MATRIX_YES)
    for i in np.flatnonzero(via_op).tolist():
        op_name = model.names[int(op_names[i])]
        collective[i] = collective_type(op_name)
        family[i] = "launched_by_communication_op"
    work[via_op] = comm_code
    matrix[via_op] = MATRIX_NO
    return KernelClasses(rows, work, matrix, collective, family, via_op)


def _per_name(by_name: list[NameClass], field: str) -> np.ndarray:
    out = np.empty(len(by_name), dtype=object)
    out[:] = [getattr(c, field) for c in by_name]
    return out


def _launching_comm_op(model: TraceModel, kernels: np.ndarray) -> np.ndarray:
    """For each kernel row, the name code of the innermost communication op in its
    launching op chain, or -1."""
    from .optree import op_tree  # the op tree reads name classes: import late

    out = np.full(kernels.size, -1, dtype=np.int64)
    tree = op_tree(model)
    if kernels.size == 0 or len(tree) == 0 or tree.gpu.size == 0:
        return out
    names = model.events["name"][tree.rows]
    own = name_flags(model, is_comm_op)[names]
    inside = inherit_missing(tree.parent, tree.levels, np.where(own, names, -1).astype(np.int64))
    pos = np.searchsorted(tree.gpu, kernels)
    pos = np.minimum(pos, tree.gpu.size - 1)
    found = tree.gpu[pos] == kernels
    node = np.where(found, tree.gpu_node[pos], -1)
    has = node >= 0
    out[has] = inside[node[has]]
    return out


def matrix_share(dur: np.ndarray, matrix: np.ndarray) -> tuple[float, float, float, float | None]:
    """(yes time, no time, unknown time, yes share of the known time or None)."""
    yes = float(dur[matrix == MATRIX_YES].sum())
    no = float(dur[matrix == MATRIX_NO].sum())
    unknown = float(dur[matrix == MATRIX_UNKNOWN].sum())
    known = yes + no
    return yes, no, unknown, (yes / known if known > 0 else None)
