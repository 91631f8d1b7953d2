"""The logdir listing for a server: discovery's scan kept fresh by a daemon thread
(`LogdirWatcher`), the first listing off the request thread (`BackgroundWatcher`).

TensorBoard asks every plugin whether it is active on one request (`plugins_listing`);
an object store that accepts connections and never answers held that request, and with it
every plugin's page, for minutes. `BackgroundWatcher.runs` waits for the first listing at
most `first_wait_s`, then says the listing is still under way (`StillListing`); the
listing goes on in its own thread and later calls get it.
"""

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
        self._life_lock = threading.Lock()  # start and stop, one at a time
        self._stopped = False

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
        """Start rescanning (once; never again after `stop`)."""
        with self._life_lock:
            if self._stopped or (self._thread is not None and self._thread.is_alive()):
                return
            thread = threading.Thread(
                target=self._loop, name="kinetoscope-logdir-watcher", daemon=True
            )
            thread.start()
            self._thread = thread  # published started: `stop` may join it at once

    def stop(self) -> None:
        """Stop rescanning for good (a thread that would start it later, a listing
        asked for in the background, does not)."""
        with self._life_lock:
            self._stopped = True
            self._stop.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=max(self.interval_s, 1.0) + 5.0)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.rescan()
            except Exception:
                continue  # keep serving the last listing; retry next interval


class StillListing(Exception):
    """The first listing of the logdir has not finished yet."""


class BackgroundWatcher(LogdirWatcher):
    """A `LogdirWatcher` whose first listing runs in a thread of its own."""

    def __init__(self, logdir: str, interval_s: float = 10.0, first_wait_s: float = 2.0) -> None:
        super().__init__(logdir, interval_s)
        self.first_wait_s = first_wait_s
        self._first_lock = threading.Lock()
        self._first: threading.Thread | None = None
        self._first_done = threading.Event()
        self._first_error: BaseException | None = None

    def runs(self) -> tuple[Run, ...]:
        """The latest listing; while the first one runs, StillListing after `first_wait_s`;
        the first listing's error (OSError: an unreachable store) until a rescan works."""
        current = self._runs
        if current is not None:
            return current
        with self._first_lock:
            if self._first is None:
                self._first = threading.Thread(
                    target=self._first_listing, name="kinetoscope-first-listing", daemon=True
                )
                self._first.start()
        if not self._first_done.wait(self.first_wait_s):
            raise StillListing(f"listing {self.logdir}...")
        current = self._runs
        if current is not None:
            return current
        error = self._first_error
        if isinstance(error, OSError):
            raise error
        raise OSError(f"the first listing failed: {error}")

    def _first_listing(self) -> None:
        try:
            self.rescan()
        except BaseException as exc:  # noqa: BLE001 - said by runs(); rescans retry
            self._first_error = exc
        finally:
            self._first_done.set()
