#!/usr/bin/env python3
"""Each span view's weight in a cold ``kinetoscope report``: its seconds and how far it
raises the process's RSS above what it held before (its temporaries and the derived tables
it builds), to judge which views may run side by side (``KINETOSCOPE_VIEW_THREADS``)
within the memory bound (bench/README.md: peak RSS <= 0.6x the JSON size).

    .venv/bin/python bench/view_weights.py LOGDIR [--schedule 'a|b,c+d'] [--out FILE]

Runs ``report LOGDIR --format json --no-cache`` in this process, as the CLI runs it, with
the product's functions wrapped at run time, while a thread reads /proc/self/statm every
millisecond. Prints, per view (or per stage of `--schedule`): seconds, RSS before, the
peak while it ran, the rise and RSS after; then each derived table (``TraceModel.derived``)
at its build: seconds, the bytes it holds, RSS before and its peak. `--schedule` runs the
span views in stages split by ``|``; in a stage, lanes split by ``,`` run at once (the
first in the calling thread, each other in a thread of its own), the views of a lane
(``+``) one after another; views it does not name follow, one by one. The tables no view
left reads are let go after each view, as the report does. The report's JSON goes to
`--out` (compare schedules' answers with ``cmp``). Linux only (statm). Take wall numbers
at real-time priority (``chrt -f 10``) on a busy machine; RSS numbers need no such care.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI's entry sets it

START = time.perf_counter()
MB = 1e6
_PAGE = os.sysconf("SC_PAGE_SIZE")
SAMPLES: list[tuple[float, float]] = []  # (perf_counter, RSS MB)
STAGES: list[tuple[str, float, float]] = []  # (views, start, end)
BUILDS: list[tuple[str, float, float, float]] = []  # (key, start, end, MB held)


def sample_rss() -> None:
    with open("/proc/self/statm", "rb") as statm:
        while True:
            statm.seek(0)
            SAMPLES.append((time.perf_counter(), int(statm.read().split()[1]) * _PAGE / MB))
            time.sleep(0.001)


def rss_at(when: float) -> float:
    """The first RSS sample taken from `when` on (else the last one)."""
    return next((rss for at, rss in SAMPLES if at >= when), SAMPLES[-1][1] if SAMPLES else 0.0)


def rss_peak(start: float, end: float) -> float:
    """The highest RSS sampled from `start` to `end` (RSS at `start` if none was)."""
    return max([rss for at, rss in SAMPLES if start <= at <= end] or [rss_at(start)])


def wrap_derived_builds() -> None:
    """Record each derived table's build (`BUILDS`)."""
    from kinetoscope.model import trace_model
    from kinetoscope.model.derived_tables import held_nbytes

    derived = trace_model.TraceModel.derived

    def timed_derived(model: Any, key: str, build: Any) -> Any:
        def timed_build(of: Any) -> Any:
            start = time.perf_counter()
            built = build(of)
            BUILDS.append((key, start, time.perf_counter(), held_nbytes(built) / MB))
            return built

        return derived(model, key, timed_build)

    trace_model.TraceModel.derived = timed_derived  # type: ignore[method-assign]


def staged_answers(schedule: str) -> None:
    """Compute the span views in `schedule`'s stages (the module docstring)."""
    from kinetoscope.api import report

    def answers(calls: list[Any], names: list[str], later: list[str], model: Any) -> list[Any]:
        out: list[Any] = [None] * len(calls)
        answered: set[int] = set()
        lock = threading.Lock()

        def run_lane(lane: list[str]) -> None:
            for name in (name for name in lane if name in names):
                i = names.index(name)
                try:
                    out[i] = calls[i].ready()
                except Exception as exc:  # noqa: BLE001 - the report raises it in order
                    out[i] = exc
                with lock:
                    answered.add(i)
                    left = [n for j, n in enumerate(names) if j not in answered]
                if model is not None:
                    report._let_go_of_tables(model, [*left, *later])

        for stage in stages_of(schedule, names):
            start = time.perf_counter()
            with ThreadPoolExecutor(max(1, len(stage) - 1)) as pool:
                others = [pool.submit(run_lane, lane) for lane in stage[1:]]
                run_lane(stage[0])
                for other in others:
                    other.result()
            label = ",".join("+".join(lane) for lane in stage)
            STAGES.append((label, start, time.perf_counter()))
        return out

    report._answers = answers  # type: ignore[assignment]


def stages_of(schedule: str, names: list[str]) -> list[list[list[str]]]:
    """`schedule`'s stages (lanes of views), then the views it leaves out, one a stage."""
    stages = [[lane.split("+") for lane in stage.split(",")] for stage in schedule.split("|")]
    placed = {name for stage in stages for lane in stage for name in lane}
    return [stage for stage in stages if stage != [[""]]] + [
        [[name]] for name in names if name not in placed
    ]


def report_to(logdir: str, out: str) -> None:
    """The CLI's cold report of `logdir`, its JSON written to `out`."""
    from kinetoscope.__main__ import main

    sys.stdout.flush()
    saved = os.dup(1)
    written = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(written, 1)
    try:
        main(["report", logdir, "--format", "json", "--no-cache"])
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(written)


def print_weights() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"wall {time.perf_counter() - START:.3f} s, CPU {usage.ru_utime + usage.ru_stime:.3f}"
        f" s, peak RSS {usage.ru_maxrss * 1024 / MB:.0f} MB (RSS MB = 10^6 B below)"
    )
    print(f"{'views':44s} {'s':>6s} {'before':>6s} {'peak':>6s} {'rise':>5s} {'after':>6s}")
    for label, start, end in STAGES:
        before, peak = rss_at(start), rss_peak(start, end)
        print(
            f"{label[:44]:44s} {end - start:6.3f} {before:6.0f} {peak:6.0f}"
            f" {peak - before:5.0f} {rss_at(end):6.0f}"
        )
    print(f"\n{'derived table':58s} {'s':>6s} {'held':>5s} {'before':>6s} {'peak':>6s}")
    for key, start, end, held in BUILDS:
        print(
            f"{key[:58]:58s} {end - start:6.3f} {held:5.1f} {rss_at(start):6.0f}"
            f" {rss_peak(start, end):6.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("logdir")
    parser.add_argument("--schedule", default="", help="stages of span views (docstring)")
    parser.add_argument("--out", default=os.devnull, help="where the report's JSON goes")
    args = parser.parse_args()
    threading.Thread(target=sample_rss, daemon=True).start()
    wrap_derived_builds()
    staged_answers(args.schedule)
    report_to(args.logdir, args.out)
    print_weights()


if __name__ == "__main__":
    main()
