#!/usr/bin/env python3
"""What each view costs in memory beside the model it reads: the numbers behind
`kinetoscope/data/view_costs.json`, which the server's view budget admits jobs by.

    .venv/bin/python bench/view_costs.py LOGDIR [--views a,b] [--param whatif:op=NAME]

LOGDIR holds one run of one trace file (a bench tile). The trace is loaded once, through
the CLI's door (`Session.for_command`, no cache); then each view is asked in turn, every
other view's answer and every derived table let go between them, while a thread reads
/proc/self/statm every millisecond. Printed per view: seconds, the RSS rise above what
the process held before it, and that rise over the model's bytes (`columns_nbytes`), the
ratio the budget multiplies. Span views see one model; run views (`run_*`, `distributed`)
see the run; `diff` compares the first worker with the last (itself, in a one-trace run:
two models' worth). Linux only (statm).
"""

from __future__ import annotations

import argparse
import gc
import os
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

_PAGE = os.sysconf("SC_PAGE_SIZE")
_SAMPLES: list[float] = []
_SAMPLING = threading.Event()


def _sample() -> None:
    with open("/proc/self/statm", "rb") as statm:
        while True:
            if _SAMPLING.is_set():
                statm.seek(0)
                _SAMPLES.append(int(statm.read().split()[1]) * _PAGE / 1e6)
            time.sleep(0.001)


def _rss_mb() -> float:
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * _PAGE / 1e6


def _params(specs: list[str]) -> dict[str, dict[str, str]]:
    asked: dict[str, dict[str, str]] = {}
    for spec in specs:
        view, _, pair = spec.partition(":")
        key, _, value = pair.partition("=")
        asked.setdefault(view, {})[key] = value
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir")
    parser.add_argument("--views", default="")
    parser.add_argument("--param", action="append", default=[])
    args = parser.parse_args()

    from kinetoscope.api.dispatch import Dispatch
    from kinetoscope.api.endpoints import ENDPOINTS, RUN_VIEWS, VIEWS
    from kinetoscope.api.session import Session
    from kinetoscope.model.derived_tables import forget_derived
    from kinetoscope.model.trace_model import columns_nbytes

    session = Session.for_command(cache=False)
    _, _, runs = session.list_target(args.logdir)
    run = runs[0]
    names = {"run": run.name}
    Dispatch(VIEWS["overview"], session, names, {}).ready()
    path = run.workers[0].spans[0].path
    model = session.store.model(path)
    span_mb = columns_nbytes(model) / 1e6
    run_mb = 0.0
    for worker in run.workers:
        Dispatch(VIEWS["overview"], session, {**names, "worker": worker.name}, {}).ready()
        run_mb += columns_nbytes(session.store.model(worker.spans[0].path)) / 1e6
    print(f"model: {len(model):,} events, {span_mb:.1f} MB; the run's {run_mb:.1f} MB")
    chosen = [v for v in args.views.split(",") if v] or [*VIEWS, "diff", *RUN_VIEWS]
    pair = {**names, "worker": run.workers[0].name, "target_run": run.name}
    pair["target_worker"] = run.workers[-1].name
    params = _params(args.param)
    threading.Thread(target=_sample, daemon=True).start()
    print(f"{'view':<20} {'s':>7} {'rise MB':>8} {'× model':>8}")
    for name in chosen:
        endpoint = VIEWS.get(name) or RUN_VIEWS.get(name) or ENDPOINTS.get(name)
        if endpoint is None or not endpoint.supports(run if name in RUN_VIEWS else model):
            continue
        for worker in run.workers:
            forget_derived(session.store.model(worker.spans[0].path), ())
            session.store.state_for(worker.spans[0].path).views.clear()
        gc.collect()
        before = _rss_mb()
        _SAMPLES.clear()
        _SAMPLING.set()
        start = time.perf_counter()
        try:
            asked = pair if name == "diff" else names
            Dispatch(endpoint, session, asked, params.get(name, {})).ready()
        except Exception as exc:  # noqa: BLE001 - a view this trace cannot answer
            print(f"{name:<20} {type(exc).__name__}: {str(exc)[:80]}")
            _SAMPLING.clear()
            continue
        seconds = time.perf_counter() - start
        _SAMPLING.clear()
        rise = max(_SAMPLES or [before]) - before
        model_mb = {"diff": 2 * span_mb}.get(name, span_mb if name in VIEWS else run_mb)
        print(f"{name:<20} {seconds:7.2f} {rise:8.0f} {rise / model_mb:8.2f}")
    session.close()


if __name__ == "__main__":
    main()
