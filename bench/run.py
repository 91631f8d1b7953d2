#!/usr/bin/env python3
"""Benchmark kinetoscope against gzip and two anchors on big real traces.

    .venv/bin/python bench/run.py [--sizes 100,500,1000] [--with-4gb]
                                  [--src TRACE | --source v100|h100]
                                  [--out bench/results/NAME.json] [--skip-anchors]
                                  [--quick [--with-anchors]] [--load]

Big traces are made at run time by tiling a real corpus trace (``../shared/tools/
make_big_trace.py``) into ``bench/scratch/``. For each file, on this machine, in this run:

* G: wall time of ``gzip -dc FILE > /dev/null`` (best of 3), the floor of any reader;
* kinetoscope cold (``report --format json --no-cache`` in a fresh process) and warm
  (the same with a filled ``KINETOSCOPE_CACHE_DIR``): wall time and peak RSS;
* the anchors, from their own venv: TensorBoard with ``torch-tb-profiler==0.4.3`` (start to
  Overview answering with data) and HTA (``TraceAnalysis`` + ``get_temporal_breakdown``).

``--load`` also starts TensorBoard with the product's plugin and measures route latency under
load on 127.0.0.1. Every step is bounded in time and memory; a failing step is recorded as an
``error`` in its row and the run goes on. See bench/README.md for what the numbers mean.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import traceback
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

from _anchors import AnchorEnv, ensure_anchors, measure_hta, measure_tb_profiler, versions
from _http import free_port
from _load import doc_routes, run_load
from _proc import outcome_error, run_measured
from _traces import MB, TraceFile, describe, make_tiled, tiles_for

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
DEFAULT_TILER = REPO.parent / "shared" / "tools" / "make_big_trace.py"
DEFAULT_SRC = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)
# Named sources to tile (--source): two event mixes, so the bench does not tune to one.
SOURCES = {
    # V100, 2021: memory events, `Call stack` args, cpu_op/kernel heavy; 32 MB a tile.
    "v100": DEFAULT_SRC,
    # H100, 2025, every profiler flag on: `python_function` stacks (half the events),
    # memory events, shapes, flops; 56 MB a tile.
    "h100": "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
}
# 1 MB H100 trace with memory events: tiled to ~5 MB for --quick.
QUICK_SRC = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
QUICK_MB = 5
SCHEMA = 1

OURS = ("kinetoscope_cold", "kinetoscope_warm")
ANCHORS = ("torch_tb_profiler", "hta")
SHORT = {
    "kinetoscope_cold": "ours cold",
    "kinetoscope_warm": "ours warm",
    "torch_tb_profiler": "tb-profiler",
    "hta": "HTA",
}
# Issue 13: at every size from 50 MB to 4 GB.
TARGETS = {
    "cold_max_gzip_ratio": 3.0,
    "max_rss_per_json": 1.0,
    "warm_max_seconds": 0.3,
    "min_speedup_vs_anchors": 20.0,
}
COLD_KEY = f"cold_le_{TARGETS['cold_max_gzip_ratio']:g}x_gzip"
WARM_KEY = f"warm_le_{TARGETS['warm_max_seconds']:g}s"


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rel(path: Path) -> str:
    return os.path.relpath(path, REPO)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="100,500,1000", help="target JSON sizes in MB (10^6 B)")
    p.add_argument("--with-4gb", action="store_true", help="add a ~4 GB file")
    p.add_argument("--src", help="trace to tile (path, or relative to the corpus)")
    p.add_argument(
        "--source",
        choices=sorted(SOURCES),
        help="a named trace to tile (default v100): " + ", ".join(SOURCES),
    )
    p.add_argument("--out", help="results file (default bench/results/<UTC time>.json)")
    p.add_argument("--skip-anchors", action="store_true", help="do not measure the anchors")
    p.add_argument("--quick", action="store_true", help=f"one ~{QUICK_MB} MB file, no anchors")
    p.add_argument("--with-anchors", action="store_true", help="measure anchors in --quick too")
    p.add_argument("--load", action="store_true", help="route latency under load (TensorBoard)")
    p.add_argument("--load-requests", type=int, default=2000)
    p.add_argument("--load-concurrency", type=int, default=16)
    p.add_argument("--load-seconds", type=float, default=60.0)
    p.add_argument("--timeout", type=float, help="seconds per step (default 1800, quick 120)")
    p.add_argument("--install-timeout", type=float, default=1200.0)
    p.add_argument("--gzip-runs", type=int, default=3)
    p.add_argument("--warm-runs", type=int, default=3)
    p.add_argument("--rss-cap-gb", type=float, help="kill a step above this summed RSS")
    p.add_argument("--work", default=str(HERE / "scratch"), help="generated files (git-ignored)")
    p.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    p.add_argument("--tiler", default=str(DEFAULT_TILER))
    p.add_argument("--python", help="product interpreter (default <repo>/.venv/bin/python)")
    return p.parse_args(argv)


# --------------------------------------------------------------------------- machine facts


def _meminfo_total() -> Optional[int]:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _cpu_model() -> Optional[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cmd_out(cmd: list[str]) -> Optional[str]:
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=30, check=True, stdin=subprocess.DEVNULL
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip() or None


def machine_facts(product_python: Path) -> dict[str, Any]:
    gzip_version = _cmd_out(["gzip", "--version"])
    dirty = _cmd_out(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "mem_total_bytes": _meminfo_total(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "harness_python": platform.python_version(),
        "product_python": rel(product_python) if product_python.is_relative_to(REPO) else None,
        "product": versions(
            product_python,
            ["kinetoscope", "numpy", "msgspec", "pandas", "tensorboard", "isal", "werkzeug"],
        ),
        "gzip": gzip_version.splitlines()[0] if gzip_version else None,
        "git_commit": _cmd_out(["git", "-C", str(REPO), "rev-parse", "HEAD"]),
        "git_dirty": bool(dirty) if dirty is not None else None,
        "env": {
            k: v
            for k, v in os.environ.items()
            if k.startswith(("OPENBLAS_", "KINETOSCOPE_")) or k == "PYTHONDONTWRITEBYTECODE"
        },
        "loadavg_start": list(os.getloadavg()),
    }


def compile_product(product_python: Path) -> Optional[str]:
    """Byte-compile the product's sources, as installing a wheel does. Without it, an
    editable install under PYTHONDONTWRITEBYTECODE=1 compiles every module at every start
    (~0.1 s of CPU, a third of a warm run), a cost no installed user pays."""
    sources = [str(REPO / "tb_plugin"), str(REPO / "handlers")]
    cmd = [str(product_python), "-m", "compileall", "-q", *sources]
    try:
        subprocess.run(cmd, check=True, timeout=300, stdin=subprocess.DEVNULL, capture_output=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"compileall failed: {exc}"
    return None


# --------------------------------------------------------------------------- measurements


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
    result: dict[str, Any] = {
        "seconds": outcome.seconds,
        "peak_rss_bytes": outcome.peak_rss_bytes,
        "tree_peak_rss_bytes": outcome.tree_peak_rss_bytes,
        "ru_maxrss_bytes": outcome.ru_maxrss_bytes,
        "cpu_seconds": outcome.cpu_seconds,
        "log": rel(logf),
    }
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
    # --no-cache, and an empty cache dir in case the flag were ignored.
    cache = _fresh_dir(ctx.work / "cache" / f"{tf.key}-cold")
    result = _kinetoscope_run(ctx, tf, "kinetoscope_cold", cache, no_cache=True)
    shutil.rmtree(cache, ignore_errors=True)
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
    best = min(runs, key=lambda r: float(r["seconds"]))
    result = dict(best)
    result["peak_rss_bytes"] = max(int(r["peak_rss_bytes"]) for r in runs)
    result["all_seconds"] = [r["seconds"] for r in runs]
    result["cache_fill"] = {
        k: fill.get(k) for k in ("seconds", "peak_rss_bytes", "cpu_seconds", "output_bytes")
    }
    return result


class Ctx:
    """Settings shared by the measurements of one run."""

    def __init__(self, args: argparse.Namespace, python: Path, work: Path, rss_cap: int) -> None:
        self.python = python
        self.work = work
        self.rss_cap = rss_cap
        self.timeout: float = args.timeout or (120.0 if args.quick else 1800.0)
        self.warm_runs: int = args.warm_runs
        self.gzip_runs: int = args.gzip_runs


def run_tb_profiler(anchors: AnchorEnv, tf: TraceFile, ctx: Ctx) -> dict[str, Any]:
    return measure_tb_profiler(anchors, tf, ctx.work, free_port(), ctx.timeout, ctx.rss_cap)


def guarded(step: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a measurement; an unexpected exception becomes the row's ``error``."""
    try:
        result = step()
    except Exception as e:  # noqa: BLE001 - one failing step must not end the run
        return {"error": f"harness: {type(e).__name__}: {e}", "traceback": traceback.format_exc()}
    log = result.get("log")
    if isinstance(log, str) and os.path.isabs(log):
        result["log"] = rel(Path(log))
    return result


def derive(row: dict[str, Any]) -> None:
    """Ratios to G and to the JSON size, and our speedups against each anchor."""
    g = row.get("gzip", {}).get("seconds")
    json_bytes = row["json_bytes"]
    tools: dict[str, dict[str, Any]] = row["tools"]
    for m in tools.values():
        s = m.get("seconds")
        rss = m.get("peak_rss_bytes")
        if isinstance(s, (int, float)) and g:
            m["ratio_to_gzip"] = s / g
        if isinstance(rss, int) and "error" not in m:
            m["rss_per_json"] = rss / json_bytes
    for ours in OURS:
        mine = tools.get(ours, {}).get("seconds")
        speedups: dict[str, Optional[float]] = {}
        for anchor in ANCHORS:
            theirs = tools.get(anchor, {}).get("seconds")
            ok = isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and mine > 0
            speedups[anchor] = (theirs / mine) if ok else None  # type: ignore[operator]
        if ours in tools:
            tools[ours]["speedup_vs"] = speedups


def targets_for(row: dict[str, Any]) -> dict[str, Optional[bool]]:
    tools = row["tools"]
    cold = tools.get("kinetoscope_cold", {})
    warm = tools.get("kinetoscope_warm", {})
    out: dict[str, Optional[bool]] = {
        COLD_KEY: None,
        "rss_le_json": None,
        WARM_KEY: None,
        "speedup_ge_20x_torch_tb_profiler": None,
        "speedup_ge_20x_hta": None,
    }
    if "ratio_to_gzip" in cold:
        out[COLD_KEY] = cold["ratio_to_gzip"] <= TARGETS["cold_max_gzip_ratio"]
    if "rss_per_json" in cold:
        out["rss_le_json"] = cold["rss_per_json"] <= TARGETS["max_rss_per_json"]
    if isinstance(warm.get("seconds"), (int, float)):
        out[WARM_KEY] = warm["seconds"] <= TARGETS["warm_max_seconds"]
    for anchor in ANCHORS:
        sp = (cold.get("speedup_vs") or {}).get(anchor)
        if sp is not None:
            out[f"speedup_ge_20x_{anchor}"] = sp >= TARGETS["min_speedup_vs_anchors"]
    return out


# --------------------------------------------------------------------------- output


def _fmt(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, float)):
        return format(v, spec)
    return str(v)


def print_table(results: dict[str, Any]) -> None:
    cols = [
        ("file", 14), ("JSON MB", 8), ("G s", 7), ("tool", 12), ("s", 8), ("xG", 7),
        ("vs tb-prof", 10), ("vs HTA", 8), ("RSS MB", 8), ("RSS/JSON", 8),
    ]  # fmt: skip
    header = " ".join(name.rjust(w) if i else name.ljust(w) for i, (name, w) in enumerate(cols))
    print()
    print(header)
    print("-" * len(header))
    for row in results["files"]:
        g = row.get("gzip", {}).get("seconds")
        first = True
        for tool, m in row["tools"].items():
            sp = m.get("speedup_vs") or {}
            rss = m.get("peak_rss_bytes")
            cells = [
                row["label"] if first else "",
                _fmt(row["json_bytes"] / MB, ".0f") if first else "",
                _fmt(g, ".2f") if first else "",
                SHORT.get(tool, tool),
            ]
            if "error" in m:
                cells.append("error: " + str(m["error"])[:70])
                print(" ".join(_cell(c, w, i) for i, (c, (_, w)) in enumerate(zip(cells, cols))))
            else:
                cells += [
                    _fmt(m.get("seconds"), ".2f"),
                    _fmt(m.get("ratio_to_gzip"), ".2f"),
                    _fmt(sp.get("torch_tb_profiler"), ".1f"),
                    _fmt(sp.get("hta"), ".1f"),
                    _fmt(rss / MB if isinstance(rss, int) else None, ".0f"),
                    _fmt(m.get("rss_per_json"), ".2f"),
                ]
                print(" ".join(_cell(c, w, i) for i, (c, (_, w)) in enumerate(zip(cells, cols))))
            first = False
        if not row["tools"]:
            print(row["label"])
        t = row.get("targets", {})
        if t:
            marks = " ".join(f"{k}={_mark(v)}" for k, v in t.items())
            print(f"{'':14} targets: {marks}")
    load = results.get("load")
    if load:
        print()
        if "error" in load:
            print(f"load ({load.get('file')}): error: {load['error']}")
        else:
            print(
                f"load ({load.get('file')}): ready after {_fmt(load.get('ready_s'), '.2f')} s, "
                f"{load['requests']} requests max, {load['concurrency']} concurrent, "
                f"{_fmt(load.get('seconds'), '.1f')} s"
            )
            print(f"{'route':24} {'n':>6} {'p50 ms':>9} {'p99 ms':>9} {'errors':>7}")
            for route, r in load.get("per_route", {}).items():
                print(
                    f"{route:24} {r['count']:>6} {_fmt(r['p50_ms'], '.1f'):>9} "
                    f"{_fmt(r['p99_ms'], '.1f'):>9} {r['errors']:>7}"
                )


def _mark(v: Optional[bool]) -> str:
    return "-" if v is None else ("ok" if v else "MISS")


def _cell(text: str, width: int, index: int) -> str:
    return text.ljust(width) if index in (0, 3) or text.startswith("error") else text.rjust(width)


def write_results(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1, sort_keys=False)
        f.write("\n")
    tmp.replace(path)


# --------------------------------------------------------------------------- main


def resolve_src(arg: Optional[str], corpus: Path, quick: bool, source: Optional[str]) -> Path:
    if arg is None:
        return corpus / (QUICK_SRC if quick and not source else SOURCES[source or "v100"])
    p = Path(arg)
    if p.is_file():
        return p.resolve()
    return corpus / arg


def prepare_files(args: argparse.Namespace, work: Path, src: Path, corpus: Path) -> list[TraceFile]:
    tiler = Path(args.tiler)
    log = work / "logs" / "make_big_trace.log"
    make_timeout = 3 * 3600.0
    one = make_tiled(tiler, corpus, src, 1, work, "x1", make_timeout, log)
    if args.quick:
        targets = [QUICK_MB]
    else:
        targets = [int(s) for s in str(args.sizes).split(",") if s.strip()]
        if args.with_4gb:
            targets.append(4000)
    files: list[TraceFile] = []
    for mb in targets:
        label = f"{mb}MB" if mb < 1000 else f"{mb / 1000:g}GB"
        n = tiles_for(mb * MB, one.json_bytes)
        print(f"[bench] {label}: {n} tile(s) of {one.json_bytes / MB:.1f} MB", flush=True)
        tf = make_tiled(tiler, corpus, src, n, work, label, make_timeout, log)
        files.append(tf)
    return files


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    corpus = Path(args.corpus).resolve()
    work = Path(args.work).resolve()
    for sub in ("logs", "out", "cache", "tmp"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    default_python = REPO / ".venv" / "bin" / "python"
    python = Path(args.python) if args.python else default_python
    if not python.exists():
        python = Path(sys.executable)
    started = utc_now()
    out = (
        Path(args.out)
        if args.out
        else HERE / "results" / (started.replace("-", "").replace(":", "") + ".json")
    )
    mem = _meminfo_total() or 8 << 30
    rss_cap = int(args.rss_cap_gb * (1 << 30)) if args.rss_cap_gb else int(mem * 0.85)
    ctx = Ctx(args, python, work, rss_cap)
    with_anchors = not args.skip_anchors and (not args.quick or args.with_anchors)

    results: dict[str, Any] = {
        "schema": SCHEMA,
        "started_utc": started,
        "finished_utc": None,
        "args": {k: v for k, v in vars(args).items() if k not in ("work", "corpus", "tiler")},
        "quick": bool(args.quick),
        "machine": machine_facts(python),
        "step_timeout_s": ctx.timeout,
        "rss_cap_bytes": rss_cap,
        "targets": TARGETS,
        "anchors": None,
        "files": [],
        "load": None,
        "compile_error": compile_product(python),
    }
    src = resolve_src(args.src, corpus, args.quick, args.source)
    if not src.is_file():
        print(f"[bench] source trace not found: {src}", file=sys.stderr)
        results["error"] = f"source trace not found: {os.path.relpath(src, REPO)}"
        write_results(out, results)
        return 2
    results["src"] = os.path.relpath(src, corpus) if src.is_relative_to(corpus) else src.name

    busy = os.getloadavg()[0]
    if busy > 0.5:
        print(f"[bench] warning: load average {busy:.2f}: other work will skew the timings")
    print(f"[bench] making traces from {results['src']} in {rel(work)}", flush=True)
    files = prepare_files(args, work, src, corpus)

    anchors: Optional[AnchorEnv] = None
    if with_anchors:
        print("[bench] installing/checking anchors in anchors-venv ...", flush=True)
        tb_version = results["machine"]["product"].get("tensorboard")
        try:
            anchors = ensure_anchors(work, sys.executable, tb_version, args.install_timeout)
            results["anchors"] = {
                "venv": rel(anchors.venv),
                "versions": anchors.versions,
                "torch_tb_profiler_error": anchors.tb_profiler_error,
                "hta_error": anchors.hta_error,
                "hta_dist": anchors.hta_dist,
                "install_seconds": anchors.install_seconds,
                "reused": anchors.reused,
            }
        except Exception as e:  # noqa: BLE001
            results["anchors"] = {"error": f"{type(e).__name__}: {e}"}
    else:
        results["anchors"] = {"skipped": True}

    for tf in files:
        row: dict[str, Any] = describe(tf, REPO)
        row["tools"] = {}
        results["files"].append(row)
        print(f"[bench] {tf.label}: {tf.json_bytes / MB:.0f} MB JSON, gzip -dc ...", flush=True)
        row["gzip"] = guarded(partial(measure_gzip, tf, ctx.gzip_runs, ctx.timeout, rss_cap))
        steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("kinetoscope_cold", partial(measure_cold, ctx, tf)),
            ("kinetoscope_warm", partial(measure_warm, ctx, tf)),
        ]
        if anchors is not None:
            steps += [
                ("torch_tb_profiler", partial(run_tb_profiler, anchors, tf, ctx)),
                ("hta", partial(measure_hta, anchors, tf, work, ctx.timeout, rss_cap)),
            ]
        for name, step in steps:
            print(f"[bench] {tf.label}: {name} ...", flush=True)
            row["tools"][name] = guarded(step)
            m = row["tools"][name]
            shown = m.get("error") or f"{m.get('seconds', 0):.2f} s"
            print(f"[bench] {tf.label}: {name}: {shown}", flush=True)
            derive(row)
            write_results(out, results)
        row["targets"] = targets_for(row)
        write_results(out, results)

    if args.load and files:
        tf = files[0]
        print(f"[bench] load on {tf.label} ...", flush=True)
        results["load"] = guarded(
            partial(
                run_load,
                python.parent / "tensorboard",
                tf,
                work,
                free_port(),
                doc_routes(REPO / "docs" / "http_api.md"),
                requests=args.load_requests,
                concurrency=args.load_concurrency,
                duration=args.load_seconds,
                ready_timeout=ctx.timeout,
                rss_cap=rss_cap,
            )
        )
        results["load"].setdefault("file", tf.label)

    results["finished_utc"] = utc_now()
    results["machine"]["loadavg_end"] = list(os.getloadavg())
    write_results(out, results)
    print_table(results)
    print(f"\n[bench] results: {rel(out) if out.resolve().is_relative_to(REPO) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
