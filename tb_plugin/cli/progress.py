"""The CLI's progress of a run-level job on stderr: "ranks summarised 57/256".

On a terminal one line is rewritten in place; into a file or a pipe a line is written at
most every `interval_s` seconds, and always the last one, so a log of a 1024-rank job stays
short. The callback runs on the thread that collects the results (one at a time).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class RankProgress:
    def __init__(
        self,
        run: str,
        stream: TextIO | None = None,
        interval_s: float = 2.0,
        counted: str | None = None,
    ) -> None:
        self.run = run
        # What is counted; None: a run's ranks ("run 'x': ranks summarised").
        self.counted = counted
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self._last = -float("inf")
        isatty = getattr(self.stream, "isatty", None)
        self._in_place = bool(isatty and isatty())

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        last = done >= total
        if not last and not self._in_place and now - self._last < self.interval_s:
            return
        self._last = now
        what = self.counted or f"run {self.run!r}: ranks summarised"
        line = f"kinetoscope: {what} {done}/{total}"
        if self._in_place:
            self.stream.write("\r" + line + ("\n" if last else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
