#!/usr/bin/env python3
"""Every route at once, cold: does the server stay up and within its memory?

    .venv/bin/python bench/all_routes.py LOGDIR [--budget-mb MB] [--server-mb MB] [--timeout 900]

LOGDIR holds one run (a bench tile, or two, as the run's workers). A real TensorBoard with
the product's plugin serves it on 127.0.0.1, with an empty cache. Once the first worker's
status is ready, every JSON route of docs/http_api.md is asked at once (one client thread
a route, the critical-path ones and the run-level jobs included, each asking again while
it answers 202), while another client asks `runs` and `status` every 50 ms: the small
requests a user's other tabs make. Printed: each route's final HTTP status and seconds;
the server's peak RSS (VmHWM) against its views' budget (`--budget-mb`, passed as
KINETOSCOPE_VIEW_MEMORY_MB; default the product's) or against the server's one number
(`--server-mb`, passed as KINETOSCOPE_SERVER_MEMORY_MB); failed answers (5xx) and refused
connections, which must both be 0; and the small requests' p50/p99.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

from _http import free_port, get, get_json, path_with
from _load import PLUGIN, doc_routes, percentile

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RUN_ROUTES = {
    "workers",
    "distributed",
    "compile",
    "run_critical_path",
    "run_whatif",
    "run_top_gains",
    "memory_snapshot",
}
SKIPPED = {"runs", "trend"}  # the logdir's: `runs` is the small client's; trend needs 2 runs
CHANGE = {"op": "aten::conv2d", "factor": "0.5"}  # a what-if every V100 tile can answer


def _params(
    route: str, run: str, worker: str, span: str, extent: tuple[float, float]
) -> dict[str, str]:
    if route in RUN_ROUTES:
        return {"run": run, **(CHANGE if route == "run_whatif" else {})}
    names = {"run": run, "worker": worker, "span": span}
    extra: dict[str, dict[str, str]] = {
        "whatif": CHANGE,
        "callstacks": {"name": "aten::conv2d"},
        "diff": {"target_run": run, "target_worker": worker, "target_span": span},
        "trace": {"t0": repr(extent[0]), "t1": repr(extent[1])},
        "flows": {"t0": repr(extent[0]), "t1": repr(extent[1])},
        "range_summary": {"t0": repr(extent[0]), "t1": repr(extent[1])},
        "search": {"q": "conv"},
        "event": {"row": "0"},
    }
    return {**names, **extra.get(route, {})}


def _peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _ask_until_answered(port: int, path: str, timeout: float) -> tuple[Optional[int], float, int]:
    """(final status, seconds, 202s seen): asked again while it answers 202."""
    started = time.monotonic()
    waits = 0
    while True:
        status, _, _ = get(port, path, 120)
        if status != 202 or time.monotonic() - started > timeout:
            return status, time.monotonic() - started, waits
        waits += 1
        time.sleep(0.5)


def _small_requests(
    port: int, paths: list[str], stop: threading.Event, out: list[tuple[Optional[int], float]]
) -> None:
    i = 0
    while not stop.is_set():
        status, _, seconds = get(port, paths[i % len(paths)], 30)
        out.append((status, seconds))
        i += 1
        stop.wait(0.05)


def _server(
    logdir: Path, port: int, budget_mb: Optional[float], server_mb: Optional[float], cache: str
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": cache}
    if budget_mb is not None:
        env["KINETOSCOPE_VIEW_MEMORY_MB"] = str(budget_mb)
    if server_mb is not None:
        env["KINETOSCOPE_SERVER_MEMORY_MB"] = str(server_mb)
    tensorboard = Path(sys.executable).parent / "tensorboard"
    cmd = [str(tensorboard), "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _ready(port: int, deadline: float) -> tuple[str, str, str]:
    while time.monotonic() < deadline:
        status, doc = get_json(port, PLUGIN + "/runs", 30)
        runs = doc.get("runs") if status == 200 and isinstance(doc, dict) else None
        if runs and runs[0].get("workers"):
            run = runs[0]
            worker = run["workers"][0]
            names = {
                "run": run["name"],
                "worker": worker["name"],
                "span": worker["spans"][0]["name"],
            }
            status, doc = get_json(port, path_with(PLUGIN + "/status", names), 30)
            if status == 200 and isinstance(doc, dict) and doc.get("state") == "ready":
                return names["run"], names["worker"], names["span"]
            if status == 200 and isinstance(doc, dict) and doc.get("state") == "error":
                raise SystemExit(f"the trace did not load: {doc['error']['message']}")
        time.sleep(0.2)
    raise SystemExit("the trace was not ready in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir", type=Path)
    parser.add_argument("--budget-mb", type=float, default=None)
    parser.add_argument("--server-mb", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="kinetoscope-bench-cache-") as cache:
        server = _server(args.logdir, port, args.budget_mb, args.server_mb, cache)
        try:
            result = _measure(port, server.pid, args.timeout)
        finally:
            server.terminate()
            server.wait(30)
    result["budget_mb"] = args.budget_mb
    result["server_mb"] = args.server_mb
    print(json.dumps(result, indent=1))


def _measure(port: int, pid: int, timeout: float) -> dict[str, Any]:
    started = time.monotonic()
    run, worker, span = _ready(port, started + timeout)
    ready_s = time.monotonic() - started
    status, doc = get_json(port, path_with(PLUGIN + "/tracks", {"run": run, "worker": worker}), 120)
    extent = (
        (float(doc.get("start_us", 0)), float(doc.get("end_us", 1)))
        if isinstance(doc, dict)
        else (0.0, 1.0)
    )
    routes = [r for r in doc_routes(REPO / "docs" / "http_api.md") if r not in SKIPPED]
    answers: dict[str, tuple[Optional[int], float, int]] = {}
    small: list[tuple[Optional[int], float]] = []
    stop = threading.Event()
    names = {"run": run, "worker": worker, "span": span}
    small_paths = [PLUGIN + "/runs", path_with(PLUGIN + "/status", names)]
    watcher = threading.Thread(target=_small_requests, args=(port, small_paths, stop, small))
    watcher.start()

    def ask(route: str) -> None:
        path = path_with(f"{PLUGIN}/{route}", _params(route, run, worker, span, extent))
        answers[route] = _ask_until_answered(port, path, timeout)

    asked = time.monotonic()
    threads = [threading.Thread(target=ask, args=(r,)) for r in routes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    all_s = time.monotonic() - asked
    stop.set()
    watcher.join()
    latencies = sorted(seconds for status, seconds in small if status is not None)
    return {
        "ready_s": round(ready_s, 2),
        "all_routes_s": round(all_s, 2),
        "routes": {
            r: {"status": s, "seconds": round(t, 2), "waits": w} for r, (s, t, w) in answers.items()
        },
        "failed": sorted(r for r, (s, _, _) in answers.items() if s is None or s >= 500),
        "refused": sum(1 for status, _ in small if status is None),
        "small_requests": len(small),
        "small_p50_s": percentile(latencies, 50),
        "small_p99_s": percentile(latencies, 99),
        "server_peak_rss_mb": round(_peak_rss_mb(pid)),
        "slowest": max(answers, key=lambda r: answers[r][1]) if answers else None,
    }


if __name__ == "__main__":
    main()
