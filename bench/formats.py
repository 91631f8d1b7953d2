#!/usr/bin/env python3
"""The same trace in its two forms, JSON and Perfetto protobuf: time to load it (a fresh
process building the model) and a cold `kinetoscope report`, best of `--repeat`, and
their ratio.

    .venv/bin/python bench/formats.py [--trace FILE.json.gz] [--repeat 3]

The protobuf form is written from the JSON trace by tests/perfetto_writer.py (the test
suite's writer) into a temporary folder. Default trace: the corpus's H100 OWLv2 trace.
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
LOAD = (
    "import sys, time; from kinetoscope.ingest.build import build_model; "
    "t = time.perf_counter(); m = build_model(sys.argv[1]); "
    "print(time.perf_counter() - t, len(m))"
)


def best(cmd: list[str], repeat: int) -> tuple[float, str]:
    """The shortest wall time of `repeat` runs of `cmd`, and the last one's output."""
    times, out = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - start)
        out = done.stdout
    return min(times), out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default=str(DEFAULT_TRACE))
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    python = str(REPO / ".venv" / "bin" / "python")
    sys.path.insert(0, str(REPO / "tests"))
    from perfetto_writer import write_perfetto_file

    with tempfile.TemporaryDirectory(prefix="kinetoscope-formats-") as tmp:
        forms = {"json": Path(args.trace), "protobuf": Path(tmp) / "worker0.pb.gz"}
        write_perfetto_file(str(forms["json"]), str(forms["protobuf"]))
        rows = {}
        for name, path in forms.items():
            loads = []
            for _ in range(args.repeat):
                out = subprocess.run(
                    [python, "-c", LOAD, str(path)], capture_output=True, text=True, check=True
                ).stdout.split()
                loads.append(float(out[0]))
            events = int(out[1])
            env_report = [python, "-m", "kinetoscope", "report", str(path), "--format", "json"]
            report, _ = best([*env_report, "--no-cache"], args.repeat)
            rows[name] = (path.stat().st_size / 1e6, events, min(loads), report)
    print(f"trace: {args.trace} (best of {args.repeat}; {os.cpu_count()} cores)")
    print("| form | file MB | events | load s | events/s | cold report s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (mb, events, load, report) in rows.items():
        rate = events / load
        print(f"| {name} | {mb:.1f} | {events} | {load:.3f} | {rate:,.0f} | {report:.2f} |")
    ratio_load = rows["protobuf"][2] / rows["json"][2]
    ratio_report = rows["protobuf"][3] / rows["json"][3]
    print(f"protobuf / json: load {ratio_load:.1f}x, cold report {ratio_report:.1f}x")


if __name__ == "__main__":
    main()
