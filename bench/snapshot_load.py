#!/usr/bin/env python3
"""Load a big memory snapshot built at run time: time and peak RSS of reading it with the
restricted unpickler and computing the `memory_snapshot` view.

    .venv/bin/python bench/snapshot_load.py [--mb 100] [--unique-frames] [--keep]

The snapshot has the layout `torch.cuda.memory._snapshot()` documents: one device,
allocations and frees with 12-frame Python stacks, segments of blocks alive at the end.
By default frames come from a pool that pickle's memo shares (as torch's own dumps do:
the H100 snapshot is mostly BINGETs); `--unique-frames` makes every stack's frames new
objects, the costliest layout per byte. The file goes to a temporary folder and is removed
(`--keep` prints its path instead). Each measure runs in a fresh process.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time

FRAMES = 12


def _frames(i: int, pool: list[list[dict]], unique: bool) -> list[dict]:
    if not unique:
        return pool[i % len(pool)]
    return [
        {
            "filename": f"/src/model/layer_{i % 997}_{k}.py",
            "line": i % 4000 + k,
            "name": f"f{i}_{k}",
        }
        for k in range(FRAMES)
    ]


def _entry(action: str, addr: int, stream: int, t: int, frames: list[dict]) -> dict:
    return {
        "action": action,
        "addr": addr,
        "size": 4096,
        "stream": stream,
        "time_us": t,
        "frames": frames,
    }


def _history(count: int, pool: list[list[dict]], unique: bool) -> tuple[list[dict], list[int]]:
    """`count` steps: every third frees the last live allocation, the others allocate."""
    entries: list[dict] = []
    live: list[int] = []
    t = 1_700_000_000_000_000
    for i in range(count):
        t += 3
        frames = _frames(i, pool, unique)
        if live and i % 3 == 2:
            addr = live.pop()
            entries.append(_entry("free_requested", addr, 0, t, frames))
            entries.append(_entry("free_completed", addr, 0, t, frames))
        else:
            addr = 0x7F0000000000 + i * 4096
            live.append(addr)
            entries.append(_entry("alloc", addr, i % 2, t, frames))
    return entries, live


def build(path: str, target_mb: float, unique: bool) -> int:
    pool = [
        [
            {"filename": f"/src/model/layer_{s}.py", "line": 10 * k + s, "name": f"fn_{s}_{k}"}
            for k in range(FRAMES)
        ]
        for s in range(5000)
    ]
    per_step = 710 if unique else 90  # pickled bytes per step (a free is 2 entries), measured
    entries, live = _history(int(target_mb * 1e6 / per_step), pool, unique)
    blocks = [
        {
            "address": a,
            "size": 4096,
            "requested_size": 4096,
            "state": "active_allocated",
            "frames": pool[0],
        }
        for a in live
    ]
    segment = {
        "device": 0,
        "address": 0x7F0000000000,
        "total_size": 4096 * (len(live) + 1),
        "stream": 0,
        "blocks": blocks,
    }
    with open(path, "wb") as f:
        pickle.dump({"segments": [segment], "device_traces": [entries]}, f, protocol=5)
    return len(entries)


def measure(path: str) -> None:
    from kinetoscope.analysis.memory.snapshot import device_views
    from kinetoscope.ingest.snapshot import collector_paused, read_snapshot

    start = time.perf_counter()
    data = read_snapshot(path)
    read_s = time.perf_counter() - start
    with collector_paused():  # as the route computes it (api/snapshots.py)
        (device,) = device_views(data)
    total_s = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"read {read_s:.1f} s, read + view {total_s:.1f} s, peak RSS {peak_mb:.0f} MB, "
        f"peak {device['peak_allocated_bytes']} B, {device['history_entries']} entries"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--unique-frames", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return 0
    folder = tempfile.mkdtemp(prefix="kinetoscope-snapshot-")
    path = os.path.join(folder, "snapshot.pickle")
    entries = build(path, args.mb, args.unique_frames)
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB, {entries} entries")
    try:
        return subprocess.call([sys.executable, __file__, "--measure", path])
    finally:
        if args.keep:
            print(f"kept {path}")
        else:
            os.remove(path)
            os.rmdir(folder)


if __name__ == "__main__":
    sys.exit(main())
