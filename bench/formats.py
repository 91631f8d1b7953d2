#!/usr/bin/env python3
"""The same trace in its two forms, JSON and Perfetto protobuf: time to load it (a fresh
process building the model: wall and CPU seconds, peak RSS) and a cold `kinetoscope
report`, best of `--repeat`, and their ratios.

    .venv/bin/python bench/formats.py [--trace FILE.json.gz] [--tiles N] [--repeat 3]
                                      [--python-reader] [--skip-report]

The protobuf form is written from the JSON trace by tests/perfetto_writer.py (the test
suite's writer). Default trace: the corpus's H100 OWLv2 trace. `--tiles N` tiles it N
times along the time axis first, both forms alike (make_big_trace.py beside the corpus for
the JSON, bench/perfetto_tiles.py for the protobuf), into bench/scratch/formats/ (kept
for the next run). `--python-reader` also loads the protobuf form with the protobuf
runtime's reader (KINETOSCOPE_SCANNER=python: the reader before the compiled one; ~20k
events/s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import REPO

DEFAULT = REPO.parent / "shared" / "corpus" / "tracelens/tests/traces/h100"
DEFAULT_TRACE = DEFAULT / "google_owlv2-large-patch14-ensemble__1016001.json.gz"
TILER = REPO.parent / "shared" / "tools" / "make_big_trace.py"
SCRATCH = REPO / "bench" / "scratch" / "formats"
# Peak RSS from VmHWM (kB): ru_maxrss of a child carries over the peak of the process that
# forked it (Linux keeps it across exec), here the bench itself holding a whole trace.
LOAD = (
    "import sys, time; from kinetoscope.ingest.build import build_model; "
    "t, c = time.perf_counter(), time.process_time(); m = build_model(sys.argv[1]); "
    "w, c = time.perf_counter() - t, time.process_time() - c; "
    "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')]; "
    "print(w, c, len(m), hwm[0])"
)


def best(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """The shortest wall time of `repeat` runs of `cmd`."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        times.append(time.perf_counter() - start)
    return min(times)


def forms(trace: Path, tiles: int, folder: Path) -> dict[str, Path]:
    """The trace's JSON and protobuf forms (tiled when asked)."""
    sys.path.insert(0, str(REPO / "tests"))
    from perfetto_writer import write_perfetto_file

    if tiles <= 1:
        out = {"json": trace, "protobuf": folder / "worker0.pb.gz"}
        write_perfetto_file(str(trace), str(out["protobuf"]))
        return out
    folder = SCRATCH / f"{trace.name.split('.')[0]}-x{tiles}"
    folder.mkdir(parents=True, exist_ok=True)
    out = {"json": folder / "worker0.pt.trace.json.gz", "protobuf": folder / "worker0.pb.gz"}
    python = sys.executable
    if not out["json"].exists():
        subprocess.run([python, str(TILER), str(trace), str(tiles), str(out["json"])], check=True)
    if not out["protobuf"].exists():
        here = Path(__file__).resolve().parent
        tiler = [python, str(here / "perfetto_tiles.py"), str(trace), str(tiles)]
        subprocess.run([*tiler, str(out["protobuf"])], check=True, stdout=subprocess.DEVNULL)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default=str(DEFAULT_TRACE))
    p.add_argument("--tiles", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--python-reader", action="store_true")
    p.add_argument("--skip-report", action="store_true")
    args = p.parse_args()
    python = str(REPO / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="kinetoscope-formats-") as tmp:
        paths = forms(Path(args.trace), args.tiles, Path(tmp))
        runs = [("json", paths["json"], None), ("protobuf", paths["protobuf"], None)]
        if args.python_reader:
            reader = {**os.environ, "KINETOSCOPE_SCANNER": "python"}
            runs.append(("protobuf, Python reader", paths["protobuf"], reader))
        rows = {}
        for name, path, env in runs:
            loads = []
            for _ in range(args.repeat):
                out = subprocess.run(
                    [python, "-c", LOAD, str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                ).stdout.split()
                loads.append((float(out[0]), float(out[1]), int(out[2]), int(out[3]) / 1024))
            report = 0.0
            if not args.skip_report:
                command = [python, "-m", "kinetoscope", "report", str(path), "--format", "json"]
                report = best([*command, "--no-cache"], args.repeat, env)
            wall, cpu = min(x[0] for x in loads), min(x[1] for x in loads)
            rss = min(x[3] for x in loads)
            rows[name] = (path.stat().st_size / 1e6, loads[0][2], wall, cpu, rss, report)
    print(f"trace: {args.trace} x{args.tiles} (best of {args.repeat}; {os.cpu_count()} cores)")
    print("| form | file MB | events | load s | load CPU s | events/s | peak RSS MB | report s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, (mb, events, wall, cpu, rss, report) in rows.items():
        print(
            f"| {name} | {mb:.1f} | {events} | {wall:.3f} | {cpu:.3f} | {events / wall:,.0f} | "
            f"{rss:.0f} | {report:.2f} |"
        )
    json_row = rows["json"]
    for name, row in rows.items():
        if name != "json":
            load, cpu = row[2] / json_row[2], row[3] / json_row[3]
            report = "" if args.skip_report else f", cold report {row[5] / json_row[5]:.2f}x"
            print(
                f"{name} / json: load {load:.2f}x (CPU {cpu:.2f}x), "
                f"peak RSS {row[4] / json_row[4]:.2f}x{report}"
            )


if __name__ == "__main__":
    main()
