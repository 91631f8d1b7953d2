"""Whether a `*.json[.gz]` file not named like torch's traces is a Kineto trace: its first
64 KiB (decompressed) are read once per file state."""

from __future__ import annotations

import os
import threading
import zlib

from . import storage
from .formats import FORMATS, sniff_json
from .naming import TraceName, parse_trace_name

SNIFF_BYTES = 64 * 1024
# A gzip member of JSON compresses ~10x; this bounds the raw read for odd files.
_SNIFF_RAW_LIMIT = 4 * SNIFF_BYTES
_SNIFF_CACHE_MAX = 100_000
_sniff_cache: dict[tuple[str, int, int], bool] = {}
_sniff_lock = threading.Lock()


def read_head(path: str, gz: bool) -> bytes:
    """Up to SNIFF_BYTES of content; for gzip whatever decompresses before a cut."""
    with storage.open_binary(path) as f:
        if not gz:
            return f.read(SNIFF_BYTES)
        # zlib directly rather than gzip.open: a cut stream still yields its prefix.
        inflater = zlib.decompressobj(wbits=31)
        out = b""
        raw_read = 0
        while len(out) < SNIFF_BYTES and raw_read < _SNIFF_RAW_LIMIT:
            chunk = f.read(16 * 1024)
            if not chunk:
                break
            raw_read += len(chunk)
            try:
                out += inflater.decompress(chunk, SNIFF_BYTES - len(out))
            except zlib.error:
                break
            if inflater.eof:
                break
        return out


def sniff(head: bytes) -> bool:
    """Whether the first bytes are a JSON Kineto trace's."""
    return sniff_json(head)


def looks_like_kineto_trace(path: str) -> bool:
    """Whether discovery lists this file as a trace.

    Torch-style names (``*.pt.trace.json[.gz]``) are always true without reading, so an
    empty or broken one shows up as a broken worker instead of vanishing. Plain names
    are sniffed by the format their suffix names (`formats.FORMATS`): a ``*.json[.gz]``
    file's first 64 KiB (decompressed) must hold ``"traceEvents"`` or be a bare array
    with ``"ph"`` keys; a ``*.pb[.gz]`` file's must start with Perfetto trace packets.
    A suffix only one format uses (``*.pftrace``) is listed without a sniff.
    """
    parsed = parse_trace_name(os.path.basename(path))
    if parsed is None:
        return False
    if parsed.torch_style:
        return True
    try:
        st = storage.stat(path)
    except OSError:
        return False
    return cached_sniff(path, parsed, st.size, st.mtime_ns)


def cached_sniff(path: str, parsed: TraceName, size: int, mtime_ns: int) -> bool:
    if parsed.torch_style or FORMATS[parsed.format].claims(path):
        return True
    if size == 0:
        return False
    key = (path, size, mtime_ns)
    with _sniff_lock:
        cached = _sniff_cache.get(key)
    if cached is not None:
        return cached
    try:
        result = FORMATS[parsed.format].sniff(read_head(path, parsed.gzip))
    except OSError:  # StorageError included
        # Unreadable now; do not cache so a later scan can retry.
        return False
    with _sniff_lock:
        if len(_sniff_cache) >= _SNIFF_CACHE_MAX:
            _sniff_cache.clear()  # stale keys of rewritten files; cheap to rebuild
        _sniff_cache[key] = result
    return result
