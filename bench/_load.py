"""Route latency under load: a real TensorBoard with the product's plugin, on 127.0.0.1 only.

The routes are read from ``docs/http_api.md`` (every ``### `name``` heading except
``static/*`` and ``download``, which do not answer JSON). Requests are bounded in count,
concurrency and time, and go to the loopback address only.

The trace view's windowed routes (``trace``, ``flows``, ``range_summary``) ask a different
window each time, as a user zooming and panning does: the same window asked again is the
answer kept from before, which measures nothing of the query. Window ``i`` of a route is
the same in every run (a seeded sequence over the trace's extent from ``tracks``); the first
is the whole trace.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

from _http import free_port, get, get_json, path_with
from _proc import Child
from _traces import TraceFile

PLUGIN = "/data/plugin/kinetoscope"
HEADING = re.compile(r"^###\s+`([^`]+)`\s*$")
NOT_JSON = ("static", "download")
WINDOWED = ("trace", "flows", "range_summary")
# What a browser sends (`--load-gzip`): the plugin then answers gzip, compressed at its cost.
BROWSER_HEADERS = {"Accept-Encoding": "gzip, deflate, br"}
# Window widths asked, as fractions of the trace's extent: from about one kernel of a 4 GB
# trace (1e-6) to all of it, uniform in log scale.
ZOOM_DECADES = 6


def doc_routes(doc: Path) -> list[str]:
    """JSON route names documented in the HTTP API doc, in document order."""
    routes: list[str] = []
    try:
        text = doc.read_text(encoding="utf-8")
    except OSError:
        return ["runs", "status", "overview"]
    for line in text.splitlines():
        m = HEADING.match(line.strip())
        if not m:
            continue
        name = m.group(1).strip().lstrip("/")
        if name.split("/")[0].split("*")[0] in NOT_JSON or name in routes:
            continue
        routes.append(name)
    return routes or ["runs", "status", "overview"]


def route_params(route: str, run: str, worker: str, span: str) -> dict[str, str]:
    if route == "runs":
        return {}
    if route == "workers":
        return {"run": run}
    if route == "spans":
        return {"run": run, "worker": worker}
    return {"run": run, "worker": worker, "span": span}


def window_sequence(
    start_us: float, end_us: float, count: int, seed: int = 0
) -> list[tuple[float, float]]:
    """`count` windows [t0, t1) over the extent: the whole of it first, then widths uniform
    in log scale over ZOOM_DECADES decades at uniform positions."""
    rng = random.Random(seed)
    span = max(end_us - start_us, 1e-3)
    out = [(start_us, end_us + 1.0)]
    while len(out) < count:
        width = span * 10.0 ** rng.uniform(-ZOOM_DECADES, 0.0)
        t0 = start_us + rng.uniform(0.0, span - width)
        out.append((t0, t0 + width))
    return out


def percentile(sorted_values: list[float], q: float) -> Optional[float]:
    """Nearest-rank percentile of an ascending list (None when empty)."""
    if not sorted_values:
        return None
    rank = max(1, int(-(-q * len(sorted_values) // 100)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _discover(doc: Any, tf: TraceFile) -> tuple[str, str, str]:
    """Run, worker and span of the benchmark file as the plugin names them."""
    run, worker, span = tf.run, tf.worker, tf.span
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        return run, worker, span
    chosen = next((r for r in runs if isinstance(r, dict) and r.get("name") == tf.run), runs[0])
    if not isinstance(chosen, dict):
        return run, worker, span
    run = str(chosen.get("name", run))
    workers = chosen.get("workers")
    if isinstance(workers, list) and workers and isinstance(workers[0], dict):
        worker = str(workers[0].get("name", worker))
        spans = workers[0].get("spans")
        if isinstance(spans, list) and spans and isinstance(spans[0], dict):
            span = str(spans[0].get("name", span))
    return run, worker, span


def run_load(
    tensorboard: Path,
    tf: TraceFile,
    work: Path,
    port: int,
    routes: list[str],
    *,
    requests: int,
    concurrency: int,
    duration: float,
    ready_timeout: float,
    rss_cap: int,
    cache_dir: Optional[Path] = None,
    accept_gzip: bool = False,
) -> dict[str, Any]:
    """Start TensorBoard, wait until the file is ready, fire the requests, report latencies.
    `cache_dir`: the plugin's KINETOSCOPE_CACHE_DIR (empty: a cold start; filled by an
    earlier run: a warm one); None keeps the environment's. `accept_gzip`: the requests
    say they accept gzip, as a browser's do (`BROWSER_HEADERS`)."""
    result: dict[str, Any] = {
        "file": tf.label,
        "routes": routes,
        "requests": requests,
        "concurrency": concurrency,
        "max_seconds": duration,
        "accept_gzip": accept_gzip,
    }
    if not tensorboard.exists():
        result["error"] = f"no tensorboard in the product venv ({tensorboard.name} missing)"
        return result
    env = _cache_env(cache_dir, result)
    tag = "cold" if not result.get("cache_entries_before") else "warm"
    logf = work / "logs" / f"{tf.key}-load-{tag}-tensorboard.log"
    start = _starter(tensorboard, tf, work, logf, env, ready_timeout + duration + 120, rss_cap)
    child = start(port)
    try:
        child, port, error, (run, worker, span) = _ready_server(
            child, start, port, tf, ready_timeout, result, logf
        )
        result.update(run=run, worker=worker, span=span)
        if error is None:
            paths = _route_paths(port, routes, run, worker, span, requests)
            result["built_s"] = _wait_built(port, paths)
            result["per_route"], result["seconds"] = _fire(
                port, paths, requests, concurrency, duration, accept_gzip
            )
    finally:
        outcome = child.stop()
    result["tensorboard_peak_rss_bytes"] = outcome.peak_rss_bytes
    result["log"] = str(logf)
    if error is not None:
        result["error"] = error
        result["stderr_tail"] = outcome.stderr_tail[-600:]
    return result


# A port free when picked may be taken before TensorBoard binds it: after a load run's
# thousands of connections the kernel hands out its ephemeral ports fast (seen once in
# the warm run right after a cold one: "could not bind to port ..., it was already in use").
BIND_TRIES = 3


def _starter(
    tensorboard: Path,
    tf: TraceFile,
    work: Path,
    logf: Path,
    env: Optional[dict[str, str]],
    timeout: float,
    rss_cap: int,
) -> Callable[[int], Child]:
    """What starts TensorBoard on the file's logdir on a given port."""
    cmd = [str(tensorboard), "--logdir", str(tf.logdir), "--host", "127.0.0.1", "--port"]

    def start(port: int) -> Child:
        return Child(
            [*cmd, str(port)],
            timeout=timeout,
            rss_cap_bytes=rss_cap,
            env=env,
            stderr=logf,
            cwd=work,
        )

    return start


def _ready_server(
    child: Child,
    start: Callable[[int], Child],
    port: int,
    tf: TraceFile,
    ready_timeout: float,
    result: dict[str, Any],
    logf: Path,
) -> tuple[Child, int, Optional[str], tuple[str, str, str]]:
    """`child` (TensorBoard on `port`) waited for until the file is ready; where it could
    not bind its port, `start` again on another, BIND_TRIES times in all. The server
    running (stopped by the caller), its port, the wait's error and names."""
    error, names = _wait_until_ready(child, port, tf, ready_timeout, result)
    for _ in range(BIND_TRIES - 1):
        if error is None or not _bind_failed(logf):
            break
        child.stop()
        port = free_port()
        child = start(port)
        error, names = _wait_until_ready(child, port, tf, ready_timeout, result)
    return child, port, error, names


def _bind_failed(logf: Path) -> bool:
    try:
        return "could not bind to port" in logf.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _cache_env(cache_dir: Optional[Path], result: dict[str, Any]) -> Optional[dict[str, str]]:
    """TensorBoard's environment with `cache_dir` as the plugin's cache (None: the
    environment's own); its entries counted into `result` (0: a cold start)."""
    if cache_dir is None:
        return None
    cache_dir.mkdir(parents=True, exist_ok=True)
    result["cache_entries_before"] = sum(1 for _ in cache_dir.iterdir())
    return {**os.environ, "KINETOSCOPE_CACHE_DIR": str(cache_dir)}


def _route_paths(
    port: int, routes: list[str], run: str, worker: str, span: str, requests: int
) -> dict[str, list[str]]:
    """Per route, the request paths it cycles through: one, or for a windowed route one a
    window (`window_sequence` over the extent the `tracks` route gives)."""
    base = {r: route_params(r, run, worker, span) for r in routes}
    tracks = path_with(PLUGIN + "/tracks", base.get("tracks", {}))
    status, doc = get_json(port, tracks, 60)
    deadline = time.monotonic() + 300
    while status == 202 and time.monotonic() < deadline:  # its index is built (`building`)
        time.sleep(0.2)
        status, doc = get_json(port, tracks, 60)
    extent = None
    if status == 200 and isinstance(doc, dict):
        lo, hi = doc.get("start_us"), doc.get("end_us")
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            extent = (float(lo), float(hi))
    per_route = max(1, requests // max(1, len(routes)) + 1)
    paths: dict[str, list[str]] = {}
    for route in routes:
        url = PLUGIN + "/" + route
        if route in WINDOWED and extent is not None:
            windows = window_sequence(*extent, per_route)
            asks = [{**base[route], "t0": repr(t0), "t1": repr(t1)} for t0, t1 in windows]
            paths[route] = [path_with(url, ask) for ask in asks]
        else:
            paths[route] = [path_with(url, base[route])]
    return paths


def _wait_built(port: int, paths: dict[str, list[str]], limit_s: float = 300.0) -> float:
    """Until each windowed route answers its first window with more than a 202 (a trace
    view structure it needs, built in the background once per file: `building`), at most
    `limit_s`; the seconds it took. Else the load would time those quick 202s as answers
    (a warm start's range_summary: most of its 500 requests)."""
    started = time.monotonic()
    for route in WINDOWED:
        if route not in paths:
            continue
        status, _, _ = get(port, paths[route][0], 60)
        while status == 202 and time.monotonic() - started < limit_s:
            time.sleep(0.2)
            status, _, _ = get(port, paths[route][0], 60)
    return time.monotonic() - started


def _wait_until_ready(
    child: Child, port: int, tf: TraceFile, ready_timeout: float, result: dict[str, Any]
) -> tuple[Optional[str], tuple[str, str, str]]:
    """Poll until the plugin lists the run and says the file is ready. Returns why it never
    was (None when it is) and the run, worker and span as the plugin names them."""
    run, worker, span = tf.run, tf.worker, tf.span
    listed = False
    while True:
        if child.elapsed() > ready_timeout:
            return "timeout waiting for status ready", (run, worker, span)
        code = child.poll()
        if code is not None:
            return f"tensorboard exited with code {code}", (run, worker, span)
        if not listed:
            status, doc = get_json(port, PLUGIN + "/runs", timeout=30)
            if status == 200 and isinstance(doc, dict) and doc.get("runs"):
                run, worker, span = _discover(doc, tf)
                listed = True
                result["runs_listed_s"] = child.elapsed()
            elif status is not None and status >= 400 and child.elapsed() > 30:
                return f"runs route answers {status}", (run, worker, span)
            else:
                time.sleep(0.2)
                continue
        params = {"run": run, "worker": worker, "span": span}
        status, doc = get_json(port, path_with(PLUGIN + "/status", params), timeout=30)
        state = doc.get("state") if isinstance(doc, dict) else None
        if status == 200 and state == "ready":
            result["ready_s"] = child.elapsed()
            return None, (run, worker, span)
        if state == "error":
            return f"status says error: {doc.get('error')}", (run, worker, span)
        time.sleep(0.2)


def _fire(
    port: int,
    paths: dict[str, list[str]],
    total: int,
    concurrency: int,
    duration: float,
    accept_gzip: bool = False,
) -> tuple[dict[str, dict[str, Any]], float]:
    headers = BROWSER_HEADERS if accept_gzip else None
    routes = list(paths)
    samples: dict[str, list[tuple[Optional[int], float]]] = {r: [] for r in routes}
    lock = threading.Lock()
    issued = 0
    started = time.perf_counter()
    deadline = started + duration

    def worker_loop() -> None:
        nonlocal issued
        while True:
            with lock:
                if issued >= total or time.perf_counter() > deadline:
                    return
                i = issued
                issued += 1
            route = routes[i % len(routes)]
            mine = paths[route]
            path = mine[(i // len(routes)) % len(mine)]
            remaining = max(1.0, deadline - time.perf_counter())
            status, _, secs = get(port, path, min(30.0, remaining), headers)
            with lock:
                samples[route].append((status, secs))

    threads = [threading.Thread(target=worker_loop, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=duration + 40)
    elapsed = time.perf_counter() - started
    report: dict[str, dict[str, Any]] = {}
    for route in routes:
        rows = samples[route]
        lat = sorted(s * 1000.0 for _, s in rows)
        statuses: dict[str, int] = {}
        for status, _ in rows:
            key = "conn_error" if status is None else str(status)
            statuses[key] = statuses.get(key, 0) + 1
        errors = sum(1 for status, _ in rows if status is None or status >= 400)
        report[route] = {
            "count": len(rows),
            "distinct": len(paths[route]),
            "errors": errors,
            "statuses": statuses,
            "p50_ms": percentile(lat, 50),
            "p90_ms": percentile(lat, 90),
            "p99_ms": percentile(lat, 99),
            "max_ms": lat[-1] if lat else None,
        }
    return report, elapsed
