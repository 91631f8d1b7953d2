"""Threads for trace loads: a few at a time, and a slow load cannot hold the others back.

Each load runs on its own thread, at most `workers` of them holding a slot. A load that
runs long (a huge or hostile file) gives its slot up (`release_slot`, called from the
load's progress callback) and goes on beside the others, so every other trace still
starts; at most `max_slow` loads run that way at once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable


class LoadPool:
    """`workers` tasks at a time, in the order submitted, each on a daemon thread named
    `name` (one worker: a queue run in turn, as the trace view's disk writes are)."""

    def __init__(self, workers: int, max_slow: int = 2, name: str = "kinetoscope-load") -> None:
        self.workers = workers
        self.max_slow = max_slow
        self.name = name
        self._queue: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()
        self._slotted = 0
        self._slow = 0
        self._closed = False
        self._local = threading.local()

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            if self._closed:
                return
            self._queue.append(task)
            self._dispatch()

    def release_slot(self) -> None:
        """Called on a load's own thread once it is slow: let the next load start."""
        if not getattr(self._local, "slotted", False):
            return
        with self._lock:
            if self._slow >= self.max_slow:
                return
            self._local.slotted = False
            self._slotted -= 1
            self._slow += 1
            self._dispatch()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._queue.clear()

    def _dispatch(self) -> None:
        # Under self._lock.
        while self._queue and self._slotted < self.workers:
            task = self._queue.popleft()
            self._slotted += 1
            threading.Thread(target=self._run, args=(task,), name=self.name, daemon=True).start()

    def _run(self, task: Callable[[], None]) -> None:
        self._local.slotted = True
        try:
            task()
        finally:
            with self._lock:
                if self._local.slotted:
                    self._slotted -= 1
                else:
                    self._slow -= 1
                self._dispatch()
