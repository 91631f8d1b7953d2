"""Synthetic many-rank runs for ``bench/ranks.py``: one real rank trace, tiled to the asked
size (``make_big_trace.py``), then written once per rank with its rank relabelled.

Layout under the work dir::

    ranks/<tile key>-r<N>/body.gz                                   the events, gzipped once
    ranks/<tile key>-r<N>/logdir/job/rank<r>.pt.trace.json.gz      one file per rank
    ranks/<tile key>-r<N>/meta.json                                 how it was made

A rank's file is two gzip members (a valid gzip stream, as ``gzip -dc`` reads it): its own
header, with ``distributedInfo.rank`` = r and ``world_size`` = N, then the shared events. So
N ranks cost one compression and N file copies, not N compressions.
"""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _traces import TraceFile

EVENTS_KEY = b'"traceEvents": ['
HEAD_BYTES = 1 << 20  # the tiler writes the header keys before the events


@dataclass
class RankRun:
    ranks: int
    logdir: Path  # holds one run, "job", of `ranks` workers
    rank_json_bytes: int
    rank_gz_bytes: int
    reused: bool


def _split_tile(tile: Path, body: Path) -> dict[str, Any]:
    """The tile's header as a dict; its events (from the first one) gzipped into `body`."""
    with gzip.open(tile, "rb") as src:
        head = src.read(HEAD_BYTES)
        at = head.find(EVENTS_KEY)
        if at < 0:
            raise ValueError(f"{tile}: no traceEvents key in its first {HEAD_BYTES} bytes")
        header: dict[str, Any] = json.loads(head[:at] + b'"traceEvents": []}')
        with gzip.open(body, "wb", compresslevel=6) as out:
            out.write(head[at + len(EVENTS_KEY) :])
            shutil.copyfileobj(src, out, 1 << 20)
    return header


def _rank_head(header: dict[str, Any], rank: int, world: int) -> bytes:
    """The gzip member that opens rank `rank`'s file: its header, up to the events' `[`."""
    info = {**header.get("distributedInfo", {}), "rank": rank, "world_size": world}
    keys = {k: v for k, v in header.items() if k != "traceEvents"}  # the events follow
    doc = json.dumps({**keys, "distributedInfo": info})
    return gzip.compress((doc[:-1] + ", " + EVENTS_KEY.decode()).encode())


def make_rank_run(tile: TraceFile, ranks: int, work: Path) -> RankRun:
    """`ranks` relabelled copies of `tile`, or those made before from the same tile."""
    folder = work / "ranks" / f"{tile.key}-r{ranks}"
    job = folder / "logdir" / "job"
    made = {"tile": tile.key, "tile_gz_bytes": tile.gz_bytes, "ranks": ranks}
    meta_path = folder / "meta.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = None
    if isinstance(meta, dict) and all(meta.get(k) == v for k, v in made.items()):
        return RankRun(ranks, folder / "logdir", tile.json_bytes, meta["rank_gz_bytes"], True)
    shutil.rmtree(folder, ignore_errors=True)
    job.mkdir(parents=True)
    body = folder / "body.gz"
    header = _split_tile(tile.path, body)
    for rank in range(ranks):
        with open(job / f"rank{rank}.pt.trace.json.gz", "wb") as out:
            out.write(_rank_head(header, rank, ranks))
            with open(body, "rb") as events:
                shutil.copyfileobj(events, out, 1 << 20)
    gz_bytes = (job / "rank0.pt.trace.json.gz").stat().st_size
    meta_path.write_text(json.dumps({**made, "rank_gz_bytes": gz_bytes}), encoding="utf-8")
    return RankRun(ranks, folder / "logdir", tile.json_bytes, gz_bytes, False)
