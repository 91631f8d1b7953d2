"""Which kernels change class between two versions of the kernel taxonomy, over every trace
of the corpus.

The kernel taxonomy (`tb_plugin/data/kernel_taxonomy.json`) decides what each kernel is;
every view reads it. Before a new version is committed, this survey lists every kernel
name of every corpus trace whose class (work, matrix-core use, family) is not the same
under the base version (a git revision's table) and the checkout's, with how many
kernels carry the name and their share of their trace's kernel time, so each change can
be read and judged.

A kernel's class is what `kernel_classes` gives: its name's class, or communication when
it is launched inside a communication op and its name says neither communication nor
matrix work. Graph-capture traces hold the captured kernels' names only in the `kernel`
argument of their launch calls; those names are surveyed too, with no time.

Run it from a checkout, the corpus beside it (`../shared/corpus`):

    .venv/bin/python bench/taxonomy_survey.py                 # base: main
    .venv/bin/python bench/taxonomy_survey.py --base HEAD~1 --json changes.json

Nothing here is imported by the product.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from kinetoscope.analysis.core.devices import trace_vendor
from kinetoscope.analysis.core.kernel_classes import _launching_comm_op, kernel_classes
from kinetoscope.analysis.core.taxonomy import (
    MATRIX_YES,
    WORKS,
    Family,
    classify_with,
    families,
    parse_families,
    taxonomy_version,
)
from kinetoscope.ingest.build import build_model

REPO = Path(__file__).resolve().parents[1]
TABLE = "tb_plugin/data/kernel_taxonomy.json"
MATRIX = {1: "yes", 0: "no", -1: "unknown"}


@dataclass
class Change:
    """One kernel name whose class differs, summed over the traces that hold it."""

    before: str
    after: str
    traces: set[str] = field(default_factory=set)
    kernels: int = 0
    us: float = 0.0
    share_max: float = 0.0  # the largest share of one trace's kernel time


def class_text(work: str, matrix: int, family: str | None) -> str:
    return f"{work}/{MATRIX[matrix]} ({family or 'no rule'})"


def base_families(rev: str) -> tuple[int, tuple[Family, ...]]:
    text = subprocess.run(
        ["git", "show", f"{rev}:{TABLE}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    table = json.loads(text)
    return int(table["version"]), parse_families(table)


def trace_files(corpus: Path) -> list[Path]:
    skip = {"goldens", "derived", "tlparse"}  # answers, damaged copies, compile logs
    return sorted(
        p
        for p in corpus.rglob("*")
        if p.is_file()
        and p.name.endswith((".json", ".json.gz"))
        and not skip & set(p.relative_to(corpus).parts)
    )


def launch_arg_names(path: Path) -> set[str]:
    """Kernel names a trace holds only in its launch calls' `kernel` argument."""
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        data = json.load(f)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    return {
        e["args"]["kernel"]
        for e in events
        if isinstance(e, dict)
        and isinstance(e.get("args"), dict)
        and isinstance(e["args"].get("kernel"), str)
    }


def survey_trace(
    path: Path, rel: str, base: tuple[Family, ...], changes: dict[str, Change]
) -> tuple[str, int]:
    model = build_model(str(path))
    vendor = trace_vendor(model)
    now = kernel_classes(model)
    names = model.names_of(now.rows)
    dur = model.events["dur"][now.rows].astype(np.float64)
    total = float(dur.sum())
    comm_op = _launching_comm_op(model, now.rows) >= 0
    per_name: dict[str, tuple[str, str, int, float]] = {}
    for i, name in enumerate(names):
        old = classify_with(base, name, vendor)
        work, matrix, family = old.work, old.matrix_core, old.family
        if comm_op[i] and work != "communication" and matrix != MATRIX_YES:
            work, matrix, family = "communication", 0, "launched_by_communication_op"
        before = class_text(work, matrix, family)
        after = class_text(WORKS[int(now.work[i])], int(now.matrix[i]), now.family[i])
        _, _, count, us = per_name.get(name, (before, after, 0, 0.0))
        per_name[name] = (before, after, count + 1, us + float(dur[i]))
    for name, (before, after, count, us) in per_name.items():
        if before != after:
            change = changes.setdefault(name, Change(before, after))
            change.traces.add(rel)
            change.kernels += count
            change.us += us
            change.share_max = max(change.share_max, us / total if total > 0 else 0.0)
    seen = set(per_name)
    for name in launch_arg_names(path) - seen:
        old = classify_with(base, name, vendor)
        new = classify_with(families(), name, vendor)
        before = class_text(old.work, old.matrix_core, old.family)
        after = class_text(new.work, new.matrix_core, new.family)
        if before != after:
            changes.setdefault(name, Change(before, after)).traces.add(rel)
    return vendor, len(seen)


def print_table(changes: dict[str, Change], width: int) -> None:
    by_move: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, c in changes.items():
        by_move[(c.before.split(" (")[0], c.after.split(" (")[0])].append(name)
    print("\n| before | after | names | kernels | time (ms) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (before, after), names in sorted(by_move.items(), key=lambda kv: -len(kv[1])):
        kernels = sum(changes[n].kernels for n in names)
        ms = sum(changes[n].us for n in names) / 1000
        print(f"| {before} | {after} | {len(names)} | {kernels} | {ms:.1f} |")
    print("\n| kernel name | before | after | traces | kernels | max share of a trace |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for name, c in sorted(changes.items(), key=lambda kv: (kv[1].after, -kv[1].us)):
        short = name if len(name) <= width else name[: width - 1] + "…"
        print(
            f"| `{short}` | {c.before} | {c.after} | {len(c.traces)} | {c.kernels} "
            f"| {100 * c.share_max:.2f} % |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="git revision of the base table")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--json", type=Path, help="also write every change here")
    parser.add_argument("--width", type=int, default=90, help="kernel names cut to this")
    args = parser.parse_args()
    base_version, base = base_families(args.base)
    print(f"taxonomy v{base_version} ({args.base}) -> v{taxonomy_version()} (checkout)")
    changes: dict[str, Change] = {}
    for path in trace_files(args.corpus):
        rel = str(path.relative_to(args.corpus))
        try:
            vendor, count = survey_trace(path, rel, base, changes)
        except Exception as error:  # a survey goes on past a file the product refuses
            print(f"  {rel}: not read ({type(error).__name__}: {error})", file=sys.stderr)
            continue
        print(f"  {rel}: {vendor}, {count} kernel names", file=sys.stderr)
    print_table(changes, args.width)
    if args.json:
        rows = {n: {**vars(c), "traces": sorted(c.traces)} for n, c in changes.items()}
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
