"""A logdir's listing kept fresh: discovery's scan, rerun by a daemon thread."""

from __future__ import annotations

import threading

from .discovery import Run, scan_logdir


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
