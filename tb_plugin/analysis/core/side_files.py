"""The files beside a trace a view may read (Inductor's wrappers, CUDA-graph annotations):
only inside the trace's logdir or a folder of KINETOSCOPE_SOURCE_ROOTS, each at most
KINETOSCOPE_MAX_SOURCE_MB (16), through the storage layer."""

from __future__ import annotations

import os

from ...ingest import storage
from ...model.trace_model import TraceModel

SOURCE_ROOTS = "KINETOSCOPE_SOURCE_ROOTS"
MAX_SOURCE_ENV = "KINETOSCOPE_MAX_SOURCE_MB"


def source_roots(model: TraceModel) -> list[str]:
    """The folders a trace may make us read source files from: its logdir (the logdirs
    discovery listed it under; a lone file's own folder), and those the person named in
    KINETOSCOPE_SOURCE_ROOTS (separated as PATH is). Never a folder only the trace names."""
    path = str(model.source.get("path") or "")
    if not path or storage.is_url(path):
        return []
    roots = storage.logdir_roots(path) or [os.path.dirname(os.path.abspath(path))]
    if storage.follow_symlinks():  # links out of the logdir read on purpose: their folder too
        roots.append(os.path.dirname(os.path.realpath(path)))
    return roots + named_source_roots()


def named_source_roots() -> list[str]:
    """The folders of KINETOSCOPE_SOURCE_ROOTS (separated as PATH is), absolute."""
    named = os.environ.get(SOURCE_ROOTS, "").split(os.pathsep)
    return [os.path.abspath(os.path.expanduser(r)) for r in named if r.strip()]
