"""Logdir -> runs -> workers -> spans.

A run is any folder (the logdir itself included) that directly holds trace files, memory
snapshots (``*.pickle``, ``*.pkl``: `snapshot.py` reads them) or TORCH_TRACE compile logs
(its own, or in its `torch_trace/` subfolder: `compile_log_files.py`). Only directory
listings and stat() are used, so logdirs with thousands of files scan fast; the
exceptions are short sniffs, cached by (path, size, mtime): of plain ``*.json[.gz]``
files, to tell Kineto traces from e.g. ``config.json``, and of pickles, to tell a
snapshot from e.g. a checkpoint (its first 4 KiB name ``segments`` or ``device_traces``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

import msgspec

from . import storage
from .compile_log_files import TORCH_TRACE_FOLDER, CompileLogFile, compile_log_files, is_compile_log
from .local_scan import Found, Listed, LocalScan
from .naming import display_name, parse_trace_name
from .snapshot_files import SnapshotFile, looks_like_snapshot, snapshot_files
from .sniff import cached_sniff
from .storage import FileState

# vLLM and SGLang write the traces of their CUDA/HIP graph captures into this folder of
# the run folder: they belong to the run's traces (the replays' attribution), not to a
# run, worker or span of their own. A capture folder beside no trace is a run: its
# traces are all there is to see.
CAPTURE_FOLDER = "capture_traces"


class SpanFile(msgspec.Struct, frozen=True):
    name: str
    path: str
    file: str
    timestamp: int | None
    size: int
    mtime_ns: int


class Worker(msgspec.Struct, frozen=True):
    name: str
    spans: tuple[SpanFile, ...]


class Run(msgspec.Struct, frozen=True):
    name: str
    path: str
    workers: tuple[Worker, ...]
    snapshots: tuple[SnapshotFile, ...] = ()
    compile_logs: tuple[CompileLogFile, ...] = ()


_NaturalKey = tuple[tuple[object, ...], str]


def natural_key(text: str) -> _NaturalKey:
    """Sort key putting worker2 before worker10; the raw text breaks ties (w01 vs w1)."""
    parts = re.split(r"(\d+)", text)
    # re.split with a group alternates text/digits, so equal positions compare equal types.
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), text


def _span_order(item: Found) -> tuple[bool, int, int, str]:
    parsed, file, st = item
    ts = parsed.timestamp
    return (ts is None, ts if ts is not None else 0, st.mtime_ns, file)


def _build_run(
    name: str,
    path: str,
    found: Iterable[Found],
    snapshots: Iterable[tuple[str, FileState]] = (),
    logs: Iterable[tuple[str, FileState]] = (),
) -> Run:
    by_worker: dict[str, list[Found]] = {}
    for item in found:
        by_worker.setdefault(item[0].worker, []).append(item)
    workers = []
    for worker_name in sorted(by_worker, key=natural_key):
        items = sorted(by_worker[worker_name], key=_span_order)
        spans = tuple(
            SpanFile(
                name=str(i),
                path=storage.join(path, file),
                file=display_name(file),
                timestamp=parsed.timestamp,
                size=st.size,
                mtime_ns=st.mtime_ns,
            )
            for i, (parsed, file, st) in enumerate(items, start=1)
        )
        workers.append(Worker(name=display_name(worker_name), spans=spans))
    return Run(
        name, path, tuple(workers), snapshot_files(path, snapshots), compile_log_files(path, logs)
    )


def _run_sort_key(run: Run) -> tuple[bool, _NaturalKey]:
    return (run.name != ".", natural_key(run.name))


def scan_logdir(logdir: str, nested: bool = True) -> tuple[Run, ...]:
    """All runs under ``logdir``, sorted by name ("." first). With ``nested`` False, only
    the logdir's own run: its files and its `torch_trace/` logs, no other folder listed
    (a trace named alone need not list the thousands of folders beside it).

    Symlinked folders are followed, each real folder visited once (no loops); hidden
    folders (``.git``, ``.ipynb_checkpoints``) and unreadable ones are skipped. A file or
    folder that resolves outside the logdir (a symbolic link out of it) is refused: a
    trace-named file link is a worker whose load fails with an `outside_logdir` error, a
    folder is not listed; nothing behind the link is read or descended into, unless
    KINETOSCOPE_FOLLOW_SYMLINKS=1. The logdir is registered with `storage`, which checks
    every later open of its files (a link swapped in after the listing is refused too).
    A URL (``s3://bucket/prefix``) is listed through `storage` (`scan_remote_logdir`).
    """
    if storage.is_url(logdir):
        return scan_remote_logdir(logdir, nested)
    root = os.path.abspath(logdir)
    scan = LocalScan(storage.add_root(root), storage.follow_symlinks())
    listings: dict[str, Listed] = {}
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)
        except OSError:
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in seen:
            continue
        seen.add(ident)
        listed = scan.folder(folder)
        # Reverse so the stack pops folders in name order: the first path to a folder
        # reached twice through a symlink is then the same on every scan.
        stack.extend(sorted(_to_descend(folder, listed, root, nested), reverse=True))
        listings[folder] = listed
    logs = _logs_by_run(listings, root)
    runs = []
    for folder in dict.fromkeys([*listings, *logs]):
        listed = listings.get(folder) or Listed()
        if listed.found or listed.snapshots or folder in logs:
            rel = os.path.relpath(folder, root)
            name = display_name("." if rel == os.curdir else rel.replace(os.sep, "/"))
            found, snapshots = listed.found, listed.snapshots
            runs.append(_build_run(name, folder, found, snapshots, logs.get(folder, [])))
    return tuple(sorted(runs, key=_run_sort_key))


def _to_descend(folder: str, listed: Listed, root: str, nested: bool) -> list[str]:
    """The subfolders of `folder` a scan lists next: not a capture folder beside traces
    (its traces are theirs); when not `nested`, only the root's `torch_trace/`."""
    if not nested:
        return [d for d in listed.subdirs if folder == root and _named(d, TORCH_TRACE_FOLDER)]
    if listed.found:
        return [d for d in listed.subdirs if not _named(d, CAPTURE_FOLDER)]
    return listed.subdirs


def _named(folder: str, name: str) -> bool:
    return os.path.basename(folder) == name


def _logs_by_run(listings: dict[str, Listed], root: str) -> dict[str, list[tuple[str, FileState]]]:
    """Each run folder's compile logs: its own, and those of its `torch_trace/` subfolder
    (named `torch_trace/<file>`) when that folder holds no traces of its own."""
    out: dict[str, list[tuple[str, FileState]]] = {}
    for folder, listed in listings.items():
        if not listed.logs:
            continue
        owner, prefix = folder, ""
        if folder != root and os.path.basename(folder) == TORCH_TRACE_FOLDER and not listed.found:
            owner, prefix = os.path.dirname(folder), f"{TORCH_TRACE_FOLDER}/"
        out.setdefault(owner, []).extend((prefix + name, st) for name, st in listed.logs)
    return out


def scan_remote_logdir(logdir: str, nested: bool = True) -> tuple[Run, ...]:
    """`scan_logdir` for a URL: one recursive listing of the prefix (a few requests per
    thousand objects), grouped by folder; hidden folders skipped as on disk. Raises
    `storage.StorageError` (or another OSError) when the logdir cannot be listed: a
    missing bucket or refused credentials must say so, not look like an empty logdir."""
    root = storage.absolute(logdir)
    by_folder: dict[str, list[Found]] = {}
    snapshots: dict[str, list[tuple[str, FileState]]] = {}
    logs: dict[str, list[tuple[str, FileState]]] = {}
    for rel, state in _remote_listing(root, nested):
        folder, _, file = rel.rpartition("/")
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        parsed = parse_trace_name(file)
        if parsed is None and is_compile_log(file):
            logs.setdefault(folder, []).append((file, state))
            continue
        if parsed is None:
            if looks_like_snapshot(storage.join(root, rel), state.size, state.mtime_ns):
                snapshots.setdefault(folder, []).append((file, state))
                by_folder.setdefault(folder, [])
            continue
        if cached_sniff(storage.join(root, rel), parsed, state.size, state.mtime_ns):
            by_folder.setdefault(folder, []).append((parsed, file, state))
    run_logs = _remote_logs_by_run(logs, by_folder)
    runs = [
        _build_run(
            display_name(folder or "."),
            storage.join(root, folder) if folder else root,
            found,
            snapshots.get(folder, ()),
            run_logs.get(folder, ()),
        )
        for folder, found in by_folder.items()
        if not _beside_traces(folder, by_folder)
    ]
    return tuple(sorted(runs, key=_run_sort_key))


def _remote_listing(root: str, nested: bool) -> list[tuple[str, FileState]]:
    """Every file under `root`; when not `nested`, its own files and those of its
    `torch_trace/` only, in two listings of one level (not one of the whole prefix)."""
    if nested:
        return storage.list_files(root)
    logs = storage.join(root, TORCH_TRACE_FOLDER)
    try:
        in_logs = storage.list_files(logs, maxdepth=1)
    except OSError:  # no such folder: on some stores, listing it is an error
        in_logs = []
    own = storage.list_files(root, maxdepth=1)
    return own + [(f"{TORCH_TRACE_FOLDER}/{rel}", state) for rel, state in in_logs]


def _remote_logs_by_run(
    logs: dict[str, list[tuple[str, FileState]]], by_folder: dict[str, list[Found]]
) -> dict[str, list[tuple[str, FileState]]]:
    """`_logs_by_run` for a listing by folder (relative, "" the logdir): a `torch_trace/`
    folder without traces gives its logs to its parent; every owner becomes a run."""
    out: dict[str, list[tuple[str, FileState]]] = {}
    for folder, found in logs.items():
        parent, _, name = folder.rpartition("/")
        owner, prefix = folder, ""
        if folder and name == TORCH_TRACE_FOLDER and not by_folder.get(folder):
            owner, prefix = parent, f"{TORCH_TRACE_FOLDER}/"
        out.setdefault(owner, []).extend((prefix + file, st) for file, st in found)
    for owner in out:
        by_folder.setdefault(owner, [])
    return out


def _beside_traces(folder: str, by_folder: dict[str, list[Found]]) -> bool:
    """A `capture_traces/` folder whose parent folder holds traces (not a run)."""
    parent, _, name = folder.rpartition("/")
    return name == CAPTURE_FOLDER and bool(by_folder.get(parent))


def capture_files(trace_path: str) -> list[str]:
    """The graph-capture traces profiled beside a trace: the Kineto traces in the
    `capture_traces/` folder of its folder, in name order (empty when there is none)."""
    folder = storage.join(storage.parent(trace_path), CAPTURE_FOLDER)
    try:
        if storage.is_url(folder):
            listed = storage.list_files(folder)
        else:
            with os.scandir(folder) as entries:
                listed = [
                    (e.name, FileState(st.st_size, st.st_mtime_ns))
                    for e in entries
                    if e.is_file() and (st := e.stat())
                ]
    except OSError:
        return []
    out = []
    for rel, state in sorted(listed, key=lambda item: natural_key(item[0])):
        parsed = parse_trace_name(rel)
        if parsed is None or "/" in rel:
            continue
        path = storage.join(folder, rel)
        if cached_sniff(path, parsed, state.size, state.mtime_ns):
            out.append(path)
    return out


def target_runs(target: str) -> tuple[Run, ...]:
    """What a person names on a command line or in a notebook: a logdir (every run under
    it, as `scan_logdir`) or one trace file (the run of its folder, holding only that
    file), a local path or a URL. Empty when nothing there is a trace; OSError when the
    store cannot list it."""
    path = storage.absolute(target)
    if storage.kind(path) != "file":
        return scan_logdir(path)
    found = []
    for run in scan_logdir(storage.parent(path), nested=False):
        workers = []
        for worker in run.workers:
            spans = tuple(s for s in worker.spans if s.path == path)
            if spans:
                workers.append(Worker(worker.name, spans))
        snapshots = tuple(s for s in run.snapshots if s.path == path)
        # A trace keeps the compile logs beside it (its process's); a named log is its own run.
        logs = run.compile_logs if workers else tuple(c for c in run.compile_logs if c.path == path)
        if workers or snapshots or logs:
            found.append(Run(run.name, run.path, tuple(workers), snapshots, logs))
    return tuple(found)


def find_span(runs: Iterable[Run], run: str, worker: str, span: str) -> SpanFile | None:
    """Look a span up by its listed names; request values never become paths."""
    for r in runs:
        if r.name != run:
            continue
        for w in r.workers:
            if w.name != worker:
                continue
            for s in w.spans:
                if s.name == span:
                    return s
    return None


def chosen_spans(run: Run, span: str | None = None) -> list[tuple[Worker, SpanFile]]:
    """Each worker's span named `span` (default "1"), else its first span."""
    name = span or "1"
    out = []
    for worker in run.workers:
        if worker.spans:
            out.append((worker, next((s for s in worker.spans if s.name == name), worker.spans[0])))
    return out
