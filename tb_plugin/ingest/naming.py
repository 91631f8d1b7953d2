"""The trace file-name grammar, in one place.

Writers (our handler, torch's handler) and readers (discovery) must agree on how a file
name splits into worker and timestamp, so nothing else in the package parses names.

Torch style: ``{worker}[.{digits}].pt.trace.json[.gz]``. The worker is everything before
the optional last ``.{digits}`` group, so worker names may contain dots
(``host.example.com_12.1700000000000.pt.trace.json.gz``). Any other ``*.json[.gz]`` is a
plain (non torch style) name, e.g. HTA's ``rank-0.json.gz``; so is a name with a suffix
of another format in `formats.FORMATS` (libkineto's ``libkineto_activities_123.pb.gz``, a
Perfetto ``*.pftrace``); discovery sniffs those.
"""

from __future__ import annotations

import os
import re

import msgspec

from .formats import plain_format

TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
TEMP_SUFFIX = ".tmp"

# DOTALL so a worker name may hold any character; the lazy prefix lets the optional
# digits group take the last ".{digits}" before the suffix.
_TORCH_RE = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(\.gz)?$", re.DOTALL)
_RANK_IN_NAME = re.compile(r"(?:^|[^a-z])(?:rank|worker)[-_]?(\d+)(?:$|[^0-9])", re.IGNORECASE)


class TraceName(msgspec.Struct, frozen=True):
    worker: str
    timestamp: int | None
    gzip: bool
    torch_style: bool
    format: str = "json"  # a name in `formats.FORMATS`


def parse_trace_name(filename: str) -> TraceName | None:
    """Split a trace file name; None for names the plugin never reads.

    A path is reduced to its last "/" component. Hidden names (our temp files start
    with ".") and names with an empty worker part are not trace names.
    """
    name = filename.rsplit("/", 1)[-1]
    if not name or name.startswith(".") or "\x00" in name:
        return None
    match = _TORCH_RE.match(name)
    if match is not None:
        worker, digits, gz = match.groups()
        if not worker:
            return None
        timestamp = int(digits[1:]) if digits else None
        return TraceName(worker=worker, timestamp=timestamp, gzip=gz is not None, torch_style=True)
    plain = plain_format(name)
    if plain is not None:
        fmt, suffix = plain
        worker = name[: -len(suffix)]
        if not worker:
            return None
        return TraceName(
            worker=worker,
            timestamp=None,
            gzip=suffix.endswith(".gz"),
            torch_style=False,
            format=fmt.name,
        )
    return None


def rank_from_name(name: str) -> int | None:
    """`rank3`, `worker1`, `rank-0.Apr_03...`: the rank a name states, if any."""
    m = _RANK_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def name_rank(worker: str, file: str | None = None) -> int | None:
    """The rank a trace's names state: its worker name's, else its file name's."""
    rank = rank_from_name(worker)
    if rank is None and file is not None:
        rank = rank_from_name(file)
    return rank


def _check_worker(worker: str) -> None:
    # These would either escape the directory or make the name hidden/unparseable.
    if not worker or worker.startswith(".") or "/" in worker or "\x00" in worker:
        raise ValueError(f"invalid worker name for a trace file: {worker!r}")


def format_trace_name(worker: str, timestamp: int, gzip: bool) -> str:
    """``{worker}.{timestamp}.pt.trace.json[.gz]``; parse_trace_name() inverts it."""
    _check_worker(worker)
    if timestamp < 0:
        raise ValueError(f"trace timestamp must be >= 0, got {timestamp}")
    return f"{worker}.{timestamp}{TRACE_SUFFIXES[1] if gzip else TRACE_SUFFIXES[0]}"


def temp_name_for(final_name: str, token: str) -> str:
    """Name of the file being written before it is renamed to ``final_name``.

    It starts with "." so parse_trace_name() (and so discovery) never reports it.
    """
    if "/" in final_name or "/" in token or "\x00" in final_name + token:
        raise ValueError(f"invalid temp name parts: {final_name!r}, {token!r}")
    return f".{final_name}.{token}{TEMP_SUFFIX}"


# `.{final name}.{host}-{pid}-{12 hex}-{json|gz}.tmp`, plus the `.tmp` the profiler adds
# to its own temp file; older handlers wrote no host.
_TEMP_RE = re.compile(
    r"^\..+\.pt\.trace\.json(?:\.gz)?\.(?:(?P<host>.+)-)?(?P<pid>\d+)-[0-9a-f]{12}"
    r"-(?:json|gz)\.tmp(?:\.tmp)?$",
    re.DOTALL,
)


class TempWriter(msgspec.Struct, frozen=True):
    """Who wrote a handler temp file: host (None if not recorded) and process id."""

    host: str | None
    pid: int


def temp_writer(filename: str) -> TempWriter | None:
    """The writer of a handler temp file name; None for any other name."""
    match = _TEMP_RE.match(filename.rsplit("/", 1)[-1])
    if match is None:
        return None
    return TempWriter(host=match.group("host"), pid=int(match.group("pid")))


def display_name(name: str) -> str:
    """`name` as valid UTF-8 text for JSON and terminals.

    os.listdir() gives bytes that are not UTF-8 as lone surrogates, which no encoder
    accepts; they are shown as `\\xff` escapes (unique, readable). Paths keep the raw name.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def default_worker_name() -> str:
    """Same default as torch's handler: unique per process on a host."""
    import socket  # only a handler names a worker: a report does not pay for the import

    return f"{socket.gethostname()}_{os.getpid()}"
