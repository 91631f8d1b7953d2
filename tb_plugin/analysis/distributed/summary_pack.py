"""A run's rank summaries in one file of the cache: the pack of (run folder, span).

Read back whole in one go, it is what makes a warm view of thousands of ranks fast: one
file instead of one per rank (2,048 opens, checks and JSON decodes), written once by the
job instead of once per rank by the workers (two folders and a file made per rank).

Its entries are keyed by each file's state (`store.cache.cache_key`: path, size, mtime,
parser version), so a file that changed, or a new rank, is summarised again alone; the
entries of files no longer in the run are dropped when the pack is written again. Each
process group is kept once, not once per rank that describes it (every rank lists the
world group's 2,048 ranks): the summaries read back share them. MessagePack, not JSON: the
collective columns stay bytes, and decoding is several times faster. A pack that does
not decode, or of another summary version, counts as empty; it is written whole under a
temporary name, then renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path

import msgspec

from ...ingest.snapshot import collector_paused
from ...store.cache_check import open_view, seal_view
from .summary import ProcessGroup, RankSummary

log = logging.getLogger(__name__)

PACKS = "runs"  # under the summaries' folder


class _Entry(msgspec.Struct, array_like=True, gc=False):
    key: str
    summary: RankSummary  # its process_groups empty: `groups` indexes the pack's
    groups: list[int]


class _Pack(msgspec.Struct, gc=False):
    view: str  # the summaries' version (rank_summaries.SUMMARY_VIEW)
    groups: list[ProcessGroup]
    entries: list[_Entry]


_DECODER = msgspec.msgpack.Decoder(_Pack)  # built at import, before threads share it
_ENCODER = msgspec.msgpack.Encoder()


class SummaryPack:
    """The pack of run `name` (its folder and span) under `folder` (the summaries')."""

    def __init__(self, folder: str, name: str, view: str) -> None:
        digest = hashlib.sha256(f"{name}\0{view}".encode("utf-8", "surrogateescape"))
        self.path = Path(folder) / PACKS / f"{digest.hexdigest()[:32]}.msgpack"
        self.view = view

    def read(self) -> dict[str, RankSummary]:
        """Every summary of the pack by its file's key; empty when there is none."""
        try:
            data = open_view(self.path.read_bytes())
        except OSError:
            return {}
        if data is None:
            return {}
        try:
            with collector_paused():  # plain data, thousands of lists: nothing to collect
                pack = _DECODER.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return {}
        if pack.view != self.view:
            return {}
        out = {}
        for entry in pack.entries:
            entry.summary.process_groups = [pack.groups[i] for i in entry.groups]
            out[entry.key] = entry.summary
        return out

    def write(self, summaries: dict[str, RankSummary]) -> None:
        """Keep `summaries` (by file key) as the pack, in place of what it held."""
        groups: list[ProcessGroup] = []
        index: dict[bytes, int] = {}
        entries = []
        for key, summary in summaries.items():
            own = []
            for pg in summary.process_groups:
                known = index.setdefault(_ENCODER.encode(pg), len(groups))
                if known == len(groups):
                    groups.append(pg)
                own.append(known)
            bare = msgspec.structs.replace(summary, process_groups=[])
            entries.append(_Entry(key, bare, own))
        data = seal_view(_ENCODER.encode(_Pack(self.view, groups, entries)))
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("kinetoscope: cannot keep the run's rank summaries: %s", exc)
            tmp.unlink(missing_ok=True)
