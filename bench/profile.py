#!/usr/bin/env python3
"""Where the time and memory of a cold ``kinetoscope report --format json --no-cache`` go.

    .venv/bin/python bench/profile.py TRACE [--no-reference]

Runs the report in this process, as the CLI runs it, with the product's functions wrapped
at run time (nothing in the product imports this tool) and prints one table: per pass of
the load (read + inflate, cutting the text, the scanner threads, column build, interning,
the args spill, the rest of the build), per default view's compute (each endpoint of
``kinetoscope.api.endpoints.VIEWS`` that the report computes, less the shared tables it
built first), and each shared derived table (``TraceModel.derived``) at its first build;
seconds, share of the wall time, and the peak RSS once the phase ends. ``gzip -dc`` (G)
and isal inflate alone are measured after, for reference.

After the table, the process's user and system CPU seconds (every thread) and minor page
faults, split at the load's end: what grows faster than the file may be system time (page
faults, the page cache), which the per-phase rows do not tell apart.

Peak RSS is the process's peak so far once the phase ends; RSS what it holds then. The
scanner threads' rows are timed in those threads (their peaks are read there too).

`--rounds N` then computes the views N more times on the loaded model (its derived tables
and the store's answers dropped each time) and prints each phase's least CPU seconds of
the thread that ran it: steadier than wall time on a busy machine, for before/after
comparisons of the analyses.

Threads: the scanner runs in threads beside the main one, so its row gives their CPU
seconds (summed over the threads), as do the args writer's row and the main thread's CPU
row of the load; the main thread's other rows of the load are wall seconds and add up to
the wall. The views are computed side by side, each timed in the thread that ran it
(KINETOSCOPE_VIEW_THREADS=1: one after another, their rows adding up to the wall time).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

START = time.perf_counter()
_LOCK = threading.Lock()
TIMES: dict[str, float] = defaultdict(float)
PEAK: dict[str, int] = {}
NOW: dict[str, int] = {}  # RSS (KiB) when the phase last ended
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
ORDER: list[str] = []
CLOCK: list[Callable[[], float]] = [time.perf_counter]  # the views' clock (--rounds: CPU)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def add(name: str, seconds: float) -> None:
    with _LOCK:
        if name not in TIMES:
            ORDER.append(name)
        TIMES[name] += seconds
        PEAK[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        NOW[name] = rss_kb()


def rss_kb() -> int:
    """This process's resident memory now, in KiB (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * _PAGE_KB
    except (OSError, ValueError, IndexError):
        return 0


def timed(
    name: str, fn: Callable[..., Any], clock: Callable[[], float] = time.perf_counter
) -> Callable[..., Any]:
    """`fn` with its time counted to `name`: wall time, or `time.thread_time` (the CPU
    time of the thread that runs it: what a scanning thread costs, not how long it
    waited for a core)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            add(name, clock() - t)

    return wrapper


def timed_generator(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A generator function whose time inside (each next and send) counts to `name`."""

    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        gen = fn(*args, **kwargs)
        sent: Any = None
        while True:
            t = time.perf_counter()
            try:
                item = gen.send(sent)
            except StopIteration as stop:
                add(name, time.perf_counter() - t)
                return stop.value
            add(name, time.perf_counter() - t)
            sent = yield item

    return wrapper


SPILL_WRITE = "load: args spill write (writer thread, CPU s)"


class _TimedSink:
    """An args spill's temporary file, its buffered writes timed (a big load's direct ones
    are `BlockWriter.write`'s)."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self.write = timed(SPILL_WRITE, f.write, time.thread_time)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


class _TimedTempfile:
    """`tempfile` as `build` uses it: the args spill's writes timed."""

    @staticmethod
    def TemporaryFile(*args: Any, **kwargs: Any) -> Any:  # noqa: N802
        return _TimedSink(tempfile.TemporaryFile(*args, **kwargs))

    gettempdir = staticmethod(tempfile.gettempdir)


def instrument() -> None:
    from kinetoscope.api import registry
    from kinetoscope.ingest import args_spill, build, column_sink, pieces, spill_blocks, text_blocks
    from kinetoscope.ingest.columns import Interner
    from kinetoscope.model.trace_model import TraceModel
    from kinetoscope.store import trace_store

    text_blocks._raw_text_blocks = timed_generator(  # type: ignore[assignment]
        "load: read + inflate", text_blocks._raw_text_blocks
    )
    inner_pieces = pieces.iter_event_pieces
    build.iter_event_pieces = timed_generator("load: slices (+ read + inflate)", inner_pieces)
    scan_label = "load: scan + chunk columns (scanner threads, CPU s)"
    build.scan_slice = timed(scan_label, build.scan_slice, time.thread_time)
    build.chunk_from_text = timed("load: scan (this thread)", build.chunk_from_text)
    Interner.codes = timed("load: interning (merge)", Interner.codes)  # type: ignore[method-assign]
    sink = column_sink.ColumnSink
    sink.append = timed("load: copy into the model's columns (merge)", sink.append)  # type: ignore[method-assign]
    spill = args_spill.ArgsSpill
    spill._take_one = timed("load: waits for the args spill (merge)", spill._take_one)  # type: ignore[method-assign]
    build.ModelBuilder.merge = timed("load: merge (all)", build.ModelBuilder.merge)  # type: ignore[method-assign]
    build.ModelBuilder.finish = timed("load: finish (model columns)", build.ModelBuilder.finish)  # type: ignore[method-assign]
    cpu = "load: main thread CPU s (build_model)"
    trace_store.build_model = timed(cpu, trace_store.build_model, time.thread_time)
    build.return_freed_memory = timed("load: malloc_trim", build.return_freed_memory)
    trace_store.trim_when_freed = timed("views: malloc_trim", trace_store.trim_when_freed)
    trace_store.build_model = timed("load: total (build_model)", trace_store.build_model)
    trace_store.build_model = _usage_after(trace_store.build_model)

    build.tempfile = _TimedTempfile  # type: ignore[assignment]
    blocks = spill_blocks.BlockWriter
    blocks.write = timed(SPILL_WRITE, blocks.write, time.thread_time)  # type: ignore[method-assign]

    local = threading.local()  # per thread (views run side by side): its open timed calls

    def exclusive(name: str, fn: Callable[[], Any]) -> Any:
        stack: list[list[float]] = local.__dict__.setdefault("stack", [])  # [start, nested s]
        stack.append([CLOCK[0](), 0.0])
        try:
            return fn()
        finally:
            start, nested = stack.pop()
            spent = CLOCK[0]() - start
            add(name, spent - nested)
            if stack:
                stack[-1][1] += spent

    original_derived = TraceModel.derived

    def derived(self: Any, key: str, make: Callable[[Any], Any]) -> Any:
        if key in self.__dict__:
            return original_derived(self, key, make)
        return exclusive(f"derived: {key}", lambda: original_derived(self, key, make))

    TraceModel.derived = derived  # type: ignore[method-assign]
    for entry in ("of_span", "of_traces", "of_pair", "of_context", "of_listing"):
        _time_entry(registry.Endpoint, entry, exclusive)
    _instrument_health_checks(exclusive)


# The process's resource usage (getrusage) when the report starts, when its load ends and
# when it ends: user and system CPU of every thread, and page faults, split at the load's
# end (a 4 GB trace's system time grew 6x from 1 GB, its user time 4x: seen only so).
USAGE: dict[str, resource.struct_rusage] = {}


def _usage_after(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        finally:
            USAGE.setdefault("load", resource.getrusage(resource.RUSAGE_SELF))

    return wrapper


def print_usage() -> None:
    start, end = USAGE.get("start"), USAGE.get("end")
    if start is None or end is None:
        return
    load = USAGE.get("load", end)
    print("\nprocess CPU s (every thread) and minor page faults:\n")
    for name, a, b in (("load", start, load), ("views and the rest", load, end)):
        user, system = b.ru_utime - a.ru_utime, b.ru_stime - a.ru_stime
        faults = b.ru_minflt - a.ru_minflt
        print(f"{name:<20} user {user:6.2f}  sys {system:6.2f}  faults {faults:>9}")


def _time_entry(
    endpoint: Any, entry: str, exclusive: Callable[[str, Callable[[], Any]], Any]
) -> None:
    """One of the endpoint's typed entries (`of_span`, ...) timed per view."""
    original = getattr(endpoint, entry)

    def timed(self: Any, *args: Any) -> Any:
        return exclusive(f"view: {self.name}", lambda: original(self, *args))

    setattr(endpoint, entry, timed)


def _instrument_health_checks(exclusive: Callable[[str, Callable[[], Any]], Any]) -> None:
    """Each health check (the `_health_findings` table is all of them) timed on its own."""
    from kinetoscope.analysis.core.health import view as health

    def wrap(check_id: str, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda model: exclusive(f"  health check: {check_id}", lambda: fn(model))

    health._CHECKS[:] = [(*c[:4], wrap(c[0], c[4])) for c in health._CHECKS]


def run_report(trace: str) -> float:
    from kinetoscope.cli.main import main

    with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
        rc = main(["report", trace, "--format", "json", "--no-cache"])
    if rc:
        raise SystemExit(f"kinetoscope report exited with {rc}")
    return time.perf_counter() - START


def views_again(trace: str, rounds: int) -> dict[str, float]:
    """The default report's views computed `rounds` more times on the loaded model (its
    derived tables and the store's answers dropped each time): per phase, the least CPU
    seconds of the thread that ran it (`time.thread_time`, steadier than wall time on a
    busy machine; views computed side by side are each timed in their own thread)."""
    from kinetoscope.api.report import report_run
    from kinetoscope.api.session import Session

    session = Session.for_command(cache=False)
    _, _, runs = session.list_target(trace)
    model = report_run(session, runs[0], None, None, None, []).model
    assert model is not None
    CLOCK[0] = time.thread_time
    best: dict[str, float] = {}
    for _ in range(rounds):
        for key in model.__dict__.pop("_derived_keys", []):
            del model.__dict__[key]
        for state in session.store.states.values():
            state.views.clear()
        TIMES.clear()
        ORDER.clear()
        start = time.process_time()
        report_run(session, runs[0], None, None, None, [])
        TIMES["all views (CPU, every thread)"] = time.process_time() - start
        for name, seconds in TIMES.items():
            best[name] = min(best.get(name, seconds), seconds)
    session.close()
    return best


def print_rounds(best: dict[str, float], rounds: int) -> None:
    print(f"\nthe views again on the loaded model, CPU s of their threads, best of {rounds}:\n")
    print(f"| {'phase':<46} | {'CPU s':>6} |")
    print(f"| {'-' * 46} | {'-' * 6} |")
    for name, seconds in best.items():
        if not name.startswith(("load:", "views: malloc")):
            print(f"| {name:<46} | {seconds:6.3f} |")


def gzip_seconds(path: str, runs: int = 3) -> float | None:
    gzip = shutil.which("gzip")
    if gzip is None or not path.endswith(".gz"):
        return None
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([gzip, "-dc", path], stdout=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def isal_seconds(path: str, runs: int = 3) -> float | None:
    try:
        from isal import isal_zlib
    except ImportError:
        return None
    if not path.endswith(".gz"):
        return None
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        inflater = isal_zlib.decompressobj(31)
        with open(path, "rb") as f:
            while block := f.read(4 << 20):
                data = block
                while data:
                    inflater.decompress(data, 1 << 20)
                    data = inflater.unconsumed_tail
        best = min(best, time.perf_counter() - t)
    return best


def print_table(
    trace: str, wall: float, imports: float, g: float | None, isal: float | None
) -> None:
    size = os.path.getsize(trace)
    print(f"trace: {Path(trace).name} ({size / 1e6:.1f} MB on disk)")
    print(f"wall (in-process report, imports included): {wall:.2f} s")
    if g:
        print(f"G (gzip -dc, best of 3): {g:.2f} s   wall/G: {wall / g:.2f}")
    if isal:
        print(
            f"isal inflate alone (best of 3): {isal:.2f} s" + (f" = {isal / g:.2f} G" if g else "")
        )
    print()
    print(f"| {'phase':<46} | {'s':>6} | {'share':>6} | {'peak RSS MB':>11} | {'RSS MB':>6} |")
    print(f"| {'-' * 46} | {'-' * 6} | {'-' * 6} | {'-' * 11} | {'-' * 6} |")
    rows: list[tuple[str, float, int | None, int | None]] = [("imports", imports, None, None)]
    rows += [(k, TIMES[k], PEAK[k], NOW[k]) for k in ORDER]
    for name, seconds, peak, now in rows:
        rss = f"{peak / 1024:.0f}" if peak else ""
        held = f"{now / 1024:.0f}" if now else ""
        print(f"| {name:<46} | {seconds:6.3f} | {seconds / wall:6.1%} | {rss:>11} | {held:>6} |")
    print(f"\npeak RSS at the end: {peak_mb():.0f} MB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("trace", help="a trace file (.json or .json.gz)")
    p.add_argument("--no-reference", action="store_true", help="skip gzip -dc and isal")
    p.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="then compute the views N more times on the loaded model, CPU per phase",
    )
    args = p.parse_args()
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo))
    import kinetoscope.api.endpoints  # noqa: F401 - the import cost, as the report pays it
    import kinetoscope.cli.main  # noqa: F401

    imports = time.perf_counter() - START
    instrument()
    USAGE["start"] = resource.getrusage(resource.RUSAGE_SELF)
    wall = run_report(args.trace)
    USAGE["end"] = resource.getrusage(resource.RUSAGE_SELF)
    g = isal = None
    if not args.no_reference:
        g, isal = gzip_seconds(args.trace), isal_seconds(args.trace)
    print_table(args.trace, wall, imports, g, isal)
    print_usage()
    if args.rounds:
        print_rounds(views_again(args.trace, args.rounds), args.rounds)


if __name__ == "__main__":
    main()
