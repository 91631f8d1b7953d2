#!/usr/bin/env python3
"""When each block of a load is inflated, each slice scanned and each chunk merged.

    .venv/bin/python bench/load_timeline.py TRACE [--rounds 5] [--spans]

Loads TRACE (`build_model`, the load of a cold report, no views) `--rounds` times in this
process and prints, per round, its wall and CPU seconds and where the wall went: the
pipeline's fill (until the first chunk merges) and drain (after the last block is
inflated), each thread's busy seconds (wall and CPU: a span whose CPU is far below its
wall waited for the GIL or a core), and the merging thread's waits for a scanned slice.
`--spans` prints the last round's spans one per line (thread, what, start, end, CPU).

The product's functions are wrapped at run time (nothing in the product imports this).
Timings on a shared machine are noisy: compare the best of several rounds, and CPU.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

# thread, what, start, end, CPU s, context switches
SPANS: list[tuple[str, str, float, float, float, int]] = []
_LOCK = threading.Lock()


def _switches() -> int:
    """The calling thread's context switches so far (waits for a lock, the GIL, a core)."""
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_nvcsw + usage.ru_nivcsw


def _span(what: str, start: float, cpu: float, switches: int) -> None:
    end, switched = time.perf_counter(), _switches() - switches
    with _LOCK:
        SPANS.append((threading.current_thread().name, what, start, end, cpu, switched))


def spanned(what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with each call kept as a span of its thread."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, cpu, switches = time.perf_counter(), time.thread_time(), _switches()
        try:
            return fn(*args, **kwargs)
        finally:
            _span(what, start, time.thread_time() - cpu, switches)

    return wrapper


def spanned_generator(what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A generator function whose every step (next or send) is a span of its thread."""

    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        step = spanned(what, fn(*args, **kwargs).send)
        sent: Any = None
        while True:
            try:
                item = step(sent)
            except StopIteration as stop:
                return stop.value
            sent = yield item

    return wrapper


class _SpannedSink:
    """The args spill file, each write a span of the thread that makes it."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self.write = spanned("spill write", f.write)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def instrument() -> None:
    from concurrent.futures import Future

    from kinetoscope.ingest import build, text_blocks

    text_blocks._raw_text_blocks = spanned_generator("inflate", text_blocks._raw_text_blocks)
    build.scan_slice = spanned("scan", build.scan_slice)
    build.ModelBuilder.merge = spanned("merge", build.ModelBuilder.merge)  # type: ignore[method-assign]
    build.iter_event_pieces = spanned_generator("cut", build.iter_event_pieces)
    result = Future.result
    temporary = tempfile.TemporaryFile

    class _Spilled:
        @staticmethod
        def TemporaryFile(*args: Any, **kwargs: Any) -> Any:  # noqa: N802
            return _SpannedSink(temporary(*args, **kwargs))

    build.tempfile = _Spilled  # type: ignore[assignment]

    def waited(self: Future[Any], timeout: float | None = None) -> Any:
        if self.done():
            return result(self, timeout)
        start, cpu, switches = time.perf_counter(), time.thread_time(), _switches()
        try:
            return result(self, timeout)
        finally:
            _span("wait for a slice", start, time.thread_time() - cpu, switches)

    Future.result = waited  # type: ignore[method-assign]


Span = tuple[str, str, float, float, float, int]


def summary(spans: list[Span], t0: float, t1: float) -> None:
    busy: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0, 0])
    for thread, what, start, end, cpu, switched in spans:
        row = busy[(_thread_kind(thread), what)]
        row[0] += end - start
        row[1] += cpu
        row[2] += 1
        row[3] += switched
    inflates = [s for s in spans if s[1] == "inflate"]
    merges = [s for s in spans if s[1] == "merge"]
    scans = sorted((s for s in spans if s[1] == "scan"), key=lambda s: s[2])
    if inflates and merges:
        print(
            f"  first block inflated {inflates[0][3] - t0:.3f}  first scan starts "
            f"{scans[0][2] - t0 if scans else 0:.3f}  first merge starts {merges[0][2] - t0:.3f}"
            f"  last inflate ends {inflates[-1][3] - t0:.3f}  last merge ends "
            f"{merges[-1][3] - t0:.3f}  end {t1 - t0:.3f}"
        )
    for (thread, what), (wall, cpu, n, switched) in sorted(busy.items()):
        print(
            f"  {thread:>8} {what:<17} n={n:<5} wall {wall:.3f}  cpu {cpu:.3f}  "
            f"switches {switched:.0f}"
        )
    print(f"  slices scanned at once (mean over the load): {_concurrency(scans, t0, t1):.2f}")


def _thread_kind(name: str) -> str:
    for kind in ("scan", "inflate", "args", "spill"):
        if kind in name:
            return kind
    return "main" if name == "MainThread" else name


def _concurrency(scans: list[Span], t0: float, t1: float) -> float:
    return sum(s[3] - s[2] for s in scans) / max(t1 - t0, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--spans", action="store_true", help="print the last round's spans")
    parser.add_argument("--plain", action="store_true", help="no spans: wall and CPU only")
    args = parser.parse_args()
    if not args.plain:
        instrument()
    walls, cpus = [], []
    for _ in range(args.rounds):
        t0, t1, cpu = load_round(args.trace)
        walls.append(t1 - t0)
        cpus.append(cpu)
        if not args.plain:
            summary(list(SPANS), t0, t1)
    print(f"best wall {min(walls):.3f} s  best cpu {min(cpus):.3f} s  (of {args.rounds})")
    if args.spans:
        print_spans(22, 17)


def load_round(trace: str) -> tuple[float, float, float]:
    """One load of `trace` (its spans in SPANS), its line printed: when it started and
    ended (perf_counter) and its CPU seconds."""
    from kinetoscope.ingest.build import build_model

    SPANS.clear()
    cpu0, t0 = os.times(), time.perf_counter()
    model = build_model(trace)
    t1, cpu1 = time.perf_counter(), os.times()
    cpu = cpu1.user + cpu1.system - cpu0.user - cpu0.system
    print(f"round: wall {t1 - t0:.3f} s  cpu {cpu:.3f} s  rows {len(model)}")
    return t0, t1, cpu


def print_spans(thread_width: int, what_width: int) -> None:
    """The last round's spans, one a line, in the order they started."""
    t0 = min(s[2] for s in SPANS)
    for thread, what, start, end, cpu, switched in sorted(SPANS, key=lambda s: s[2]):
        print(
            f"{thread[:thread_width]:<{thread_width}} {what:<{what_width}} {start - t0:8.4f}"
            f" {end - t0:8.4f} cpu {cpu:.4f} switches {switched}"
        )


if __name__ == "__main__":
    main()
