"""Local files of a logdir stay inside it, decided when a file is opened, not when it was
listed: a listed trace replaced by a symbolic link (`ln -sfn /etc/passwd run/x.json`)
between two rescans must not be read.

Discovery registers each local logdir it lists (`add_root`). A path under a registered
logdir is opened first, then the opened file's own path (`/proc/self/fd/N`, the kernel's
record of what was opened; elsewhere the real path, whose file must be the one opened) is
checked to be inside the logdir's real path: whatever a link pointed to at the moment of
opening, what is read is what was checked. `stat` opens with `O_PATH` (nothing is read,
a FIFO does not block), `open_contained` for reading (non-blocking, and only a regular
file is kept). Paths under no registered logdir (a file given to `build_model` directly)
are not checked. KINETOSCOPE_FOLLOW_SYMLINKS=1 turns the check off.

The registered logdirs are mirrored in the environment (`KINETOSCOPE_LOGDIR_ROOTS`, JSON),
so worker processes started later (rank summaries in a process pool) check the same.
"""

from __future__ import annotations

import errno
import json
import os
import stat as stat_mode
import threading
from typing import BinaryIO

OUTSIDE_LOGDIR = (
    "a symbolic link that leads outside the logdir, so it is not read "
    "(set KINETOSCOPE_FOLLOW_SYMLINKS=1 to follow links on purpose)"
)
ROOTS_ENV = "KINETOSCOPE_LOGDIR_ROOTS"
_roots: dict[str, str] = {}  # a logdir's absolute path -> its real path
_lock = threading.Lock()
_O_PATH = getattr(os, "O_PATH", 0)
# Opened for reading without waiting (a FIFO put in a file's place), closed in children;
# `O_BINARY` on Windows, where the POSIX flags do not exist.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_READ = os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_PROC_FD = "/proc/self/fd"


class OutsideLogdirError(PermissionError):
    """A file of a logdir that resolves (through a symbolic link) outside it at the moment
    it is opened: never read, unless KINETOSCOPE_FOLLOW_SYMLINKS=1."""


def follow_symlinks() -> bool:
    """KINETOSCOPE_FOLLOW_SYMLINKS=1: links out of the logdir are read like any file."""
    return os.environ.get("KINETOSCOPE_FOLLOW_SYMLINKS", "").strip() == "1"


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def add_root(logdir: str) -> str:
    """Register a local logdir (absolute); returns its real path."""
    real = os.path.realpath(logdir)
    with _lock:
        if _roots.get(logdir) != real:
            _roots[logdir] = real
            os.environ[ROOTS_ENV] = json.dumps(_roots)
    return real


_inherited: tuple[str, object] = ("", {})  # the environment's text and what it decoded to


def _inherited_roots() -> object:
    """The environment's roots decoded, once per text (asked on every stat of a request)."""
    global _inherited
    text = os.environ.get(ROOTS_ENV) or "{}"
    known = _inherited
    if known[0] == text:
        return known[1]
    try:
        decoded: object = json.loads(text)
    except ValueError:
        decoded = {}
    _inherited = (text, decoded)
    return decoded


def _registered() -> dict[str, str]:
    with _lock:
        roots = dict(_roots)
    inherited = _inherited_roots()
    if isinstance(inherited, dict):
        for logdir, real in inherited.items():
            if isinstance(logdir, str) and isinstance(real, str):
                roots.setdefault(logdir, real)
    return roots


def roots_of(path: str) -> list[str]:
    """The real paths of the registered logdirs `path` is under (as written)."""
    if follow_symlinks():
        return []
    absolute = os.path.abspath(path)
    return [real for logdir, real in _registered().items() if inside(absolute, logdir)]


def _opened_path(fd: int, path: str) -> str:
    """Where the file open as `fd` is."""
    try:
        return os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        pass
    real = os.path.realpath(path)
    opened, found = os.fstat(fd), os.stat(real)
    if (opened.st_dev, opened.st_ino) != (found.st_dev, found.st_ino):
        raise OutsideLogdirError(errno.EACCES, "the file changed while it was opened", path)
    return real


def _check(fd: int, path: str, roots: list[str]) -> None:
    if not any(inside(_opened_path(fd, path), root) for root in roots):
        raise OutsideLogdirError(errno.EACCES, OUTSIDE_LOGDIR, path)


def contained_stat(path: str) -> os.stat_result:
    """`os.stat` of a local path, refused (OutsideLogdirError) when it resolves outside its
    logdir."""
    roots = roots_of(path)
    if not roots:
        return os.stat(path)
    flags = _O_PATH | getattr(os, "O_CLOEXEC", 0) if _O_PATH else _READ
    fd = os.open(path, flags)
    try:
        _check(fd, path, roots)
        return os.fstat(fd)
    finally:
        os.close(fd)


def open_contained(path: str) -> BinaryIO:
    """A local file opened for reading bytes, refused when it resolves outside its logdir;
    only a regular file (a FIFO or device put in its place is refused, unread)."""
    roots = roots_of(path)
    fd = os.open(path, _READ)
    try:
        if roots:
            _check(fd, path, roots)
        if not stat_mode.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file, so it is not read", path)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def logdir_roots(path: str) -> list[str]:
    """The real paths of the registered logdirs `path` is under, whatever the opt-in."""
    absolute = os.path.abspath(path)
    return [real for logdir, real in _registered().items() if inside(absolute, logdir)]


def read_bounded(path: str, limit: int, roots: list[str] | None) -> bytes:
    """A whole small local file: only a regular file (a FIFO is not waited on), at most
    `limit` bytes (OSError EFBIG past it), and with `roots` (real paths) only if it is
    inside one of them at the moment it is opened (OutsideLogdirError)."""
    fd = os.open(path, _READ)
    with os.fdopen(fd, "rb") as f:
        if roots is not None:
            _check(fd, path, [os.path.realpath(r) for r in roots])
        if not stat_mode.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB", path)
    return data


def list_bounded(folder: str, limit: int, roots: list[str] | None) -> list[str]:
    """The names of the entries of a local folder, at most `limit` of them (the first the
    folder gives), sorted; with `roots` (real paths) only if the folder is inside one of
    them at the moment it is opened (OutsideLogdirError otherwise): a folder link leading
    out is not listed."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if roots is not None:
            _check(fd, folder, [os.path.realpath(r) for r in roots])
        names: list[str] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                if len(names) >= limit:
                    break
                names.append(entry.name)
    finally:
        os.close(fd)
    return sorted(names)
