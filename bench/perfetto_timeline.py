#!/usr/bin/env python3
"""Where a Perfetto protobuf load's wall goes, thread by thread.

    .venv/bin/python bench/perfetto_timeline.py TRACE.pb.gz [--rounds 3] [--spans]

Loads TRACE (`build_model`, the load of a cold report, no views) `--rounds` times in this
process, as bench/load_timeline.py does for JSON, and prints per round: wall and CPU, each
step's count, wall and CPU seconds per thread (main: inflating, checking and preparing a
run, merging chunks; reading: the compiled reader's read and delivery, its waits for room),
and how the reading's wall splits: both threads working, only one, or neither (both
waiting: on the queue, the GIL or a core). A step whose CPU is far below its wall waited.
`--spans` prints the last round's spans one per line.

The product's functions are wrapped at run time (nothing in the product imports this).
Timings on a shared machine are noisy: compare CPU, and walls only on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from load_timeline import (
    SPANS,
    Span,
    _span,
    _switches,
    load_round,
    print_spans,
    spanned,
    spanned_generator,
)

# the reading thread's steps that work (its others wait, or hold the GIL briefly)
READING_STEPS = ("read", "deliver", "chunks")


def instrument() -> None:
    from kinetoscope.ingest import build, text_blocks
    from kinetoscope.ingest.perfetto import native

    text_blocks._raw_text_blocks = spanned_generator("inflate", text_blocks._raw_text_blocks)
    native._Pipeline._inflated = spanned("run ahead", native._Pipeline._inflated)
    native.chunk_of = spanned("chunk_of", native.chunk_of)
    native._Load.read_top = spanned("read_top", native._Load.read_top)
    native._read_file = spanned("read file", native._read_file)
    native.ThreadPoolExecutor.submit = spanned("submit", native.ThreadPoolExecutor.submit)
    build.ModelBuilder.merge = spanned("builder.merge", build.ModelBuilder.merge)
    build.ModelBuilder.finish = spanned("builder.finish", build.ModelBuilder.finish)
    native._Cut.get = _waiting("wait for a message", native._Cut.get)
    native._Cut.put = _waiting("wait for room", native._Cut.put)
    native.native_module = _spanned_module(native.native_module())


def _waiting(what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` kept as a span only where it took more than 50 us (it waited)."""

    def wrapper(*args: Any) -> Any:
        start, cpu, switches = time.perf_counter(), time.thread_time(), _switches()
        try:
            return fn(*args)
        finally:
            if time.perf_counter() - start > 50e-6:
                _span(what, start, time.thread_time() - cpu, switches)

    return wrapper


def _spanned_module(module: Any) -> Callable[[], Any]:
    """The compiled reader's module with its Reader's steps and the checks as spans."""

    class Reader:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._reader = module.Reader(*args, **kwargs)
            for name in ("read", "deliver", "chunks"):
                setattr(self, name, spanned(name, getattr(self._reader, name)))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._reader, name)

    class Module:
        def __getattr__(self, name: str) -> Any:
            return getattr(module, name)

    spanned_module = Module()
    spanned_module.Reader = Reader
    for name in ("prepare_packets", "check_packets"):
        setattr(spanned_module, name, spanned("check+prepare", getattr(module, name)))
    return lambda: spanned_module


def summary(spans: list[Span]) -> None:
    busy: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for thread, what, start, end, cpu, _ in spans:
        row = busy[("main" if thread == "MainThread" else "reading", what)]
        row[0] += end - start
        row[1] += cpu
        row[2] += 1
    for (thread, what), (wall, cpu, n) in sorted(busy.items()):
        print(f"  {thread:>7} {what:<20} n={n:<5.0f} wall {wall:.3f}  cpu {cpu:.3f}")
    read = [(s[2], s[3]) for s in spans if s[1] == "read file"]
    if read:
        _split(spans, read[0])


def _split(spans: list[Span], window: tuple[float, float]) -> None:
    """How the read's wall splits between the two threads' work."""
    main_waits = _union([(s[2], s[3]) for s in spans if s[1] == "wait for a message"])
    main = _minus([window], main_waits)
    reading = _union(
        [(s[2], s[3]) for s in spans if s[0] != "MainThread" and s[1] in READING_STEPS]
    )
    both = _length(_minus(main, _minus(main, reading)))
    only_main, only_reading = _length(_minus(main, reading)), _length(_minus(reading, main))
    neither = window[1] - window[0] - both - only_main - only_reading
    print(
        f"  read {window[1] - window[0]:.3f} s: both working {both:.3f}, only main "
        f"{only_main:.3f}, only reading {only_reading:.3f}, neither {neither:.3f}"
    )


def _union(parts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for start, end in sorted(parts):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _minus(
    parts: list[tuple[float, float]], cut: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """`parts` (disjoint) without the time of `cut` (disjoint, sorted)."""
    out = []
    for start, end in parts:
        at = start
        for cut_start, cut_end in cut:
            if cut_end <= at or cut_start >= end:
                continue
            if cut_start > at:
                out.append((at, cut_start))
            at = max(at, cut_end)
        if at < end:
            out.append((at, end))
    return out


def _length(parts: list[tuple[float, float]]) -> float:
    return sum(end - start for start, end in parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spans", action="store_true", help="print the last round's spans")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI sets it
    instrument()
    for _ in range(args.rounds):
        load_round(args.trace)
        summary(list(SPANS))
    if args.spans:
        print_spans(20, 20)


if __name__ == "__main__":
    main()
