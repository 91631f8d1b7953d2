"""Integrity of what the disk cache reads back: a damaged entry is rebuilt, never served.

Each entry folder gets a manifest: every file's size and a checksum (of the whole file
for the small metadata, of its first and last 64 KiB for columns and args, so that a
warm start still reads almost nothing). That catches truncated, extended, swapped,
zeroed or replaced files; a flipped bit inside a large column is the one damage it can
miss. Each cached view carries its own CRC-32 and size in a first line.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import msgspec

MANIFEST = "manifest.json"
_MANIFEST_DECODER = msgspec.json.Decoder(dict[str, list[int]])
_SAMPLE = 64 << 10
_FULL_CHECK_BELOW = 1 << 20  # files smaller than this are checksummed whole


def file_checksum(path: Path) -> tuple[int, int]:
    """(size, CRC-32 of the file or of its first and last 64 KiB)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < _FULL_CHECK_BELOW:
            return size, zlib.crc32(f.read())
        crc = zlib.crc32(f.read(_SAMPLE))
        f.seek(size - _SAMPLE)
        return size, zlib.crc32(f.read(_SAMPLE), crc)


def write_manifest(folder: Path) -> None:
    files = {
        p.name: list(file_checksum(p))
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name != MANIFEST
    }
    (folder / MANIFEST).write_bytes(msgspec.json.encode(files))


def manifest_ok(folder: Path) -> bool:
    """Every file the manifest lists is there, with its size and checksum."""
    try:
        files = _MANIFEST_DECODER.decode((folder / MANIFEST).read_bytes())
        return all(list(file_checksum(folder / name)) == want for name, want in files.items())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return False


def seal_view(data: bytes) -> bytes:
    return b"%08x %d\n" % (zlib.crc32(data), len(data)) + data


def open_view(sealed: bytes) -> bytes | None:
    """The view's JSON, or None when the file is damaged."""
    head, sep, data = sealed.partition(b"\n")
    if not sep:
        return None
    try:
        crc, size = head.split(b" ")
        ok = int(crc, 16) == zlib.crc32(data) and int(size) == len(data)
    except ValueError:
        return None
    return data if ok else None
