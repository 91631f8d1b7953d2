#!/usr/bin/env python3
"""Runs of many ranks: time to a ready Distributed view and peak memory of the process tree,
in-process (the default pool: KINETOSCOPE_RANK_WORKERS spawned processes) vs a Dask
LocalCluster (``--dask local``: as many worker processes, one thread each).

    .venv/bin/python bench/ranks.py                          # 64 and 256 ranks of ~4 MB
    .venv/bin/python bench/ranks.py --ranks 1024 --rank-mb 100   # the goal: hours, big disk
    .venv/bin/python bench/ranks.py --quick                  # 8 ranks of ~2 MB (CI, seconds)
    .venv/bin/python bench/ranks.py --layout 8x1x256 --modes in-process  # 2,048 ranks, groups

Each run is made from one real rank trace (default: HTA's ``sampled_rank-0``, a rank of a
128-rank NCCL job, 1.8 MB of JSON) tiled to ``--rank-mb`` by ``make_big_trace.py``, then
written once per rank with ``distributedInfo.rank`` and the file name relabelled
(``_rank_runs.py``). Each measurement is a fresh ``kinetoscope report LOGDIR --view
distributed --format json --no-cache`` (cold: every rank decoded; the command also loads
rank 0 once for its ``status``), bounded and measured by ``_proc`` (wall time; peak RSS
summed over the process tree, sampled every 0.2 s). The view must list every rank and no
error. Results go to ``bench/results/ranks-<UTC time>.json`` and a table.

``--view`` (with ``--param KEY=VALUE``) measures another run-level view the same way, e.g.
``--layout 8x1x256 --modes in-process --view run_whatif --param kernel=... --param
factor=0.5`` (checked to answer without a rank's error).

``--layout TPxPPxDP`` measures a job of process groups instead (``_group_runs.py``: the
test suite's synthetic job as trace files, one slow rank and one slow link): a cold run
(empty cache; it fills the summary cache) then a warm one (summaries read back), each
checked to name exactly that rank and that group.

``--pairs N`` (with ``--layout``) measures ``--view`` against the Distributed view instead
(``--against``: another view as the anchor): N rounds of both, cold, in alternating order
(A B, B A, ...), so that a machine's drift reaches both alike; it prints each one's
median wall and CPU time and the median of the rounds' ratios (view / anchor), which a
faster or busier machine moves far less than the seconds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any, Optional

from _args import add_common_arguments, product_python, run_product
from _group_runs import GroupRun, check_view, make_group_run
from _machine import compile_product, machine_facts
from _proc import measures, outcome_error
from _rank_runs import RankRun, make_rank_run
from _results import HERE, REPO, rel
from _traces import MB, make_tiled, tiles_for

DEFAULT_SRC = "hta/tests/data/trace_filter/sampled_rank-0.json.gz"
MODES = {"in-process": [], "dask-local": ["--dask", "local"]}
QUICK = {"ranks": "8", "rank_mb": 2.0, "timeout": 120.0}


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--ranks", default="64,256", help="rank counts, comma-separated")
    p.add_argument("--rank-mb", type=float, default=4.0, help="JSON MB (10^6 B) per rank")
    p.add_argument("--modes", default=",".join(MODES), help="of: " + ", ".join(MODES))
    p.add_argument("--quick", action="store_true", help="8 ranks of ~2 MB, both modes (CI)")
    p.add_argument("--layout", help="TPxPPxDP: a job of process groups, cold then warm")
    p.add_argument("--layout-steps", type=int, default=20, help="profiled steps a rank")
    p.add_argument("--src", default=DEFAULT_SRC, help="rank trace to tile (corpus-relative)")
    p.add_argument("--view", default="distributed", help="the run-level view measured")
    p.add_argument("--param", action="append", default=[], help="KEY=VALUE of the view")
    p.add_argument("--pairs", type=int, default=0, help="with --layout: rounds against --against")
    p.add_argument("--against", default="distributed", help="the anchor view of --pairs")
    add_common_arguments(p, "ranks", 3600.0)
    args = p.parse_args(argv)
    if args.quick:
        args.ranks, args.rank_mb, args.timeout = QUICK["ranks"], QUICK["rank_mb"], QUICK["timeout"]
    return args


def measure(
    python: Path,
    run: RankRun | GroupRun,
    mode: str,
    work: Path,
    args: argparse.Namespace,
    phase: str = "",
    view: str | None = None,
) -> dict[str, Any]:
    """One `kinetoscope report --view distributed` (or `view`, default `args.view`) of
    `run`, in `mode`: cold without a cache, or (`phase` "cold"/"warm") with the run's
    summary cache, empty or filled."""
    view = view or args.view
    name = f"ranks{run.ranks}-{mode}" + (f"-{phase}" if phase else "")
    out, log = work / "out" / f"{name}.json", work / "logs" / f"{name}.log"
    cmd = [str(python), "-m", "kinetoscope", "report", str(run.logdir), "--format", "json"]
    cmd += ["--view", view, *([] if phase else ["--no-cache"]), *MODES[mode]]
    cmd += [arg for param in args.param if view == args.view for arg in ("--param", param)]
    cache = work / "cache" / (f"ranks{run.ranks}-{mode}" if phase else name)
    if phase == "cold":
        shutil.rmtree(cache, ignore_errors=True)
    outcome = run_product(cmd, args, cache, work, out, log)
    row: dict[str, Any] = {"ranks": run.ranks, "mode": mode, **measures(outcome), "log": rel(log)}
    if phase:
        row["phase"] = phase
    row["view"] = view
    error = outcome_error(outcome)
    if error is None and view != "distributed":
        answer = json.loads(out.read_bytes()).get(view)
        if not isinstance(answer, dict) or answer.get("errors"):
            error = f"{view}: {str(answer)[:200]}"
    elif error is None:
        shown = json.loads(out.read_bytes())["distributed"]
        found = [r["rank"] for r in shown["ranks"]]
        if found != list(range(run.ranks)) or shown["errors"]:
            error = f"view has ranks {found[:5]}... of {len(found)}, errors {shown['errors'][:2]}"
        elif isinstance(run, GroupRun):
            error = check_view(shown, run)
    if error is not None:
        row["error"] = error
        row["stderr_tail"] = outcome.stderr_tail[-600:]
    return row


def print_rows(rows: list[dict[str, Any]], rank_mb: float) -> None:
    print("\nranks  MB/rank  mode (view)                 seconds  s/rank  peak RSS (tree)  result")
    for r in rows:
        secs, peak = r["seconds"], r["peak_rss_bytes"] / MB
        result = r.get("error", "ok")
        label = r["mode"] + " " + (r["view"] if "round" in r else r.get("phase", ""))
        print(
            f"{r['ranks']:>5}  {rank_mb:>7.2f}  {label:<26}  "
            f"{secs:>7.1f}  "
            f"{secs / r['ranks']:>6.3f}  {peak:>12.0f} MB  {result}"
        )


def tiled_rows(
    python: Path, corpus: Path, work: Path, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], float]:
    """Cold runs of a real rank relabelled (the module doc)."""
    src = corpus / args.src
    tiler, log = Path(args.tiler), work / "logs" / "make_big_trace.log"
    one = make_tiled(tiler, corpus, src, 1, work, "x1", 3600.0, log)
    tiles = tiles_for(int(args.rank_mb * MB), one.json_bytes)
    tile = make_tiled(tiler, corpus, src, tiles, work, f"x{tiles}", 3 * 3600.0, log)
    busy = os.getloadavg()[0]
    print(f"[ranks] {tile.json_bytes / MB:.1f} MB a rank ({tiles} tile(s)); load {busy:.2f}")
    rows = []
    for ranks in [int(n) for n in args.ranks.split(",") if n.strip()]:
        run = make_rank_run(tile, ranks, work)
        print(f"[ranks] {ranks} ranks in {rel(run.logdir)}", flush=True)
        for mode in [m for m in args.modes.split(",") if m.strip()]:
            rows.append(measure(python, run, mode, work, args))
            print(f"[ranks]   {mode}: {rows[-1]['seconds']:.1f} s", flush=True)
    if rows:
        rows[0]["rank_json_bytes"] = tile.json_bytes
    return rows, busy


def layout_rows(
    python: Path, work: Path, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], float]:
    """A job of process groups, cold then warm, per mode (the module doc)."""
    run = make_group_run(args.layout, args.layout_steps, work)
    busy = os.getloadavg()[0]
    print(
        f"[ranks] {args.layout}: {run.ranks} ranks of {run.rank_json_bytes / MB:.2f} MB, "
        f"load {busy:.2f}",
        flush=True,
    )
    rows = []
    for mode in [m for m in args.modes.split(",") if m.strip()]:
        for phase in ("cold", "warm"):
            rows.append(measure(python, run, mode, work, args, phase))
            print(f"[ranks]   {mode} {phase}: {rows[-1]['seconds']:.1f} s", flush=True)
    if rows:
        rows[0]["rank_json_bytes"] = run.rank_json_bytes
    return rows, busy


def paired_rows(
    python: Path, work: Path, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], float]:
    """`args.pairs` rounds of the anchor view and `args.view`, cold, in alternating order
    (the module doc), on a job of process groups."""
    run = make_group_run(args.layout, args.layout_steps, work)
    busy = os.getloadavg()[0]
    print(f"[ranks] {args.layout}: {run.ranks} ranks, {args.view} against {args.against}")
    rows = []
    for mode in [m for m in args.modes.split(",") if m.strip()]:
        for k in range(args.pairs):
            views = (args.against, args.view) if k % 2 == 0 else (args.view, args.against)
            for view in views:
                rows.append(measure(python, run, mode, work, args, view=view))
                rows[-1]["round"] = k
                print(f"[ranks]   {mode} round {k} {view}: {rows[-1]['seconds']:.2f} s", flush=True)
    if rows:
        rows[0]["rank_json_bytes"] = run.rank_json_bytes
    return rows, busy


def paired_summary(rows: list[dict[str, Any]], view: str, anchor: str) -> dict[str, Any]:
    """Per view its median wall and CPU seconds, and the median of the rounds' ratios."""
    by_round: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_round.setdefault((r["mode"], r["round"]), {})[r["view"]] = r
    pairs = [p for p in by_round.values() if view in p and anchor in p]
    out: dict[str, Any] = {"rounds": len(pairs)}
    for name in (anchor, view):
        out[name] = {
            k: statistics.median(p[name][k] for p in pairs) if pairs else None
            for k in ("seconds", "cpu_seconds")
        }
    for k in ("seconds", "cpu_seconds"):
        ratios = [p[view][k] / p[anchor][k] for p in pairs if p[anchor][k]]
        out[f"ratio_{k}"] = statistics.median(ratios) if ratios else None
    return out


def print_paired(summary: dict[str, Any], view: str, anchor: str) -> None:
    print(f"\n{summary['rounds']} rounds (medians)  wall s   CPU s")
    for name in (anchor, view):
        m = summary[name]
        print(f"{name:<22}  {m['seconds'] or 0:>6.2f}  {m['cpu_seconds'] or 0:>6.2f}")
    wall, cpu = summary["ratio_seconds"] or 0, summary["ratio_cpu_seconds"] or 0
    print(f"{view + ' / ' + anchor:<22}  {wall:>5.2f}x  {cpu:>5.2f}x  (median of the rounds)")


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    corpus, work = Path(args.corpus).resolve(), Path(args.work).resolve()
    for sub in ("logs", "out", "cache"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    python = product_python(args)
    # as an installed wheel: without it, every process (the pool's workers too) compiles
    # the modules it imports when PYTHONDONTWRITEBYTECODE is set (~0.1 s of a warm run)
    compile_error = compile_product(python)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = Path(args.out) if args.out else HERE / "results" / f"ranks-{started}.json"
    if args.layout and args.pairs > 0:
        (rows, busy), source = paired_rows(python, work, args), args.layout
    elif args.layout:
        (rows, busy), source = layout_rows(python, work, args), args.layout
    else:
        (rows, busy), source = tiled_rows(python, corpus, work, args), args.src
    rank_bytes = rows[0].pop("rank_json_bytes", None) if rows else None
    results = {
        "started_utc": started,
        "src": source,
        "view": args.view,
        "params": args.param,
        "rank_json_bytes": rank_bytes,
        "rank_workers": os.environ.get("KINETOSCOPE_RANK_WORKERS", "2"),
        "machine": {**machine_facts(python), "loadavg_start": busy},
        "compile_error": compile_error,
        "rows": rows,
    }
    paired = paired_summary(rows, args.view, args.against) if args.pairs > 0 else None
    if paired is not None:
        results["paired"] = paired
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print_rows(rows, (rank_bytes or 0) / MB)
    if paired is not None:
        print_paired(paired, args.view, args.against)
    print(f"\n[ranks] results: {rel(out) if out.resolve().is_relative_to(REPO) else out}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
