"""What the benchmarks of many files (`ranks.py`, `trend.py`) share of their command line:
the measurement bounds, where files go, the corpus and the tiler, the product interpreter,
and one measured run of the product."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from _machine import meminfo_total
from _proc import Outcome, run_measured
from _results import HERE, REPO

DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
DEFAULT_TILER = REPO.parent / "shared" / "tools" / "make_big_trace.py"


def add_common_arguments(p: argparse.ArgumentParser, name: str, timeout: float) -> None:
    """`--timeout` (default `timeout`), `--rss-cap-gb`, `--out` (default
    bench/results/`name`-<UTC>.json), `--work`, `--corpus`, `--tiler`, `--python`."""
    p.add_argument("--timeout", type=float, default=timeout, help="seconds per measurement")
    p.add_argument("--rss-cap-gb", type=float, help="kill a run above this summed RSS")
    p.add_argument("--out", help=f"results file (default bench/results/{name}-<UTC>.json)")
    p.add_argument("--work", default=str(HERE / "scratch"), help="generated files (git-ignored)")
    p.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    p.add_argument("--tiler", default=str(DEFAULT_TILER))
    p.add_argument("--python", help="product interpreter (default <repo>/.venv/bin/python)")


def rss_cap_bytes(args: argparse.Namespace) -> int:
    """`--rss-cap-gb`, else 85 % of the machine's memory."""
    if args.rss_cap_gb:
        return int(args.rss_cap_gb * (1 << 30))
    return int((meminfo_total() or 8 << 30) * 0.85)


def product_python(args: argparse.Namespace) -> Path:
    return Path(args.python) if args.python else REPO / ".venv" / "bin" / "python"


def run_product(
    cmd: list[str], args: argparse.Namespace, cache: Path, work: Path, out: Path, log: Path
) -> Outcome:
    """`cmd` (a kinetoscope command) measured in its own session, with `cache` as its
    KINETOSCOPE_CACHE_DIR, its stdout to `out` and stderr to `log`."""
    env = dict(os.environ, KINETOSCOPE_CACHE_DIR=str(cache))
    return run_measured(
        cmd,
        timeout=args.timeout,
        rss_cap_bytes=rss_cap_bytes(args),
        env=env,
        cwd=work,
        stdout=out,
        stderr=log,
    )
