"""The `trace_file` route's file: the trace a dispatch answered `Ready(file=...)` for,
opened through `ingest.storage` (inside the logdir at that moment, checked), with the name
and media type a download carries. The plugin streams the handle it is given, never the
path opened again."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import BinaryIO

from ..ingest import storage
from ..ingest.formats import FORMATS
from ..ingest.naming import parse_trace_name
from ..store.errors import LoadFailed
from ..store.trace_store import describe_error
from .resolve import NotFound, Target


@dataclass(frozen=True)
class Download:
    handle: BinaryIO
    name: str  # the file's name, fit for a header (controls made `_`)
    mimetype: str
    local: os.stat_result | None  # a local file's stat (None: an object of a store)


def open_download(target: Target) -> Download:
    """The trace file opened; NotFound (404) when it was removed since it loaded,
    LoadFailed (422) when what is there now cannot be sent (a link swapped in, a folder,
    a FIFO)."""
    span = target.span
    try:
        handle = storage.open_binary(span.path)
    except FileNotFoundError:
        raise NotFound(f"{span.file} was removed") from None
    except OSError as exc:
        raise LoadFailed(describe_error(span.path, exc)) from None
    gz = span.file.endswith(".gz")
    parsed = parse_trace_name(span.file)
    plain = FORMATS[parsed.format if parsed else "json"].mimetype
    local = None if storage.is_url(span.path) else os.fstat(handle.fileno())
    # CR, LF and other controls cannot go into a header (werkzeug refuses them).
    name = re.sub(r"[\x00-\x1f\x7f]", "_", span.file)
    return Download(handle, name, "application/gzip" if gz else plain, local)
