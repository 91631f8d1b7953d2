#!/usr/bin/env python3
"""`kinetoscope trend` over a logdir of many runs: cold (every trace summarised, the
summary cache empty), warm (nothing new: every summary read back) and incremental (one new
run added: only it is read), each wall time and peak RSS of the process tree.

    .venv/bin/python bench/trend.py                       # 200 runs of ~100 MB (disk, hours)
    .venv/bin/python bench/trend.py --runs 20 --run-mb 5  # a small one (minutes)
    .venv/bin/python bench/trend.py --quick               # 5 runs of ~2 MB (CI, seconds)

One real trace (default: HTA's NCCL rank, A100, collectives and memcpy) is tiled to
``--run-mb`` of JSON by ``make_big_trace.py``; the logdir's runs are that file, as hard
links (``--files link``, the default: no disk per run, but every run has the same mtime
and trace start, so the order falls back to the run name) or as copies (``--files copy``:
disk per run; each copy gets its own mtime, one second apart). Either way each run is a
separate path, so its summary is a separate cache entry and it is read and summarised
once, as a distinct trace would be. The incremental step adds one run (a copy, newer) and
must read only that file: the run's ``stderr`` progress line and the answer are checked.
Each measurement is a fresh ``kinetoscope trend LOGDIR --format json`` process measured by
``_proc`` (wall time; peak RSS summed over the process tree). Results go to
``bench/results/trend-<UTC time>.json`` and a table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Optional

from _args import add_common_arguments, product_python, run_product
from _machine import machine_facts
from _proc import measures, outcome_error
from _results import HERE, rel
from _traces import MB, TRACE_NAME, make_tiled, tiles_for

DEFAULT_SRC = "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
QUICK = {"runs": 5, "run_mb": 2.0, "timeout": 300.0}


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=200, help="runs in the logdir")
    p.add_argument("--run-mb", type=float, default=100.0, help="JSON MB (10^6 B) per run")
    p.add_argument("--files", choices=("link", "copy"), default="link", help="how runs are made")
    p.add_argument("--quick", action="store_true", help="5 runs of ~2 MB (CI)")
    p.add_argument("--src", default=DEFAULT_SRC, help="trace to tile (corpus-relative)")
    add_common_arguments(p, "trend", 6 * 3600.0)
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.run_mb, args.timeout = QUICK["runs"], QUICK["run_mb"], QUICK["timeout"]
    return args


def place(src: Path, dest: Path, files: str, mtime: Optional[float] = None) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if files == "link":
        os.link(src, dest)
        return
    shutil.copyfile(src, dest)
    if mtime is not None:
        os.utime(dest, (mtime, mtime))


def make_logdir(trace: Path, runs: int, work: Path, files: str) -> Path:
    logdir = work / "trend" / f"{trace.parent.name}-{runs}-{files}"
    shutil.rmtree(logdir, ignore_errors=True)
    start = trace.stat().st_mtime
    for i in range(runs):
        place(trace, logdir / f"run_{i:04d}" / TRACE_NAME, files, start + i)
    return logdir


def measure(
    python: Path, logdir: Path, cache: Path, work: Path, name: str, args: argparse.Namespace
) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    out, log = work / "out" / f"trend-{name}.json", work / "logs" / f"trend-{name}.log"
    out.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(python), "-m", "kinetoscope", "trend", str(logdir), "--format", "json"]
    outcome = run_product(cmd, args, cache, work, out, log)
    row: dict[str, Any] = {"phase": name, **measures(outcome), "log": rel(log)}
    error = outcome_error(outcome)
    view = json.loads(out.read_bytes()) if error is None else None
    if error is not None:
        row["error"] = error
        row["stderr_tail"] = outcome.stderr_tail[-600:]
    return row, view


def read_counts(log: Path) -> Optional[tuple[int, int]]:
    """The files (summarised or read back, total) of the last progress line."""
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if "summarised" in ln]
    if not lines:
        return None
    done, total = lines[-1].rsplit(" ", 1)[-1].split("/")
    return int(done), int(total)


def summaries_written(cache: Path) -> int:
    return sum(1 for _ in (cache / ".trends").glob("*/views/*.json"))


def run_phases(python: Path, trace: Path, args: argparse.Namespace, work: Path) -> list[Any]:
    logdir = make_logdir(trace, args.runs, work, args.files)
    cache = work / "cache" / f"trend-{args.runs}"
    shutil.rmtree(cache, ignore_errors=True)
    rows = []
    for phase in ("cold", "warm", "incremental"):
        if phase == "incremental":
            newest = logdir / f"run_{args.runs:04d}" / TRACE_NAME
            place(trace, newest, "copy", trace.stat().st_mtime + args.runs + 1)
        before = summaries_written(cache)
        row, view = measure(python, logdir, cache, work, phase, args)
        row["summaries_written"] = summaries_written(cache) - before
        if view is not None:
            row["runs_in_view"] = len(view["runs"])
            row["regressions"] = len(view["regressions"])
        rows.append(row)
        print(
            f"[trend] {phase:<12} {row['seconds']:8.1f} s  peak RSS "
            f"{row['peak_rss_bytes'] / MB:7.0f} MB  new summaries {row['summaries_written']}"
            f"  {row.get('error', 'ok')}",
            flush=True,
        )
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    work = Path(args.work)
    corpus = Path(args.corpus)
    python = product_python(args)
    src = corpus / args.src
    tiler, log = Path(args.tiler), work / "logs" / "make_big_trace.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    one = make_tiled(tiler, corpus, src, 1, work, "x1", 3600.0, log)
    tiles = tiles_for(int(args.run_mb * MB), one.json_bytes)
    tile = make_tiled(tiler, corpus, src, tiles, work, f"x{tiles}", 3 * 3600.0, log)
    how = "hard links" if args.files == "link" else "copies"
    print(
        f"[trend] {args.runs} runs of {tile.json_bytes / MB:.1f} MB JSON "
        f"({tile.gz_bytes / MB:.1f} MB gzip, {tiles} tile(s)) as {how}; "
        f"load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rows = run_phases(python, tile.path, args, work)
    results = {
        "bench": "trend",
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_facts(python),
        "runs": args.runs,
        "files": args.files,
        "trace": {
            "src": tile.src,
            "tiles": tiles,
            "json_bytes": tile.json_bytes,
            "gz_bytes": tile.gz_bytes,
        },
        "rows": rows,
    }
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = Path(args.out) if args.out else HERE / "results" / f"trend-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(f"[trend] results: {rel(out)}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
