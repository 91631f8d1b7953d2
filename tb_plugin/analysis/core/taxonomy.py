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
from typing import Any

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, distinct
from .devices import trace_vendor
from .rules import collective_type, data_version, load

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
    return parse_families(load("kernel_taxonomy"))


def parse_families(table: dict[str, Any]) -> tuple[Family, ...]:
    """The families of a taxonomy table (the packaged one, or another version of it)."""
    return tuple(
        Family(
            id=raw["id"],
            vendors=frozenset(raw["vendors"]),
            work=raw["work"],
            matrix_core=_MATRIX_CODES[raw["matrix_core"]],
            patterns=tuple(re.compile(p, re.IGNORECASE) for p in raw["patterns"]),
            collective=raw.get("collective"),
            examples=tuple(raw.get("examples", ())),
        )
        for raw in table["families"]
    )


def taxonomy_version() -> int:
    return data_version("kernel_taxonomy")


@lru_cache(maxsize=65536)
def classify_name(name: str, vendor: str = "unknown") -> NameClass:
    """The class a kernel name alone gives, for a trace of `vendor`."""
    return classify_with(families(), name, vendor)


def classify_with(table: tuple[Family, ...], name: str, vendor: str) -> NameClass:
    """The first family of `table` (in order) that applies to `vendor` and matches `name`."""
    for family in table:
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


def name_classes(model: TraceModel) -> list[NameClass]:
    """The name-only class of every interned name a kernel carries, by name code (UNKNOWN
    for the others: op, Python-frame and runtime names outnumber kernel names and are
    never read, and each classification is a pass of regular expressions)."""
    return model.derived("_name_classes", _kernel_name_classes)


def _kernel_name_classes(model: TraceModel) -> list[NameClass]:
    vendor = trace_vendor(model)
    out = [UNKNOWN] * len(model.names)
    for code in distinct(model.events["name"][complete_rows(model, Kind.KERNEL)]).tolist():
        out[code] = classify_name(model.names[code], vendor)
    return out
