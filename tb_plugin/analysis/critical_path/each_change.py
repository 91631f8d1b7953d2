"""A rank summarised under each of several changes (`run_gains.py`: a run's top gains
beyond FULL_GRAPH_RANKS): its graph is built once for all of them, and the summaries are
kept as the first in full and, of each other, only the fields that differ from it (the
change, what it matched, the local paths' own times: ~3 KB of a bench rank's ~24 KB), so a
run's summaries under a dozen changes hold about what two or three changes' would."""

from __future__ import annotations

import hashlib
import os
from functools import partial
from typing import Any

import msgspec

from ...model.trace_model import TraceModel
from ..core.rank_batches import made_sharing_tables
from ..core.summary_cache import SummaryCache
from ..core.taxonomy import taxonomy_version
from ..distributed.rank_job import Tier
from ..distributed.summary_pack import PackFormat, SummaryPack
from .changes import change_of, names_an_op
from .parts import part_of
from .path_summary import VERSION, PathSummary
from .reduce import reduce_part, reduce_shaped
from .reduce_again import reduced_again
from .summaries import CHANGE_KEYS, SUMMARY_DIR, summaries_view

_FIELDS = msgspec.structs.fields(PathSummary)

# A summary's fields that differ from another's: every field of PathSummary, unset
# where it is the same.
SummaryDelta = msgspec.defstruct(
    "SummaryDelta",
    [(f.name, f.type | msgspec.UnsetType, msgspec.UNSET) for f in _FIELDS],
    module=__name__,
    gc=False,
)


class ChangedSummaries(msgspec.Struct, gc=False):
    """A rank's summary under each of several changes, in their order: the first whole,
    the others as what differs from it (`summary(k)` makes the whole one)."""

    version: str
    first: PathSummary
    others: list[SummaryDelta]  # type: ignore[valid-type]

    @classmethod
    def of(cls, summaries: list[PathSummary]) -> ChangedSummaries:
        first = summaries[0]
        others = [_delta(first, s) for s in summaries[1:]]
        return cls(VERSION, first, others)

    def __len__(self) -> int:
        return 1 + len(self.others)

    def differs(self, k: int) -> set[str]:
        """The fields of the summary under the k-th change that differ from the first's."""
        if k == 0:
            return set()
        delta = self.others[k - 1]
        return {f.name for f in _FIELDS if getattr(delta, f.name) is not msgspec.UNSET}

    def summary(self, k: int) -> PathSummary:
        """The whole summary under the k-th change: the first's fields it shares are the
        same objects (no copy)."""
        if k == 0:
            return self.first
        delta = self.others[k - 1]
        changed = {f.name: getattr(delta, f.name) for f in _FIELDS}
        own = {name: value for name, value in changed.items() if value is not msgspec.UNSET}
        return msgspec.structs.replace(self.first, **own)


def _delta(first: PathSummary, other: PathSummary) -> Any:
    differ = {
        f.name: getattr(other, f.name)
        for f in _FIELDS
        if getattr(other, f.name) != getattr(first, f.name)
    }
    return SummaryDelta(**differ)


_DECODER = msgspec.json.Decoder(ChangedSummaries)  # built at import, before threads share it
_PACKING = PackFormat(ChangedSummaries)


def summarize_each(changes: tuple[dict[str, Any], ...], model: TraceModel) -> ChangedSummaries:
    """The rank's summary under each change of `changes` (routes' decoded queries),
    without segments: each is what `summaries.summarize` makes of that change alone."""
    part = part_of(model, "", "pinned")
    first, shape = reduce_shaped(part, change_of(changes[0]), False)
    summaries = [first]
    for query in changes[1:]:
        change = change_of(query)
        again = reduced_again(part, first, shape, change) if change is not None else None
        summaries.append(again or reduce_part(part, change, False, finished=True))
    return ChangedSummaries.of(summaries)


def _view(changes: tuple[dict[str, Any], ...]) -> str:
    """The view of a list of changes: one per list, in its order."""
    labels = "\0".join(summaries_view(c) for c in changes)
    digest = hashlib.sha1(labels.encode("utf-8")).hexdigest()[:16]
    return f"critical-path-v{VERSION}t{taxonomy_version()}-each-{digest}"


def _cache(changes: tuple[dict[str, Any], ...], cache_dir: str) -> SummaryCache[Any]:
    return SummaryCache(cache_dir, SUMMARY_DIR, _view(changes), _DECODER, VERSION)


def _pack(changes: tuple[dict[str, Any], ...], cache_dir: str, run: str) -> SummaryPack[Any]:
    return SummaryPack(os.path.join(cache_dir, SUMMARY_DIR), run, _view(changes), _PACKING)


def each_change_tier(changes: list[dict[str, Any]]) -> Tier[ChangedSummaries]:
    """The rank summaries of a run under each of `changes`, a rank read once for all."""
    kept = tuple({k: v for k, v in c.items() if k in CHANGE_KEYS} for c in changes)
    return Tier(
        partial(summarize_each, kept),
        partial(_cache, kept),
        partial(_pack, kept),
        partial(
            made_sharing_tables,
            partial(summarize_each, kept),
            op_owners=any(names_an_op(c) for c in kept),
        ),
    )
