"""One folder of a local logdir, listed with the symlink rule: a trace-named file link that
resolves outside the logdir is listed by its own name (its load fails with
`outside_logdir`: `storage` checks every open, nothing behind the link is read); a folder
that resolves outside it is not listed at all (neither its files' names nor their
sizes); unless KINETOSCOPE_FOLLOW_SYMLINKS=1."""

from __future__ import annotations

import os
import stat as stat_mode

import msgspec

from .compile_log_files import is_compile_log
from .containment import contained_stat
from .containment import inside as _inside
from .naming import TraceName, parse_trace_name
from .snapshot_files import SNAPSHOT_SUFFIXES, looks_like_snapshot
from .sniff import cached_sniff
from .storage import FileState

Found = tuple[TraceName, str, FileState]  # a trace file: its parsed name, file name, state
Snapshot = tuple[str, FileState]  # a memory snapshot: file name, state
CompileLog = tuple[str, FileState]  # a TORCH_TRACE compile log: file name, state


class Listed(msgspec.Struct):
    """What one folder holds: trace files, the folders to descend into, memory snapshots
    and TORCH_TRACE compile logs."""

    found: list[Found] = msgspec.field(default_factory=list)
    subdirs: list[str] = msgspec.field(default_factory=list)
    snapshots: list[Snapshot] = msgspec.field(default_factory=list)
    logs: list[CompileLog] = msgspec.field(default_factory=list)


class LocalScan(msgspec.Struct):
    """One scan's symlink rule: `root` is the logdir's real path; `follow` the opt-in."""

    root: str
    follow: bool

    def folder(self, folder: str) -> Listed:
        """The trace files, memory snapshots and compile logs directly in `folder`, and
        the folders to descend into."""
        listed = Listed()
        if not self.follow and not _inside(os.path.realpath(folder), self.root):
            return listed  # moved out of the logdir: nothing listed
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    self._classify(entry, listed)
        except OSError:
            pass
        return listed

    def _leaves(self, entry: os.DirEntry[str]) -> bool:
        """Whether a symbolic link leads outside the logdir (refused unless followed)."""
        if self.follow or not entry.is_symlink():
            return False
        return not _inside(os.path.realpath(entry.path), self.root)

    def _classify(self, entry: os.DirEntry[str], listed: Listed) -> None:
        try:
            if entry.name.startswith("."):
                return
            if entry.is_dir():
                if not self._leaves(entry):  # a folder linked in from outside: not listed
                    listed.subdirs.append(entry.path)
                return
            parsed = parse_trace_name(entry.name)
            snapshot = entry.name.lower().endswith(SNAPSHOT_SUFFIXES)
            log = parsed is None and not snapshot and is_compile_log(entry.name)
            if parsed is None and not snapshot and not log:
                return
            if self._leaves(entry):
                # a snapshot or log linked in from outside: not listed
                self._refuse(entry, listed.found)
                return
            # Checked as the file is reached (a link swapped in meanwhile is refused);
            # FIFOs and devices, which a sniff could block on, are left out.
            st = contained_stat(entry.path)
            if not stat_mode.S_ISREG(st.st_mode):
                return
        except OSError:
            return  # vanished or broken symlink: not listable
        state = FileState(st.st_size, st.st_mtime_ns)
        if log:
            listed.logs.append((entry.name, state))
        elif parsed is None:
            if looks_like_snapshot(entry.path, st.st_size, st.st_mtime_ns):
                listed.snapshots.append((entry.name, state))
        elif cached_sniff(entry.path, parsed, st.st_size, st.st_mtime_ns):
            listed.found.append((parsed, entry.name, state))

    @staticmethod
    def _refuse(entry: os.DirEntry[str], found: list[Found]) -> None:
        """A trace-named file outside the logdir: listed by name alone, never read."""
        parsed = parse_trace_name(entry.name)
        if entry.name.startswith(".") or parsed is None:
            return
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return
        found.append((parsed, entry.name, FileState(st.st_size, st.st_mtime_ns)))
