"""The rank of a trace file, by one rule for every page.

A file's rank is what its header states (`distributedInfo.rank`), else what its names
state (worker name, else file name). Across the files of one job the ranks must differ:
when every header states a distinct rank those win; else when every name does, the names
win; else each file takes its header's, else its name's rank, and if numbers still repeat
(or some file states none) the files are numbered in worker order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ingest.values import lenient_int

HEADER, FILE_NAME, ORDER = "distributedInfo", "file_name", "order"
REPEATED_RANKS = (
    "rank numbers repeat across files (distributedInfo / file names); "
    "ranks are numbered in worker order"
)


def header_rank(header: dict[str, Any]) -> int | None:
    """The rank the trace's header states (`distributedInfo.rank`), if any."""
    info = header.get("distributedInfo")
    return lenient_int(info.get("rank")) if isinstance(info, dict) else None


def assign_ranks(
    stated: Sequence[tuple[int | None, int | None]],
) -> tuple[list[int], list[str], list[str]]:
    """Ranks of the files of one job from what each states, `(header rank, name rank)`,
    in worker order: (ranks, where each came from, warnings)."""
    for source, position in ((HEADER, 0), (FILE_NAME, 1)):
        values = [s[position] for s in stated]
        if all(v is not None for v in values) and len(set(values)) == len(values):
            return [int(v) for v in values if v is not None], [source] * len(values), []
    ranks: list[int] = []
    sources: list[str] = []
    for position, (from_header, from_name) in enumerate(stated):
        if from_header is not None:
            ranks.append(from_header)
            sources.append(HEADER)
        elif from_name is not None:
            ranks.append(from_name)
            sources.append(FILE_NAME)
        else:
            ranks.append(position)
            sources.append(ORDER)
    if len(set(ranks)) != len(ranks):
        return list(range(len(stated))), [ORDER] * len(stated), [REPEATED_RANKS]
    return ranks, sources, []
