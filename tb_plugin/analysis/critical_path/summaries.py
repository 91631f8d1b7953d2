"""Rank summaries in a run's join (`run.py`): the per-rank tiers that make them where each
rank is read (the Distributed view's pools) and keep them in the run's pack, one view
per change (or per list of changes: `each_change.py`); and a rank of the join read from its
summary (`ReducedPart`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import msgspec
import numpy as np

from ...model.trace_model import TraceModel
from ..core.rank_batches import made_sharing_tables
from ..core.summary_cache import SummaryCache
from ..core.taxonomy import taxonomy_version
from ..distributed.rank_job import Tier
from ..distributed.summary_pack import PackFormat, SummaryPack
from .anchors import StepAnchors, no_device_nodes
from .changes import Change, Scaled, change_of, names_an_op
from .expand import PartPieces
from .graph import Graph
from .parts import part_of
from .path_summary import VERSION, PathSummary
from .reduce import reduce_part


@dataclass
class ReducedPart:
    """A rank of a join from its summary (`joint.JoinPart`): its change already applied.
    `with_segments`: the same summary with its local paths' segments, made again (from the
    rank's trace) the first time the path runs through this rank; None: the summary has
    them, or nothing can make them."""

    summary: PathSummary
    worker: str
    rank: int | None
    with_segments: Callable[[], PathSummary] | None = None

    def __post_init__(self) -> None:
        s = self.summary
        self.table = s.collectives
        nodes = s.column("collective_nodes")
        self.collective_nodes = np.where(nodes >= 0, nodes, -1)
        self.anchors = StepAnchors(
            names=s.step_names,
            numbers=s.step_numbers,
            start_event=s.column("step_start_event").astype(np.int64),
            start_offset=s.column("step_start_offset").astype(np.float64),
            end_event=s.column("step_end_event").astype(np.int64),
            end_offset=s.column("step_end_offset").astype(np.float64),
            first_shift=s.first_shift,
            device_nodes=no_device_nodes(len(s.step_names)),
        )
        kind = s.column("node_kind").astype(np.int8)
        self._graph = Graph(
            names=s.names,
            kind=kind,
            name=s.column("node_name").astype(np.int64),
            rank=np.zeros(kind.size, np.int64),
            lane=s.column("node_lane").astype(np.int64),
            lanes=s.lanes,
            row=np.full(kind.size, -1, np.int64),
            start=s.column("node_start").astype(np.float64),
            end=s.column("node_end").astype(np.float64),
            scalable=np.zeros(kind.size, bool),
            edge_dst=s.column("edge_dst").astype(np.int64),
            edge_src=s.column("edge_src").astype(np.int64),
            edge_role=s.column("edge_role").astype(np.int8),
            edge_lag=s.column("edge_lag").astype(np.float64),
        )

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def origin_us(self) -> float:
        return self.summary.time_origin_us

    @property
    def assumptions(self) -> list[str]:
        return self.summary.assumptions

    def factors(self, change: Change | None) -> Scaled:
        """The change is in the summary: its transfers' factors, and what it matched."""
        n = len(self._graph)
        transfer = self.summary.column("node_transfer").astype(np.float64)
        return Scaled(np.ones(n), transfer, np.zeros(0), self.summary.matched)

    def own_times(self, factors: Scaled) -> np.ndarray:
        """The local paths' lengths under the change the summary was made for."""
        return self.summary.column("node_own").astype(np.float64)

    def piece_table(self, factors: Scaled) -> PartPieces:
        """The segments it keeps of its local paths (made again the first time a path
        runs through it), each a piece of its PATH node."""
        s = self.summary
        if not s.seg_node and self.with_segments is not None:
            s = self.summary = self.with_segments()
        return PartPieces(
            s.column("seg_node").astype(np.int64),
            s.column("seg_dur").astype(np.float64),
            s.column("seg_kind").astype(np.int64),
            s.column("seg_name").astype(np.int64),
            s.names,
            s.column("seg_lane").astype(np.int64),
            1,
        )


# --- the per-rank tier ------------------------------------------------------------------

SUMMARY_DIR = ".critical_path"  # under the cache root, beside the Distributed view's
_DECODER = msgspec.json.Decoder(PathSummary)  # built at import, before threads share it
_PACKING = PackFormat(PathSummary)


def summarize(params: dict[str, Any], model: TraceModel, segments: bool = False) -> PathSummary:
    """A rank's summary under the change `params` names (a route's decoded query; none:
    as recorded), without its segments unless asked (`ReducedPart.with_segments`)."""
    return reduce_part(part_of(model, "", "pinned"), change_of(params), segments)


def summaries_view(params: dict[str, Any]) -> str:
    """The summaries' view under the change `params` names: one per change."""
    change = change_of(params)
    label = change.label() if change is not None else "recorded"
    digest = hashlib.sha1(label.encode("utf-8")).hexdigest()[:16]
    return f"critical-path-v{VERSION}t{taxonomy_version()}-{digest}"


def summary_cache(params: dict[str, Any], cache_dir: str) -> SummaryCache[PathSummary]:
    """Where a change's rank summaries are kept one by one."""
    return SummaryCache(cache_dir, SUMMARY_DIR, summaries_view(params), _DECODER, VERSION)


def summary_pack(params: dict[str, Any], cache_dir: str, run: str) -> SummaryPack[PathSummary]:
    """Where a change's rank summaries of run `run` are kept: one pack per run and change."""
    return SummaryPack(os.path.join(cache_dir, SUMMARY_DIR), run, summaries_view(params), _PACKING)


def tier(params: dict[str, Any]) -> Tier[PathSummary]:
    """The rank summaries of a run under the change `params` names."""
    change: dict[str, Any] = {k: v for k, v in params.items() if k in CHANGE_KEYS}
    return Tier(
        partial(summarize, change),
        partial(summary_cache, change),
        partial(summary_pack, change),
        partial(made_sharing_tables, partial(summarize, change), op_owners=names_an_op(change)),
    )


CHANGE_KEYS = ("kernel", "op", "collective", "rank_all", "rank", "factor")
