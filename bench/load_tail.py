#!/usr/bin/env python3
"""Where the load mode's latency goes: each request's client latency against the time the
server spent on it once its thread ran, the GC's pauses, and the server's stalls.

    .venv/bin/python bench/load_tail.py TRACE [--requests 2000] [--concurrency 16]
        [--gzip] [--routes tracks,trace,flows,range_summary] [--cache DIR]

TRACE is a bench tile (`traces/<key>/logdir/<key>/worker0...json.gz`); its logdir is
served by TensorBoard from the product's venv, on 127.0.0.1, through `_tail_probe.py`.
The requests are the load mode's (`_load`: the same windows, the same order, closed
loop), fired once the trace view's structures are built. `--cache` is the plugin's
cache (default `bench/scratch/tail-cache`: the first run fills it, later ones are warm).

Printed per route: client p50/p95/p99; the server's own time (`handle`: from reading the
request to its last byte written) and thread CPU; `queued`: from the client's start to
the server's handle (connect, accept, the request thread's start: each of these waits
for the GIL in a busy server). Then the server's CPU a request (all its threads, from
/proc), the GC's pauses by generation, the 50 ms bins in which the server finished
nothing, and the slowest 1 % with what overlapped them. Timings on a shared machine are
noisy: compare runs taken in turn, and the CPU columns.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

import _load
from _http import free_port, get
from _traces import TraceFile

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BIN_S = 0.05
# (route, path, client start, client end, status)
Sample = tuple[str, str, float, float, Optional[int]]


class _Child:
    """What `_load._wait_until_ready` asks of the server's process."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def poll(self) -> Optional[int]:
        return self.proc.poll()


def tile(trace: Path) -> TraceFile:
    logdir = trace.parent.parent
    key = logdir.name
    return TraceFile(
        label=key, key=key, src="", tiles=0, path=trace, logdir=logdir, run=key,
        worker="worker0", span="", hta_dir=logdir, json_bytes=0, gz_bytes=0,
        make_seconds=None, reused=True,
    )  # fmt: skip


def process_cpu(pid: int) -> float:
    """User plus system CPU seconds of `pid` (every thread, those ended included)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fire(
    port: int, paths: dict[str, list[str]], total: int, concurrency: int, gzip: bool
) -> list[Sample]:
    """The load mode's requests (`_load._fire`'s order), each kept with its times."""
    headers = _load.BROWSER_HEADERS if gzip else None
    routes = list(paths)
    samples: list[Sample] = []
    lock = threading.Lock()
    issued = [0]

    def worker_loop() -> None:
        while True:
            with lock:
                if issued[0] >= total:
                    return
                i = issued[0]
                issued[0] += 1
            route = routes[i % len(routes)]
            path = paths[route][(i // len(routes)) % len(paths[route])]
            status, _, secs = get(port, path, 30.0, headers)
            end = time.perf_counter()
            with lock:
                samples.append((route, path, end - secs, end, status))

    threads = [threading.Thread(target=worker_loop, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return samples


def percentile(values: list[float], q: float) -> float:
    return _load.percentile(sorted(values), q) or 0.0


def served_as(samples: list[Sample], requests: list[list[Any]]) -> list[Optional[list[Any]]]:
    """Each sample's request as the server kept it: the same path, the nearest start (a
    windowed route's paths are each asked once; `tracks`' the same each time)."""
    by_path: dict[str, list[list[Any]]] = {}
    for r in requests:
        by_path.setdefault(r[0], []).append(r)
    return [
        min(by_path.get(s[1], []), key=lambda r: abs(r[1] - s[2]), default=None) for s in samples
    ]


def route_table(samples: list[Sample], served: list[Optional[list[Any]]]) -> None:
    print(f"{'route':14s} {'n':>4s}  client p50/p95/p99 ms   handle p50/p99   "
          "cpu p50/p99   queued p50/p99")  # fmt: skip
    for route in dict.fromkeys(s[0] for s in samples):
        mine = [(s, r) for s, r in zip(samples, served) if s[0] == route]
        lat = [(s[3] - s[2]) * 1e3 for s, _ in mine]
        seen = [(s, r) for s, r in mine if r is not None]
        handle = [(r[2] - r[1]) * 1e3 for _, r in seen]
        cpu = [r[3] * 1e3 for _, r in seen]
        queued = [(r[1] - s[2]) * 1e3 for s, r in seen]
        print(
            f"{route:14s} {len(lat):4d}  {percentile(lat, 50):6.1f} {percentile(lat, 95):6.1f}"
            f" {percentile(lat, 99):6.1f}   {percentile(handle, 50):5.1f} "
            f"{percentile(handle, 99):6.1f}   {percentile(cpu, 50):4.2f} {percentile(cpu, 99):5.2f}"
            f"   {percentile(queued, 50):5.1f} {percentile(queued, 99):6.1f}"
            + ("  (one path: nearest start)" if len({s[1] for s, _ in mine}) == 1 else "")
        )


def gc_pauses(collections: list[list[Any]], t0: float, t1: float) -> str:
    by_gen: dict[int, list[float]] = {}
    for gen, start, end in collections:
        if t0 <= start <= t1:
            by_gen.setdefault(int(gen), []).append((end - start) * 1e3)
    return ", ".join(
        f"gen {g}: {len(v)} ({sum(v):.1f} ms, max {max(v):.1f})" for g, v in sorted(by_gen.items())
    )


def stalls(requests: list[list[Any]], t0: float, wall: float) -> list[float]:
    """Starts (s from t0) of the BIN_S bins in which the server finished no request."""
    done = {int((r[2] - t0) / BIN_S) for r in requests if r[2] >= t0}
    return [i * BIN_S for i in range(int(wall / BIN_S)) if i not in done]


def slowest(
    samples: list[Sample], served: list[Optional[list[Any]]], collections: list[list[Any]]
) -> None:
    rows = sorted(zip(samples, served), key=lambda p: p[0][2] - p[0][3])
    print("slowest 1 %: route, client ms, queued ms, handle ms, cpu ms, GC pauses over it")
    for s, r in rows[: max(1, len(rows) // 100)]:
        over = [f"gen{g}:{(e - b) * 1e3:.1f}" for g, b, e in collections if e > s[2] and b < s[3]]
        queued, handle, cpu = (
            ((r[1] - s[2]) * 1e3, (r[2] - r[1]) * 1e3, r[3] * 1e3) if r else (0, 0, 0)
        )
        print(
            f"  {s[0]:14s} {(s[3] - s[2]) * 1e3:6.1f} {queued:6.1f} {handle:6.1f} {cpu:5.2f}"
            f"  {' '.join(over[:6])}"
        )


def serve(trace: Path, port: int, cache: Path, out: Path, log: Path) -> subprocess.Popen[bytes]:
    """TensorBoard with the probe, serving the tile's logdir from the product's venv."""
    cache.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KINETOSCOPE_CACHE_DIR": str(cache), "TAIL_PROBE_OUT": str(out)}
    python = REPO / ".venv" / "bin" / "python"
    cmd = [str(python if python.exists() else sys.executable), str(HERE / "_tail_probe.py")]
    cmd += ["--logdir", str(trace.parent.parent), "--port", str(port), "--host", "127.0.0.1"]
    with open(log, "wb") as err:
        return subprocess.Popen(cmd, env=env, stdout=err, stderr=err, stdin=subprocess.DEVNULL)


def measure(args: argparse.Namespace) -> tuple[list[Sample], dict[str, Any], float, float, float]:
    """Start, wait until built, fire; (samples, probe's record, t0, wall s, server CPU s)."""
    trace = Path(args.trace).resolve()
    scratch = HERE / "scratch"
    scratch.mkdir(exist_ok=True)
    out, port = scratch / "tail-probe.json", free_port()
    proc = serve(trace, port, Path(args.cache), out, scratch / "tail-tensorboard.log")
    try:
        tf = tile(trace)
        error, names = _load._wait_until_ready(_Child(proc), port, tf, 600.0, {})  # type: ignore[arg-type]
        if error is not None:
            raise SystemExit(f"load_tail: {error}")
        routes = args.routes.split(",")
        paths = _load._route_paths(port, routes, *names, args.requests)
        _load._wait_built(port, paths)
        cpu, t0 = process_cpu(proc.pid), time.perf_counter()
        samples = fire(port, paths, args.requests, args.concurrency, args.gzip)
        wall, cpu = time.perf_counter() - t0, process_cpu(proc.pid) - cpu
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    with open(out, encoding="utf-8") as f:
        return samples, json.load(f), t0, wall, cpu


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--gzip", action="store_true", help="accept gzip, as a browser does")
    p.add_argument("--routes", default="tracks,trace,flows,range_summary")
    p.add_argument("--cache", default=str(HERE / "scratch" / "tail-cache"))
    args = p.parse_args(argv)
    samples, probe, t0, wall, cpu = measure(args)
    served = served_as(samples, probe["requests"])
    n = len(samples)
    busy = os.getloadavg()[0]
    print(f"{n} requests in {wall:.2f} s, {args.concurrency} at a time; server CPU "
          f"{cpu * 1e3 / max(1, n):.2f} ms a request; load average {busy:.1f}")  # fmt: skip
    route_table(samples, served)
    print("GC pauses:", gc_pauses(probe["collections"], t0, t0 + wall) or "none")
    idle = stalls(probe["requests"], t0, wall)
    print(f"{BIN_S * 1e3:.0f} ms bins with no request finished: {len(idle)}",
          " ".join(f"{s:.2f}" for s in idle[:20]))  # fmt: skip
    slowest(samples, served, probe["collections"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
