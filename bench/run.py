#!/usr/bin/env python3
"""Benchmark kinetoscope against gzip and two anchors on big real traces.

    .venv/bin/python bench/run.py [--sizes 100,500,1000] [--with-4gb] [--cut]
                                  [--src TRACE | --source v100|h100]
                                  [--out bench/results/NAME.json] [--skip-anchors]
                                  [--quick [--with-anchors]] [--load]

Big traces are made at run time by tiling a real corpus trace (``../shared/tools/
make_big_trace.py``) into ``bench/scratch/``. For each file, on this machine, in this run:

* G: wall time of ``gzip -dc FILE > /dev/null`` (best of 3), the floor of any reader;
* kinetoscope cold (``report --format json --no-cache`` in a fresh process, best of 3) and warm
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
import math
import os
import shutil
import signal
import sys
import traceback
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

from _anchors import AnchorEnv, ensure_anchors, measure_hta, measure_tb_profiler
from _http import free_port
from _load import doc_routes, run_load
from _machine import compile_product, machine_facts, meminfo_total
from _ours import Ctx, measure_cold, measure_gzip, measure_warm
from _results import (
    HERE,
    REPO,
    TARGETS,
    derive,
    print_table,
    rel,
    targets_for,
    write_results,
)
from _traces import MB, TraceFile, describe, make_cut, make_tiled, tiles_for

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
    # memory events, shapes, flops; 36 MB a tile.
    "h100": "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
}
# 1 MB H100 trace with memory events: tiled to ~5 MB for --quick.
QUICK_SRC = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
QUICK_MB = 5
SCHEMA = 1


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="100,500,1000", help="target JSON sizes in MB (10^6 B)")
    p.add_argument("--with-4gb", action="store_true", help="add a ~4 GB file")
    p.add_argument(
        "--cut",
        action="store_true",
        help="a size more than 5%% from a whole number of tiles is cut to size from the next\n"
        "(a profile stopped part-way: bench/_cut.py), not rounded to the nearest",
    )
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
    p.add_argument(
        "--load-routes",
        help="with --load: a comma list of routes to ask (default: every route documented)",
    )
    p.add_argument(
        "--load-only", action="store_true", help="with --load: measure no file, only the load"
    )
    p.add_argument(
        "--load-gzip",
        action="store_true",
        help="with --load: requests accept gzip, as a browser's do (answers come compressed)",
    )
    p.add_argument("--timeout", type=float, help="seconds per step (default 1800, quick 120)")
    p.add_argument("--install-timeout", type=float, default=1200.0)
    p.add_argument("--gzip-runs", type=int, default=3)
    p.add_argument("--warm-runs", type=int, default=3)
    p.add_argument("--cold-runs", type=int, default=3, help="cold runs, the best reported")
    p.add_argument("--rss-cap-gb", type=float, help="kill a step above this summed RSS")
    p.add_argument("--work", default=str(HERE / "scratch"), help="generated files (git-ignored)")
    p.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    p.add_argument("--tiler", default=str(DEFAULT_TILER))
    p.add_argument("--python", help="product interpreter (default <repo>/.venv/bin/python)")
    return p.parse_args(argv)


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


def run_tb_profiler(anchors: AnchorEnv, tf: TraceFile, ctx: Ctx) -> dict[str, Any]:
    return measure_tb_profiler(anchors, tf, ctx.work, free_port(), ctx.timeout, ctx.rss_cap)


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
        cut = args.cut and abs(n * one.json_bytes - mb * MB) > 0.05 * mb * MB
        n = math.ceil(mb * MB / one.json_bytes) if cut else n
        print(f"[bench] {label}: {n} tile(s) of {one.json_bytes / MB:.1f} MB", flush=True)
        tf = make_tiled(tiler, corpus, src, n, work, label, make_timeout, log)
        if cut:
            tf = make_cut(tf, mb * MB, work, label)
            print(f"[bench] {label}: cut to {tf.json_bytes / MB:.1f} MB", flush=True)
        files.append(tf)
    return files


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    if args.load:
        load_routes(args)  # an unknown route is said before anything is made
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    corpus = Path(args.corpus).resolve()
    work = Path(args.work).resolve()
    for sub in ("logs", "out", "cache", "tmp"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    python = Path(args.python) if args.python else REPO / ".venv" / "bin" / "python"
    if not python.exists():
        python = Path(sys.executable)
    started = utc_now()
    out = (
        Path(args.out)
        if args.out
        else HERE / "results" / (started.replace("-", "").replace(":", "") + ".json")
    )
    mem = meminfo_total() or 8 << 30
    rss_cap = int(args.rss_cap_gb * (1 << 30)) if args.rss_cap_gb else int(mem * 0.85)
    ctx = Ctx(args, python, work, rss_cap)
    results = new_results(args, ctx, started)
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
    anchors = install_anchors(args, ctx, results)
    for tf in files if not (args.load and args.load_only) else ():
        measure_file(ctx, tf, anchors, results, out)
    if args.load and files:
        cache = ctx.work / "cache" / f"load-{files[0].key}"
        shutil.rmtree(cache, ignore_errors=True)  # cold: the plugin's cache empty
        results["load"] = measure_load(args, ctx, files[0], cache)
        write_results(out, results)
        results["load_warm"] = measure_load(args, ctx, files[0], cache)  # its cache filled
        shutil.rmtree(cache, ignore_errors=True)
    results["finished_utc"] = utc_now()
    results["machine"]["loadavg_end"] = list(os.getloadavg())
    write_results(out, results)
    print_table(results)
    print(f"\n[bench] results: {rel(out) if out.resolve().is_relative_to(REPO) else out}")
    return 0


def new_results(args: argparse.Namespace, ctx: Ctx, started: str) -> dict[str, Any]:
    """The results document before any measurement."""
    return {
        "schema": SCHEMA,
        "started_utc": started,
        "finished_utc": None,
        "args": {k: v for k, v in vars(args).items() if k not in ("work", "corpus", "tiler")},
        "quick": bool(args.quick),
        "machine": machine_facts(ctx.python),
        "step_timeout_s": ctx.timeout,
        "rss_cap_bytes": ctx.rss_cap,
        "targets": TARGETS,
        "anchors": None,
        "files": [],
        "load": None,
        "load_warm": None,
        "compile_error": compile_product(ctx.python),
    }


def install_anchors(
    args: argparse.Namespace, ctx: Ctx, results: dict[str, Any]
) -> Optional[AnchorEnv]:
    """The anchors' venv when this run measures them (recorded in ``results``), else None."""
    if args.skip_anchors or (args.quick and not args.with_anchors):
        results["anchors"] = {"skipped": True}
        return None
    print("[bench] installing/checking anchors in anchors-venv ...", flush=True)
    tb_version = results["machine"]["product"].get("tensorboard")
    try:
        anchors = ensure_anchors(ctx.work, sys.executable, tb_version, args.install_timeout)
    except Exception as e:  # noqa: BLE001
        results["anchors"] = {"error": f"{type(e).__name__}: {e}"}
        return None
    results["anchors"] = {
        "venv": rel(anchors.venv),
        "versions": anchors.versions,
        "torch_tb_profiler_error": anchors.tb_profiler_error,
        "hta_error": anchors.hta_error,
        "hta_dist": anchors.hta_dist,
        "install_seconds": anchors.install_seconds,
        "reused": anchors.reused,
    }
    return anchors


def measure_file(
    ctx: Ctx, tf: TraceFile, anchors: Optional[AnchorEnv], results: dict[str, Any], out: Path
) -> None:
    """One file's row: gzip, ours cold and warm, the anchors; the results file is rewritten
    after each step, so a run cut short keeps what it measured."""
    row: dict[str, Any] = describe(tf, REPO)
    row["tools"] = {}
    results["files"].append(row)
    print(f"[bench] {tf.label}: {tf.json_bytes / MB:.0f} MB JSON, gzip -dc ...", flush=True)
    row["gzip"] = guarded(partial(measure_gzip, tf, ctx.gzip_runs, ctx.timeout, ctx.rss_cap))
    steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("kinetoscope_cold", partial(measure_cold, ctx, tf)),
        ("kinetoscope_warm", partial(measure_warm, ctx, tf)),
    ]
    if anchors is not None:
        steps += [
            ("torch_tb_profiler", partial(run_tb_profiler, anchors, tf, ctx)),
            ("hta", partial(measure_hta, anchors, tf, ctx.work, ctx.timeout, ctx.rss_cap)),
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


def load_routes(args: argparse.Namespace) -> list[str]:
    documented = doc_routes(REPO / "docs" / "http_api.md")
    if not args.load_routes:
        return documented
    asked = [r.strip() for r in str(args.load_routes).split(",") if r.strip()]
    unknown = [r for r in asked if r not in documented]
    if unknown:
        raise SystemExit(f"[bench] --load-routes: not documented routes: {', '.join(unknown)}")
    return asked


def measure_load(args: argparse.Namespace, ctx: Ctx, tf: TraceFile, cache: Path) -> dict[str, Any]:
    state = "warm" if cache.is_dir() and any(cache.iterdir()) else "cold"
    print(f"[bench] load on {tf.label} ({state} cache) ...", flush=True)
    load = guarded(
        partial(
            run_load,
            ctx.python.parent / "tensorboard",
            tf,
            ctx.work,
            free_port(),
            load_routes(args),
            requests=args.load_requests,
            concurrency=args.load_concurrency,
            duration=args.load_seconds,
            ready_timeout=ctx.timeout,
            rss_cap=ctx.rss_cap,
            cache_dir=cache,
            accept_gzip=args.load_gzip,
        )
    )
    load.setdefault("file", tf.label)
    load["cache"] = state
    return load


if __name__ == "__main__":
    sys.exit(main())
