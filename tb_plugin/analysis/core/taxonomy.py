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
from functools import cache, lru_cache
from typing import Any

import msgspec

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, distinct
from .devices import trace_vendor
from .rules import collective_type, data_version, load

WORKS = ("other", "communication", "gemm", "attention", "conv")
MATRIX_YES, MATRIX_NO, MATRIX_UNKNOWN = 1, 0, -1
_MATRIX_CODES = {"yes": MATRIX_YES, "no": MATRIX_NO, "unknown": MATRIX_UNKNOWN}


class NamePattern:
    """One pattern of a family, searched in a kernel name case-insensitively.

    Case-insensitive search cannot skip ahead to a literal, and kernel names run to a
    thousand characters of template arguments: most of a cold report's classification
    time. Where it is the same search, an ASCII name is lowercased once and searched by
    the pattern compiled case-sensitively (3x fewer instructions): for a pattern whose
    letters are all lowercase and whose escapes name no character, lowercasing an ASCII
    name changes nothing a case-insensitive search could see. Any other pattern (an
    uppercase letter, `(?-i:...)`, `\\x41`), or a name with other characters, is searched
    as written, case-insensitively. A lowercase literal (most patterns) is a substring
    of the lowered name: nothing compiled (the table's compiling was 4-5 ms of every
    cold report's ~0.14 s floor), and found faster than by a search."""

    __slots__ = ("text", "_literal", "_lower", "_any_case")

    def __init__(self, text: str) -> None:
        self.text = text
        self._literal = text if _LOWER_LITERAL.fullmatch(text) else None
        self._lower = re.compile(text) if self._literal is None and _foldable(text) else None
        self._any_case: re.Pattern[str] | None = None  # compiled when first needed

    def __eq__(self, other: object) -> bool:  # as compiled patterns compare: by text
        return isinstance(other, NamePattern) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"NamePattern({self.text!r})"

    def search(self, name: str, lowered: str | None) -> bool:
        """Whether it occurs in `name`; `lowered`: `name.lower()` for an ASCII name."""
        if lowered is not None:
            if self._literal is not None:
                return self._literal in lowered
            if self._lower is not None:
                return self._lower.search(lowered) is not None
        if self._any_case is None:
            self._any_case = re.compile(self.text, re.IGNORECASE)
        return self._any_case.search(name) is not None


# A pattern of only characters that stand for themselves, none of them a capital.
_LOWER_LITERAL = re.compile(r"[a-z0-9_:]+")


# What may make case matter: a capital anywhere, an escape other than the classes `\d`,
# `\w`, `\s`, the anchor `\b` and escaped punctuation (`\x4b` is a capital), a flag turned
# off (`(?-i:...)`). Such a pattern is searched as written.
_UNFOLDABLE = re.compile(r"[A-Z]|\\[^dDwWsSbBAZ\W_]|\(\?[a-zA-Z]*-")


# A character class's body, and a range in it (`x-y`, either end possibly escaped).
_CLASS = re.compile(r"\[\^?((?:\\.|[^\]\\])*)\]")
_RANGE = re.compile(r"(\\?.)-(\\?[^\]])")


def _foldable(text: str) -> bool:
    """Whether searching a lowercased ASCII name case-sensitively with `text` finds what
    searching the name case-insensitively does (see `NamePattern`). A class's range other
    than lowercase letters or digits may hold capitals without naming one (`[!-_]` holds
    `A`-`Z`, so it takes `a` case-insensitively but not when written lowercase)."""
    plain = text.replace("\\\\", "")
    if not text.isascii() or _UNFOLDABLE.search(plain) is not None:
        return False
    for body in _CLASS.findall(plain):
        for low, high in _RANGE.findall(body):
            if not any(a <= low <= high <= b for a, b in (("a", "z"), ("0", "9"))):
                return False
    return True


def lowered_name(name: str) -> str | None:
    """What `NamePattern.search` is given beside `name`."""
    return name.lower() if name.isascii() else None


class Family(msgspec.Struct, frozen=True):
    id: str
    vendors: frozenset[str]
    work: str
    matrix_core: int
    patterns: tuple[NamePattern, ...]
    collective: str | None
    examples: tuple[str, ...]

    def applies_to(self, vendor: str) -> bool:
        return vendor == "unknown" or "any" in self.vendors or vendor in self.vendors

    def matches(self, name: str, lowered: str | None = None) -> bool:
        """Whether a pattern occurs in `name` (`lowered`: its `lowered_name`, if known)."""
        if lowered is None:
            lowered = lowered_name(name)
        return any(p.search(name, lowered) for p in self.patterns)


class NameClass(msgspec.Struct, frozen=True):
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
            patterns=tuple(NamePattern(p) for p in raw["patterns"]),
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
    lowered = lowered_name(name)
    for family in table:
        if family.applies_to(vendor) and family.matches(name, lowered):
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
