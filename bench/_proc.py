"""Child processes for the benchmark: own session, bounded in time and memory, measured.

Every child is started in a new session (``start_new_session=True``), so it and everything it
spawns (TensorBoard workers, multiprocessing pools) share one session id and one process
group. A watcher thread samples the summed RSS of that session from ``/proc`` every
``interval`` seconds and kills the whole group with SIGKILL when the deadline passes or the
summed RSS goes over the cap. The child is reaped with ``os.wait4``, whose ``ru_maxrss`` is the
exact peak RSS of the largest single process among the child and the descendants it reaped.
The peak reported is the larger of the two (sampled sum over the tree, exact single max).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Optional, Union

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

_LIVE: set[int] = set()
_LIVE_LOCK = threading.Lock()


def _kill_all_live() -> None:
    with _LIVE_LOCK:
        pids = list(_LIVE)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)


atexit.register(_kill_all_live)


def session_rss(sid: int) -> tuple[int, int]:
    """Summed RSS in bytes and count of the live processes whose session id is ``sid``."""
    total = 0
    count = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0, 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after "(comm)": state ppid pgrp session ... rss is field 24 of the man page.
        rest = stat[stat.rfind(b")") + 2 :].split()
        if len(rest) < 22:
            continue
        try:
            if int(rest[3]) != sid:
                continue
            total += int(rest[21]) * PAGE_SIZE
        except ValueError:
            continue
        count += 1
    return total, count


@dataclass
class Outcome:
    """What one bounded child run measured."""

    seconds: float
    exit_code: Optional[int]
    killed: Optional[str]  # "timeout", "rss_cap" or None
    ru_maxrss_bytes: int
    tree_peak_rss_bytes: int
    cpu_seconds: float
    stderr_tail: str

    @property
    def peak_rss_bytes(self) -> int:
        return max(self.ru_maxrss_bytes, self.tree_peak_rss_bytes)

    @property
    def ok(self) -> bool:
        return self.killed is None and self.exit_code == 0


class Child:
    """A child process in its own session, watched for time, memory and peak RSS."""

    def __init__(
        self,
        cmd: Sequence[str],
        *,
        timeout: float,
        rss_cap_bytes: int,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[Path] = None,
        stdout: Union[Path, None] = None,
        stderr: Optional[Path] = None,
        interval: float = 0.2,
    ) -> None:
        self.cmd = list(cmd)
        self.timeout = timeout
        self.rss_cap_bytes = rss_cap_bytes
        self.interval = interval
        self.stderr_path = stderr
        self.tree_peak_rss_bytes = 0
        self.killed: Optional[str] = None
        self._stop = threading.Event()
        self._status: Optional[int] = None
        self._rusage: Optional[resource.struct_rusage] = None
        self._files: list[IO[bytes]] = []
        out: Union[int, IO[bytes]] = subprocess.DEVNULL
        err: Union[int, IO[bytes]] = subprocess.DEVNULL
        if stdout is not None:
            out = open(stdout, "wb")  # noqa: SIM115 - closed in _reap
            self._files.append(out)
        if stderr is not None:
            err = open(stderr, "wb")  # noqa: SIM115 - closed in _reap
            self._files.append(err)
        self.started = time.perf_counter()
        try:
            self.proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=dict(env) if env is not None else None,
                cwd=str(cwd) if cwd is not None else None,
                start_new_session=True,
            )
        except OSError:
            for f in self._files:
                f.close()
            raise
        self.pid = self.proc.pid
        with _LIVE_LOCK:
            _LIVE.add(self.pid)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _kill(self, reason: str) -> None:
        if self.killed is None:
            self.killed = reason
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)

    def _watch(self) -> None:
        deadline = self.started + self.timeout
        while not self._stop.is_set():
            rss, count = session_rss(self.pid)
            self.tree_peak_rss_bytes = max(self.tree_peak_rss_bytes, rss)
            if time.perf_counter() > deadline:
                self._kill("timeout")
            elif rss > self.rss_cap_bytes:
                self._kill("rss_cap")
            elif count == 0 and self._status is not None:
                return
            self._stop.wait(self.interval)

    def poll(self) -> Optional[int]:
        """Exit code if the child has ended (reaping it), else None."""
        if self._status is None:
            try:
                pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
            except ChildProcessError:
                return -1
            if pid == 0:
                return None
            self._status, self._rusage = status, rusage
        return os.waitstatus_to_exitcode(self._status)

    def wait(self) -> Outcome:
        """Block until the child ends (the watcher kills it at the deadline) and measure it."""
        if self._status is None:
            try:
                _, status, rusage = os.wait4(self.pid, 0)
                self._status, self._rusage = status, rusage
            except ChildProcessError:
                self._status = 0
        seconds = self.elapsed()
        return self._reap(seconds)

    def stop(self, grace: float = 10.0) -> Outcome:
        """End a server child: SIGTERM to its group, SIGKILL after ``grace`` seconds."""
        seconds = self.elapsed()
        if self.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGTERM)
            end = time.perf_counter() + grace
            while self.poll() is None and time.perf_counter() < end:
                time.sleep(0.05)
            if self.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(self.pid, signal.SIGKILL)
                self.wait()
        return self._reap(seconds)

    def _reap(self, seconds: float) -> Outcome:
        # Leftovers of the group (orphans of the leader) go too.
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        self._stop.set()
        self._watcher.join(timeout=5)
        with _LIVE_LOCK:
            _LIVE.discard(self.pid)
        self.proc.returncode = (
            os.waitstatus_to_exitcode(self._status) if self._status is not None else None
        )
        for f in self._files:
            f.close()
        ru = self._rusage
        return Outcome(
            seconds=seconds,
            exit_code=self.proc.returncode,
            killed=self.killed,
            ru_maxrss_bytes=(ru.ru_maxrss * 1024) if ru is not None else 0,
            tree_peak_rss_bytes=self.tree_peak_rss_bytes,
            cpu_seconds=(ru.ru_utime + ru.ru_stime) if ru is not None else 0.0,
            stderr_tail=tail(self.stderr_path),
        )


def tail(path: Optional[Path], limit: int = 2000) -> str:
    """The last ``limit`` characters of a log file, or ''."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def run_measured(
    cmd: Sequence[str],
    *,
    timeout: float,
    rss_cap_bytes: int,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[Path] = None,
    stdout: Optional[Path] = None,
    stderr: Optional[Path] = None,
) -> Outcome:
    """Run ``cmd`` to its end (or its deadline) and measure wall time and peak RSS."""
    child = Child(
        cmd,
        timeout=timeout,
        rss_cap_bytes=rss_cap_bytes,
        env=env,
        cwd=cwd,
        stdout=stdout,
        stderr=stderr,
    )
    return child.wait()


def outcome_error(outcome: Outcome) -> Optional[str]:
    """A one-line error for a failed run, or None when it succeeded."""
    if outcome.killed == "timeout":
        return "timeout"
    if outcome.killed == "rss_cap":
        return "killed: peak RSS over the cap"
    if outcome.exit_code != 0:
        last = [line for line in outcome.stderr_tail.splitlines() if line.strip()]
        detail = last[-1].strip() if last else "no stderr"
        return f"exit code {outcome.exit_code}: {detail}"
    return None


def measures(outcome: Outcome) -> dict[str, Any]:
    """What a results row records of one child run: wall time, peak RSS (the three
    readings), CPU time."""
    return {
        "seconds": outcome.seconds,
        "peak_rss_bytes": outcome.peak_rss_bytes,
        "tree_peak_rss_bytes": outcome.tree_peak_rss_bytes,
        "ru_maxrss_bytes": outcome.ru_maxrss_bytes,
        "cpu_seconds": outcome.cpu_seconds,
    }
