#!/usr/bin/env python3
"""Small runs while a big trace loads cold: do they stay quick?

    .venv/bin/python bench/small_during_load.py BIG_TRACE SMALL_TRACE
        [--small-runs 8] [--requests 2000] [--concurrency 16]

A logdir is made in a temporary folder: one run holding BIG_TRACE (a bench tile, copied)
and `--small-runs` runs each holding SMALL_TRACE (copied). A real TensorBoard with the
product's plugin serves it, cold (an empty cache). The small runs are loaded and their
Overview answered first; then the big trace's load is started (its `status` asked) and,
at once, `--requests` requests of the small runs' `overview` and `status` go out,
`--concurrency` at a time, while the big trace loads. Printed as JSON: the p50/p99/max
of the small requests asked while the big trace was still loading, how many, and when
it was ready.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

from _http import free_port, get, get_json, path_with
from _load import PLUGIN, percentile

WORKER = "worker0.1700000000000.pt.trace.json.gz"
BIG = "zz_big"  # listed last: the server loads the first run's trace at start by itself


def _logdir(root: Path, big: Path, small: Path, runs: int) -> None:
    (root / BIG).mkdir(parents=True)
    shutil.copy(big, root / BIG / WORKER)  # a link out of the logdir is not read
    for i in range(runs):
        (root / f"small{i}").mkdir()
        shutil.copy(small, root / f"small{i}" / WORKER)


def _status(port: int, run: str) -> Optional[str]:
    _, doc = get_json(port, path_with(PLUGIN + "/status", {"run": run, "worker": "worker0"}), 30)
    return doc.get("state") if isinstance(doc, dict) else None


def _wait(port: int, run: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        if _status(port, run) == "ready":
            status, _, _ = get(port, path_with(PLUGIN + "/overview", {"run": run}), 120)
            if status == 200:
                return
        time.sleep(0.1)
    raise SystemExit(f"run {run} was not ready in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("big", type=Path)
    parser.add_argument("small", type=Path)
    parser.add_argument("--small-runs", type=int, default=8)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kinetoscope-bench-") as tmp:
        root, cache = Path(tmp) / "logs", Path(tmp) / "cache"
        _logdir(root, args.big, args.small, args.small_runs)
        port = free_port()
        env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(cache)}
        tensorboard = Path(sys.executable).parent / "tensorboard"
        cmd = [str(tensorboard), "--logdir", str(root), "--host", "127.0.0.1", "--port", str(port)]
        server = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 300
            for i in range(args.small_runs):
                _wait(port, f"small{i}", deadline)
            print(json.dumps(_measure(port, args), indent=1))
        finally:
            server.terminate()
            server.wait(30)


def _measure(port: int, args: argparse.Namespace) -> dict[str, object]:
    paths = [
        path_with(PLUGIN + f"/{route}", {"run": f"small{i}", "worker": "worker0"})
        for i in range(args.small_runs)
        for route in ("overview", "status")
    ]
    samples: list[tuple[Optional[int], float, bool]] = []
    lock = threading.Lock()
    loading = threading.Event()
    loading.set()
    issued = [0]
    started = time.monotonic()
    _status(port, BIG)  # starts its load

    def client() -> None:
        while True:
            with lock:
                if issued[0] >= args.requests:
                    return
                i = issued[0]
                issued[0] += 1
            busy = loading.is_set()  # asked while the big trace loads
            status, _, seconds = get(port, paths[i % len(paths)], 60)
            with lock:
                samples.append((status, seconds, busy))

    ended: list[object] = []

    def watch_big() -> None:
        state = _status(port, BIG)
        while state not in ("ready", "error"):
            time.sleep(0.2)
            state = _status(port, BIG)
        ended.extend([state, round(time.monotonic() - started, 2)])
        loading.clear()

    watcher = threading.Thread(target=watch_big, daemon=True)
    watcher.start()
    clients = [threading.Thread(target=client) for _ in range(args.concurrency)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    during = sorted(s for status, s, busy in samples if busy and status == 200)
    watcher.join(600)
    return {
        "requests": len(samples),
        "failed": sum(1 for status, _, _ in samples if status != 200),
        "during_load": len(during),
        "p50_s": percentile(during, 50),
        "p99_s": percentile(during, 99),
        "max_s": during[-1] if during else None,
        "big": ended[0] if ended else "still loading",
        "big_done_s": ended[1] if ended else None,
    }


if __name__ == "__main__":
    main()
