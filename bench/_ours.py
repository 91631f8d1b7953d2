"""The measurements of a file on this machine: ``gzip -dc`` (the floor), and kinetoscope
cold and warm, each a fresh ``kinetoscope report`` process, bounded and measured."""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path
from typing import Any

from _proc import measures, outcome_error, run_measured
from _results import rel
from _traces import TraceFile


class Ctx:
    """Settings shared by the measurements of one run."""

    def __init__(self, args: argparse.Namespace, python: Path, work: Path, rss_cap: int) -> None:
        self.python = python
        self.work = work
        self.rss_cap = rss_cap
        self.timeout: float = args.timeout or (120.0 if args.quick else 1800.0)
        self.warm_runs: int = args.warm_runs
        self.cold_runs: int = args.cold_runs
        self.gzip_runs: int = args.gzip_runs


def measure_gzip(tf: TraceFile, runs: int, timeout: float, rss_cap: int) -> dict[str, Any]:
    gzip = shutil.which("gzip")
    if gzip is None:
        return {"error": "gzip not found"}
    times: list[float] = []
    for _ in range(max(1, runs)):
        outcome = run_measured([gzip, "-dc", str(tf.path)], timeout=timeout, rss_cap_bytes=rss_cap)
        error = outcome_error(outcome)
        if error is not None:
            return {"error": error, "runs": times}
        times.append(outcome.seconds)
    return {"seconds": min(times), "runs": times}


def _kinetoscope_run(
    ctx: Ctx, tf: TraceFile, name: str, cache: Path, no_cache: bool
) -> dict[str, Any]:
    cmd = [str(ctx.python), "-m", "kinetoscope", "report", str(tf.logdir), "--format", "json"]
    if no_cache:
        cmd.append("--no-cache")
    out = ctx.work / "out" / f"{tf.key}-{name}.json"
    logf = ctx.work / "logs" / f"{tf.key}-{name}.log"
    outcome = run_measured(
        cmd,
        timeout=ctx.timeout,
        rss_cap_bytes=ctx.rss_cap,
        env=dict(os.environ, KINETOSCOPE_CACHE_DIR=str(cache)),
        cwd=ctx.work,
        stdout=out,
        stderr=logf,
    )
    result: dict[str, Any] = {**measures(outcome), "log": rel(logf)}
    error = outcome_error(outcome)
    if error is None:
        try:
            doc = json.loads(out.read_bytes())
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict):
            result["views"] = sorted(doc)
            result["output_bytes"] = out.stat().st_size
        else:
            error = "stdout is not one JSON object"
    if error is not None:
        result["error"] = error
        result["failed_after_s"] = result.pop("seconds")
        result["stderr_tail"] = outcome.stderr_tail[-600:]
    return result


def _fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def measure_cold(ctx: Ctx, tf: TraceFile) -> dict[str, Any]:
    """The best of `ctx.cold_runs` cold runs (as G is the best of its runs and warm of
    its): one run on a shared machine is one draw (36-65 MB: its median 1.1-2.0x the
    best of 9).
    Peak RSS is the largest of the runs; `all_seconds` has each run's time."""
    runs = []
    for _ in range(max(1, ctx.cold_runs)):
        # --no-cache, and an empty cache dir in case the flag were ignored.
        cache = _fresh_dir(ctx.work / "cache" / f"{tf.key}-cold")
        runs.append(_kinetoscope_run(ctx, tf, "kinetoscope_cold", cache, no_cache=True))
        shutil.rmtree(cache, ignore_errors=True)
        if "error" in runs[-1]:
            return runs[-1]
    return best_of(runs)


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of `runs` (none failed), with the largest peak RSS and every time."""
    result = dict(min(runs, key=lambda r: float(r["seconds"])))
    result["peak_rss_bytes"] = max(int(r["peak_rss_bytes"]) for r in runs)
    result["all_seconds"] = [r["seconds"] for r in runs]
    return result


def measure_warm(ctx: Ctx, tf: TraceFile) -> dict[str, Any]:
    cache = _fresh_dir(ctx.work / "cache" / f"{tf.key}-warm")
    fill = _kinetoscope_run(ctx, tf, "kinetoscope_fill", cache, no_cache=False)
    if "error" in fill:
        shutil.rmtree(cache, ignore_errors=True)
        return {"error": f"cache fill failed: {fill['error']}", "cache_fill": fill}
    runs = [
        _kinetoscope_run(ctx, tf, "kinetoscope_warm", cache, no_cache=False)
        for _ in range(max(1, ctx.warm_runs))
    ]
    shutil.rmtree(cache, ignore_errors=True)
    failed = [r for r in runs if "error" in r]
    if failed:
        return {"error": failed[0]["error"], "cache_fill": fill, "runs": runs}
    result = best_of(runs)
    result["cache_fill"] = {
        k: fill.get(k) for k in ("seconds", "peak_rss_bytes", "cpu_seconds", "output_bytes")
    }
    return result
