"""TORCH_TRACE compile logs in a run folder: which files discovery lists, by name alone.

`TORCH_TRACE=dir` makes torch write one structured log per process into `dir`, named
`dedicated_log_torch_trace_<random>.log`, or `dedicated_log_torch_trace_rank_<r>_<random>.log`
when a process group was initialised as the file was first opened (torch's
`torch/_logging/_internal.py`, `LOG_PREFIX`). People gzip them (`.log.gz`). A run's logs sit
in its folder or in its `torch_trace/` subfolder (the folder `TORCH_TRACE` usually names);
the subfolder belongs to the run beside it, not to a run of its own. Nothing is read here:
`compile_log.py` reads a log only when the `compile` view asks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from . import storage
from .naming import display_name
from .storage import FileState

COMPILE_LOG_PREFIX = "dedicated_log_torch_trace_"
# The subfolder of a run folder that holds its compile logs (what TORCH_TRACE names).
TORCH_TRACE_FOLDER = "torch_trace"
_NAME = re.compile(r"^dedicated_log_torch_trace_(?:rank_(\d+)(?=[_.]))?.*\.log(?:\.gz)?$")


class CompileLogFile(msgspec.Struct, frozen=True):
    """A TORCH_TRACE log of a run: `file` is its name as shown (with `torch_trace/` when it
    is in that subfolder), `rank` the rank its name states (None: not stated)."""

    path: str
    file: str
    rank: int | None
    size: int
    mtime_ns: int


def is_compile_log(name: str) -> bool:
    """Whether a file name is torch's TORCH_TRACE log (plain or gzipped)."""
    return name.startswith(COMPILE_LOG_PREFIX) and _NAME.match(name) is not None


def compile_log_rank(name: str) -> int | None:
    """The rank in a log's name (`..._rank_3_abc.log`), None when it names none."""
    m = _NAME.match(name)
    return int(m.group(1)) if m and m.group(1) is not None else None


def compile_log_files(
    folder: str, found: Iterable[tuple[str, FileState]]
) -> tuple[CompileLogFile, ...]:
    """The logs `found` under `folder` (names relative to it, `/`-separated), in rank then
    name order."""
    logs = [
        CompileLogFile(
            storage.join(folder, rel),
            display_name(rel),
            compile_log_rank(rel.rsplit("/", 1)[-1]),
            st.size,
            st.mtime_ns,
        )
        for rel, st in found
    ]
    return tuple(sorted(logs, key=lambda f: (f.rank is None, f.rank or 0, f.file)))
