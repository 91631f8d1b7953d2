"""Logdir -> runs -> workers -> spans.

A run is any folder (the logdir itself included) that directly holds trace files. Only
directory listings and stat() are used, so logdirs with thousands of files scan fast;
the one exception is a short sniff of plain ``*.json[.gz]`` files, cached by
(path, size, mtime), to tell Kineto traces from e.g. ``config.json``.
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from . import storage
from .naming import TraceName, display_name, parse_trace_name
from .storage import FileState

SNIFF_BYTES = 64 * 1024
# A gzip member of JSON compresses ~10x; this bounds the raw read for odd files.
_SNIFF_RAW_LIMIT = 4 * SNIFF_BYTES
_SNIFF_CACHE_MAX = 100_000


@dataclass(frozen=True)
class SpanFile:
    name: str
    path: str
    file: str
    timestamp: int | None
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Worker:
    name: str
    spans: tuple[SpanFile, ...]


@dataclass(frozen=True)
class Run:
    name: str
    path: str
    workers: tuple[Worker, ...]


_NaturalKey = tuple[tuple[object, ...], str]


def natural_key(text: str) -> _NaturalKey:
    """Sort key putting worker2 before worker10; the raw text breaks ties (w01 vs w1)."""
    parts = re.split(r"(\d+)", text)
    # re.split with a group alternates text/digits, so equal positions compare equal types.
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), text


_sniff_cache: dict[tuple[str, int, int], bool] = {}
_sniff_lock = threading.Lock()


def _read_head(path: str, gz: bool) -> bytes:
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


def _sniff(head: bytes) -> bool:
    if b'"traceEvents"' in head:
        return True
    # Before 2021 traces were a bare JSON array of events.
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[") and b'"ph"' in head


def looks_like_kineto_trace(path: str) -> bool:
    """Whether discovery lists this file as a trace.

    Torch-style names (``*.pt.trace.json[.gz]``) are always true without reading, so an
    empty or broken one shows up as a broken worker instead of vanishing. Plain
    ``*.json[.gz]`` files are sniffed: the first 64 KiB (decompressed) must hold
    ``"traceEvents"`` or be a bare array with ``"ph"`` keys.
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
    return _cached_sniff(path, parsed, st.size, st.mtime_ns)


def _cached_sniff(path: str, parsed: TraceName, size: int, mtime_ns: int) -> bool:
    if parsed.torch_style:
        return True
    if size == 0:
        return False
    key = (path, size, mtime_ns)
    with _sniff_lock:
        cached = _sniff_cache.get(key)
    if cached is not None:
        return cached
    try:
        result = _sniff(_read_head(path, parsed.gzip))
    except OSError:  # StorageError included
        # Unreadable now; do not cache so a later scan can retry.
        return False
    with _sniff_lock:
        if len(_sniff_cache) >= _SNIFF_CACHE_MAX:
            _sniff_cache.clear()  # stale keys of rewritten files; cheap to rebuild
        _sniff_cache[key] = result
    return result


_Found = tuple[TraceName, str, FileState]


def _span_order(item: _Found) -> tuple[bool, int, int, str]:
    parsed, file, st = item
    ts = parsed.timestamp
    return (ts is None, ts if ts is not None else 0, st.mtime_ns, file)


def _build_run(name: str, path: str, found: Iterable[_Found]) -> Run:
    by_worker: dict[str, list[_Found]] = {}
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
    return Run(name=name, path=path, workers=tuple(workers))


def _run_sort_key(run: Run) -> tuple[bool, _NaturalKey]:
    return (run.name != ".", natural_key(run.name))


def scan_logdir(logdir: str) -> tuple[Run, ...]:
    """All runs under ``logdir``, sorted by name ("." first).

    Symlinked folders are followed, each real folder visited once (no loops); hidden
    folders (``.git``, ``.ipynb_checkpoints``) and unreadable ones are skipped. A file or
    folder that resolves outside the logdir (a symbolic link out of it) is listed but
    refused: its trace-named files are workers whose load fails with an `outside_logdir`
    error, nothing behind the link is read or descended into, unless
    KINETOSCOPE_FOLLOW_SYMLINKS=1. A URL (``s3://bucket/prefix``) is listed through
    `storage` (`scan_remote_logdir`).
    """
    if storage.is_url(logdir):
        return scan_remote_logdir(logdir)
    root = os.path.abspath(logdir)
    scan = _LocalScan(os.path.realpath(root), storage.follow_symlinks())
    runs: list[Run] = []
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
        found, subdirs = scan.folder(folder)
        # Reverse so the stack pops folders in name order: the first path to a folder
        # reached twice through a symlink is then the same on every scan.
        stack.extend(sorted(subdirs, reverse=True))
        if found:
            rel = os.path.relpath(folder, root)
            name = "." if rel == os.curdir else rel.replace(os.sep, "/")
            runs.append(_build_run(display_name(name), folder, found))
    return tuple(sorted(runs, key=_run_sort_key))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class _LocalScan:
    """One scan's symlink rule: `root` is the logdir's real path; `follow` the opt-in."""

    root: str
    follow: bool

    def folder(self, folder: str) -> tuple[list[_Found], list[str]]:
        """The trace files directly in `folder` and the folders to descend into."""
        found: list[_Found] = []
        subdirs: list[str] = []
        outside = not self.follow and not _inside(os.path.realpath(folder), self.root)
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if outside:
                        self._refuse(entry, found)
                    else:
                        self._classify(entry, found, subdirs)
        except OSError:
            pass
        return found, subdirs

    def _leaves(self, entry: os.DirEntry[str]) -> bool:
        """Whether a symbolic link leads outside the logdir (refused unless followed)."""
        if self.follow or not entry.is_symlink():
            return False
        return not _inside(os.path.realpath(entry.path), self.root)

    def _classify(self, entry: os.DirEntry[str], found: list[_Found], subdirs: list[str]) -> None:
        try:
            if entry.name.startswith("."):
                return
            if entry.is_dir():
                # A folder linked in from outside: its files listed (refused), not read.
                subdirs.append(entry.path)
                return
            parsed = parse_trace_name(entry.name)
            if parsed is None:
                return
            if self._leaves(entry):
                self._refuse(entry, found)
                return
            # is_file() excludes FIFOs and devices, which a sniff could block on.
            if not entry.is_file():
                return
            st = entry.stat()
        except OSError:
            return  # vanished or broken symlink: not listable
        storage.mark_refused(entry.path, False)
        if _cached_sniff(entry.path, parsed, st.st_size, st.st_mtime_ns):
            found.append((parsed, entry.name, FileState(st.st_size, st.st_mtime_ns)))

    @staticmethod
    def _refuse(entry: os.DirEntry[str], found: list[_Found]) -> None:
        """A trace-named file outside the logdir: listed by name alone, never read."""
        parsed = parse_trace_name(entry.name)
        if entry.name.startswith(".") or parsed is None:
            return
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return
        storage.mark_refused(entry.path, True)
        found.append((parsed, entry.name, FileState(st.st_size, st.st_mtime_ns)))


def scan_remote_logdir(logdir: str) -> tuple[Run, ...]:
    """`scan_logdir` for a URL: one recursive listing of the prefix (a few requests per
    thousand objects), grouped by folder; hidden folders skipped as on disk. Raises
    `storage.StorageError` (or another OSError) when the logdir cannot be listed: a
    missing bucket or refused credentials must say so, not look like an empty logdir."""
    root = storage.absolute(logdir)
    by_folder: dict[str, list[_Found]] = {}
    for rel, state in storage.list_files(root):
        folder, _, file = rel.rpartition("/")
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        parsed = parse_trace_name(file)
        if parsed is None:
            continue
        if _cached_sniff(storage.join(root, rel), parsed, state.size, state.mtime_ns):
            by_folder.setdefault(folder, []).append((parsed, file, state))
    runs = [
        _build_run(
            display_name(folder or "."), storage.join(root, folder) if folder else root, found
        )
        for folder, found in by_folder.items()
    ]
    return tuple(sorted(runs, key=_run_sort_key))


def target_runs(target: str) -> tuple[Run, ...]:
    """What a person names on a command line or in a notebook: a logdir (every run under
    it, as `scan_logdir`) or one trace file (the run of its folder, holding only that
    file), a local path or a URL. Empty when nothing there is a trace; OSError when the
    store cannot list it."""
    path = storage.absolute(target)
    if storage.kind(path) != "file":
        return scan_logdir(path)
    found = []
    for run in scan_logdir(storage.parent(path)):
        workers = []
        for worker in run.workers:
            spans = tuple(s for s in worker.spans if s.path == path)
            if spans:
                workers.append(Worker(worker.name, spans))
        if workers:
            found.append(Run(run.name, run.path, tuple(workers)))
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


class LogdirWatcher:
    """Keeps a fresh listing of a logdir, rescanned by a daemon thread."""

    def __init__(self, logdir: str, interval_s: float = 10.0) -> None:
        self.logdir = logdir
        self.interval_s = interval_s
        self._runs: tuple[Run, ...] | None = None
        self._scan_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def runs(self) -> tuple[Run, ...]:
        """The latest listing; the first call scans synchronously."""
        current = self._runs
        if current is not None:
            return current
        with self._scan_lock:
            if self._runs is None:
                self._runs = scan_logdir(self.logdir)
            return self._runs

    def rescan(self) -> tuple[Run, ...]:
        """Scan now and publish the result (one scan at a time)."""
        with self._scan_lock:
            self._runs = scan_logdir(self.logdir)
            return self._runs

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, name="kinetoscope-logdir-watcher", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=max(self.interval_s, 1.0) + 5.0)
        self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.rescan()
            except Exception:
                continue  # keep serving the last listing; retry next interval


def chosen_spans(run: Run, span: str | None = None) -> list[tuple[Worker, SpanFile]]:
    """Each worker's span named `span` (default "1"), else its first span."""
    name = span or "1"
    out = []
    for worker in run.workers:
        if worker.spans:
            out.append((worker, next((s for s in worker.spans if s.name == name), worker.spans[0])))
    return out
