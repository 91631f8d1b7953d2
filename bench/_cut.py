"""A tiled trace cut to a size between whole tiles: a profile stopped part-way through.

Tiling makes whole multiples of a source trace (the H100 mix: 36, 72 MB), so a goal
stated at a size between them (≤ 2 G at 50 MB) was measured at the nearest multiple. The
cut keeps the header, every metadata event and every event that ends at or before one
time, chosen so the JSON is about the size asked; what was still running then is left
out, as Kineto leaves out what has not ended when the profiler stops. Written as the
tiler writes (one event a line, gzipped).

Reads the whole tiled file into Python objects (~10x its JSON): meant for the small
sizes, where the fixed cost of a cold report weighs most. Run as its own process
(`python bench/_cut.py SRC OUT BYTES`, as `_traces.make_cut` does): a child forked by a
process that held that memory reports it as its own peak RSS (`ru_maxrss` counts the
pages it had before its exec).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any


def _end(event: dict[str, Any]) -> float:
    ts = event.get("ts")
    if not isinstance(ts, (int, float)):
        return float("-inf")  # untimed: kept (nothing says when it happened)
    dur = event.get("dur")
    return float(ts) + (float(dur) if isinstance(dur, (int, float)) else 0.0)


def cut_time(events: list[dict[str, Any]], budget: int) -> float:
    """The latest end time such that the events ending by it take at most `budget`
    bytes (each as the tiler writes it, with its separator)."""
    ends = sorted((_end(e), len(json.dumps(e)) + 2) for e in events)
    used, cut = 0, float("-inf")
    for end, size in ends:
        if used + size > budget:
            break
        used += size
        cut = end
    return cut


def cut_to_size(src: Path, out: Path, target_bytes: int) -> int:
    """Write `src` (a tiled trace, gzipped) cut to about `target_bytes` of JSON as `out`;
    its JSON size."""
    with gzip.open(src, "rb") as f:
        doc = json.loads(f.read())
    events = doc.pop("traceEvents")
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    head = "{" + "".join(f"{json.dumps(k)}: {json.dumps(v)},\n" for k, v in doc.items())
    fixed = len(head) + len('"traceEvents": [\n\n]}\n') + sum(len(json.dumps(e)) + 2 for e in meta)
    cut = cut_time(body, max(0, target_bytes - fixed))
    kept = meta + [e for e in body if _end(e) <= cut]  # in the file's own order
    text = head + '"traceEvents": [\n' + ",\n".join(json.dumps(e) for e in kept) + "\n]}\n"
    data = text.encode("utf-8")
    with gzip.open(out, "wb") as f:
        f.write(data)
    return len(data)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(cut_to_size(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
