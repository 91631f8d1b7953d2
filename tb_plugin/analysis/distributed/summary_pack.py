"""A run's rank summaries of one tier in one file of the cache: the pack of (run folder,
span) and the tier's view.

Read back whole in one go, it is what makes a warm view of thousands of ranks fast: one
file instead of one per rank (2,048 opens, checks and JSON decodes), written once by the
job instead of once per rank by the workers (two folders and a file made per rank).

Its entries are keyed by each file's state (`store.cache.cache_key`: path, size, mtime,
parser version), so a file that changed, or a new rank, is summarised again alone; the
entries of files no longer in the run are dropped when the pack is written again. Each
process group is kept once, not once per rank that describes it (every rank lists the
world group's 2,048 ranks): the summaries read back share them. A tier's summaries
(the Distributed view's, the critical path's per change) say how they pack
(`PackFormat`) and name their pack by their view. MessagePack, not JSON: the
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
from typing import Any, Generic, TypeVar

import msgspec

from ...ingest.snapshot import collector_paused
from ...store.cache_check import open_view, seal_view

log = logging.getLogger(__name__)

PACKS = "runs"  # under the summaries' folder
S = TypeVar("S")
G = TypeVar("G")


class _Entry(msgspec.Struct, Generic[S], array_like=True, gc=False):
    key: str
    summary: S  # its shared field empty: `groups` indexes the pack's
    groups: list[int]


class _Pack(msgspec.Struct, Generic[S, G], gc=False):
    view: str  # the summaries' version (their tier's view)
    groups: list[G]
    entries: list[_Entry[S]]


_ENCODER = msgspec.msgpack.Encoder()


class PackFormat(Generic[S]):
    """How a tier's summaries (of type `kind`) are packed: `shared`, a list field whose
    items (of type `item`) many ranks' summaries hold alike, each kept once (a rank
    summary's process groups: every rank lists the world group). Built at import, before
    threads share its decoder (see model.decoders.decoders_for)."""

    def __init__(self, kind: type[S], shared: str | None = None, item: Any = Any) -> None:
        self.shared = shared
        self.decoder = msgspec.msgpack.Decoder(_Pack[kind, item])  # type: ignore[valid-type]


class SummaryPack(Generic[S]):
    """The pack of run `name` (its folder and span) under `folder` (the summaries'), of
    the summaries of version `view` packed as `packing` says."""

    def __init__(self, folder: str, name: str, view: str, packing: PackFormat[S]) -> None:
        digest = hashlib.sha256(f"{name}\0{view}".encode("utf-8", "surrogateescape"))
        self.path = Path(folder) / PACKS / f"{digest.hexdigest()[:32]}.msgpack"
        self.view = view
        self.packing = packing

    def read(self) -> dict[str, S]:
        """Every summary of the pack by its file's key; empty when there is none."""
        try:
            data = open_view(self.path.read_bytes())
        except OSError:
            return {}
        if data is None:
            return {}
        try:
            with collector_paused():  # plain data, thousands of lists: nothing to collect
                pack = self.packing.decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return {}
        if pack.view != self.view:
            return {}
        shared = self.packing.shared
        out = {}
        for entry in pack.entries:
            if shared is not None:
                setattr(entry.summary, shared, [pack.groups[i] for i in entry.groups])
            out[entry.key] = entry.summary
        return out

    def write(self, summaries: dict[str, S]) -> None:
        """Keep `summaries` (by file key) as the pack, in place of what it held."""
        shared = self.packing.shared
        groups: list[Any] = []
        index: dict[bytes, int] = {}
        entries = []
        for key, summary in summaries.items():
            own = []
            if shared is not None:
                for item in getattr(summary, shared):
                    known = index.setdefault(_ENCODER.encode(item), len(groups))
                    if known == len(groups):
                        groups.append(item)
                    own.append(known)
                summary = msgspec.structs.replace(summary, **{shared: []})  # type: ignore[type-var]
            entries.append(_Entry(key, summary, own))
        data = seal_view(_ENCODER.encode(_Pack(self.view, groups, entries)))
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("kinetoscope: cannot keep the run's rank summaries: %s", exc)
            tmp.unlink(missing_ok=True)
