"""The trace formats kinetoscope reads: a registry of plug-ins, each detected by its file
names and first bytes and decoded into the same columnar model.

A format names its suffixes (for names not in torch's `*.pt.trace.json[.gz]` style, which
are always JSON), a sniff of its first decompressed bytes (discovery lists a plain-named
file only when its sniff says yes), and its decoder, imported only when a file of it is
read. JSON is the fast path (`build.build_model` decodes it itself); a new format is one
entry here and a decoder with `decode_perfetto`'s signature.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import msgspec


class TraceFormat(msgspec.Struct, frozen=True):
    name: str
    suffixes: tuple[str, ...]  # longest first where one ends another (".json.gz", ".json")
    sniff: Callable[[bytes], bool]
    decoder: str  # "module:function" under kinetoscope.ingest; "" for the JSON fast path
    mimetype: str  # of the file itself, for its download
    # Suffixes that only this format uses: such a file is listed whatever its first bytes
    # (a damaged or odd one shows up as a worker with its error, never vanishes).
    own_suffixes: tuple[str, ...] = ()

    def claims(self, name: str) -> bool:
        """Whether the name alone says a file is of this format."""
        return name.endswith(self.own_suffixes) if self.own_suffixes else False

    def decode(self) -> Callable[..., Any]:
        module, function = self.decoder.split(":")
        return getattr(importlib.import_module(f"kinetoscope.ingest.{module}"), function)  # type: ignore[no-any-return]


def sniff_json(head: bytes) -> bool:
    if b'"traceEvents"' in head:
        return True
    # Before 2021 traces were a bare JSON array of events.
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[") and b'"ph"' in head


def sniff_perfetto(head: bytes) -> bool:
    from .perfetto.sniff import looks_like_packets

    return looks_like_packets(head)


JSON = TraceFormat("json", (".json.gz", ".json"), sniff_json, "", "application/json")
PERFETTO = TraceFormat(
    "perfetto",
    (".pftrace.gz", ".pftrace", ".perfetto-trace", ".pb.gz", ".pb"),
    sniff_perfetto,
    "perfetto.read:decode_perfetto",
    "application/octet-stream",
    (".pftrace.gz", ".pftrace", ".perfetto-trace"),
)
FORMATS: dict[str, TraceFormat] = {f.name: f for f in (JSON, PERFETTO)}


def plain_format(name: str) -> tuple[TraceFormat, str] | None:
    """The format a plain file name's suffix says, and that suffix (the longest)."""
    for fmt in FORMATS.values():
        for suffix in fmt.suffixes:
            if name.endswith(suffix):
                return fmt, suffix
    return None
