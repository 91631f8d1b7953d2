"""The `source_paths` route: where the relative source files of a trace's stack frames
are on this machine, so editor links can open them.

The Python tracer writes a frame's file relative to the `sys.path` entry it was found
under (`torch/nn/modules/linear.py`, `transformers/…`, the script's own name): no editor
can open that. It is resolved where the answer is knowable, in this order:

- `recorded`: the path prefixes of the interpreter that recorded the trace, when the trace
  says which: `python_path_prefixes`, written by `kinetoscope.handlers` (torch's own list
  of prefixes it strips: site-packages, `sys.path`, the user base);
- `trace_frames`: the library folders (`…/site-packages/`, `…/dist-packages/`,
  `…/lib/pythonX.Y/`) of the trace's own absolute frames (the same interpreter);
- `run_folder`: the folder of the trace file;
- `source_roots`: the folders of KINETOSCOPE_SOURCE_ROOTS.

A relative file is resolved to the first of these folders that holds it on this machine
(only `.py` files, never a path with `..`: a trace cannot make the server probe other
files). The frames come from the trace's `python_function` events and its `Call stack`
args (the first `MAX_STACK_ROWS` ops that have one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import TypedDict

import msgspec
import numpy as np

from ..analysis.core.common import distinct
from ..analysis.core.side_files import named_source_roots
from ..ingest import storage
from ..ingest.schema import PYTHON_PATH_PREFIXES
from ..model.categories import Kind
from ..model.trace_model import TraceModel
from .params import SourcePathsParams
from .workers import WorkerTrace

MAX_FILES = 5000  # relative files resolved at most (a model's frames name a few hundred)
MAX_STACK_ROWS = 20_000  # ops whose `Call stack` arg is read
_FRAME = re.compile(r"^(.*)\((\d+)\): ")
# A library folder in an absolute frame file: site-packages before the stdlib folder.
_LIBRARY_FOLDERS = (
    re.compile(r"^(.*?/(?:site|dist)-packages/)"),
    re.compile(r"^(.*?/lib/python\d+(?:\.\d+)?/)"),
)


class SourceRoot(TypedDict):
    path: str  # a local folder, with a trailing separator
    why: str  # recorded, trace_frames, run_folder, source_roots


class SourcePathsView(TypedDict):
    resolved: dict[str, str]  # relative file as the trace writes it → local absolute file
    unresolved: list[str]  # relative files found under no root (at most 50)
    unresolved_count: int
    roots: list[SourceRoot]  # the folders tried, in order


class _StackArgs(msgspec.Struct, gc=False):
    stack: str | None = msgspec.field(default=None, name="Call stack")


def source_paths(workers: Sequence[WorkerTrace], params: SourcePathsParams) -> SourcePathsView:
    """Where the relative files of the trace's stack frames are on this machine."""
    resolved: dict[str, str] = {}
    unresolved: set[str] = set()
    roots: list[SourceRoot] = []
    for worker in workers:
        files = frame_files(worker.model)
        trace_roots = roots_of(worker.model, files)
        roots.extend(r for r in trace_roots if r not in roots)
        for rel in sorted(f for f in files if _relative(f))[:MAX_FILES]:
            local = _resolve(rel, trace_roots)
            if local is None:
                unresolved.add(rel)
            else:
                resolved.setdefault(rel, local)
    left = sorted(unresolved - resolved.keys())
    return {
        "resolved": resolved,
        "unresolved": left[:50],
        "unresolved_count": len(left),
        "roots": roots,
    }


def frame_files(model: TraceModel) -> set[str]:
    """The files the trace's stack frames name: of `python_function` events and of the
    `Call stack` args."""
    ev = model.events
    codes = distinct(ev["name"][ev["kind"] == Kind.PYTHON])
    files = {_file_of(model.names[c]) for c in codes.tolist()}
    stacked = np.flatnonzero(ev["has_stack"])[:MAX_STACK_ROWS]
    texts = {a.stack for a in model.iter_args(stacked, _StackArgs) if a.stack}
    for text in texts:
        files.update(_file_of(frame) for frame in text.split(";"))
    files.discard("")
    return files


def _file_of(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    return m.group(1) if m else ""


def _relative(path: str) -> bool:
    return not (path.startswith(("/", "\\", "<")) or re.match(r"^[A-Za-z]:[\\/]", path))


def roots_of(model: TraceModel, files: Iterable[str]) -> list[SourceRoot]:
    """The local folders relative frames of this trace may be under, in order."""
    out: list[SourceRoot] = []

    def add(path: str, why: str) -> None:
        folder = os.path.join(os.path.abspath(os.path.expanduser(path)), "")
        if os.path.isdir(folder) and all(r["path"] != folder for r in out):
            out.append({"path": folder, "why": why})

    recorded = model.header.get(PYTHON_PATH_PREFIXES)
    if isinstance(recorded, list):
        for prefix in recorded:
            if isinstance(prefix, str) and prefix.strip() and os.path.isabs(prefix):
                add(prefix, "recorded")
    for folder in _library_folders(files):
        add(folder, "trace_frames")
    path = str(model.source.get("path") or "")
    if path and not storage.is_url(path):
        add(os.path.dirname(os.path.abspath(path)), "run_folder")
    for root in named_source_roots():
        add(root, "source_roots")
    return out


def _library_folders(files: Iterable[str]) -> list[str]:
    """The site-packages, dist-packages and stdlib folders of absolute frame files,
    site-packages first, then the longer (more specific) first."""
    found: list[set[str]] = [set() for _ in _LIBRARY_FOLDERS]
    for file in files:
        path = file.replace("\\", "/")
        for kind, pattern in enumerate(_LIBRARY_FOLDERS):
            m = pattern.match(path)
            if m:
                found[kind].add(m.group(1))
                break
    return [f for folders in found for f in sorted(folders, key=lambda p: (-len(p), p))]


def _resolve(rel: str, roots: list[SourceRoot]) -> str | None:
    parts = rel.replace("\\", "/").split("/")
    if not rel.endswith(".py") or ".." in parts:
        return None
    for root in roots:
        local = os.path.join(root["path"], *parts)
        if os.path.isfile(local):
            return local
    return None
