"""Why a JSON file is not read as a trace: discovery skips plain ``*.json[.gz]`` files
whose head is not a Kineto trace (``config.json``), which leaves a user who points us at
another profiler's output with "no trace files found". These helpers say what the file is
instead, for the messages of the CLI and the notebook (and the decode error of a
torch-style name holding one)."""

from __future__ import annotations

import os

from . import storage
from .event_text import ROCPROF_MARKERS
from .formats import FORMATS
from .naming import parse_trace_name
from .sniff import read_head, sniff

NOT_KINETO = "JSON but not a Kineto trace"
_JSON_START = b"\xef\xbb\xbf \t\r\n"


def describe_json_head(head: bytes) -> str | None:
    """`NOT_KINETO`, with "(rocprof output?)" when the text names rocprof, for the first
    bytes of a JSON file that is no Kineto trace; None for a trace or text that is not
    JSON at all."""
    if sniff(head) or not head.lstrip(_JSON_START).startswith((b"{", b"[")):
        return None
    rocprof = any(marker in head for marker in ROCPROF_MARKERS)
    return NOT_KINETO + (" (rocprof output?)" if rocprof else "")


NOT_PERFETTO = "protobuf but not a Perfetto trace"


def describe_protobuf_head(head: bytes) -> str:
    """Why a ``*.pb`` / ``*.pftrace`` file that does not start with trace packets is
    not read; an XSpace (field 1 too) is what the JAX and TensorFlow profilers write."""
    if head[:1] == b"\x0a":
        return NOT_PERFETTO + " (an XSpace, *.xplane.pb, of the JAX or TensorFlow profiler?)"
    return NOT_PERFETTO


def not_a_trace_reason(path: str) -> str | None:
    """For a file with a trace format's suffix: why it is not a trace ("JSON but not a
    Kineto trace (rocprof output?)", "protobuf but not a Perfetto trace"), or None when
    it is one or cannot be read."""
    parsed = parse_trace_name(path.rsplit("/", 1)[-1])
    if parsed is None:
        return None
    try:
        head = read_head(path, parsed.gzip)
    except OSError:
        return None
    if parsed.format == "perfetto":
        return None if FORMATS["perfetto"].sniff(head) else describe_protobuf_head(head)
    return describe_json_head(head)


def skipped_json(folder: str, limit: int = 3) -> list[str]:
    """`name: reason` for up to `limit` JSON files directly in a local `folder` that are
    not traces, rocprof output first (URLs: none; their listing is the scan's)."""
    if storage.is_url(folder):
        return []
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.is_file())
    except OSError:
        return []
    found = []
    for name in names:
        reason = not_a_trace_reason(os.path.join(folder, name))
        if reason is not None:
            found.append(f"{name}: {reason}")
    found.sort(key=lambda line: "rocprof" not in line)
    return found[:limit]


def no_traces_message(target: str) -> str:
    """The error for a target that holds no trace: a file says what it is instead, a
    folder names the JSON files it skipped."""
    if storage.kind(target) == "file":
        reason = not_a_trace_reason(target)
        return (
            f"{target}: {reason}" if reason else f"{target}: not a trace file kinetoscope can read"
        )
    skipped = skipped_json(target)
    extra = f" ({'; '.join(skipped)})" if skipped else ""
    return f"{target}: no trace files found{extra}"
