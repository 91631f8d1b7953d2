"""Big traces for the benchmark, made at run time by tiling a real corpus trace.

Layout under the work dir, one folder per tiled file::

    traces/<key>/logdir/<key>/worker0.1700000000000.pt.trace.json.gz   the trace
    traces/<key>/hta/<key>.json.gz -> ../logdir/<key>/worker0...         for HTA
    traces/<key>/meta.json                                               how it was made

``logdir`` holds one run (named ``<key>``) with one worker and one span, so every tool sees
the same thing. ``meta.json`` records the source, the tile count and the sizes; a file whose
meta matches is reused instead of being made again.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional

TRACE_NAME = "worker0.1700000000000.pt.trace.json.gz"
MB = 1_000_000


@dataclass
class TraceFile:
    """One benchmark input."""

    label: str
    key: str
    src: str  # relative to the corpus
    tiles: int
    path: Path
    logdir: Path
    run: str
    worker: str
    span: str
    hta_dir: Path
    json_bytes: int
    gz_bytes: int
    make_seconds: Optional[float]
    reused: bool


def uncompressed_size(path: Path) -> int:
    """Bytes of the decompressed stream (every gzip member), read in 1 MiB chunks."""
    total = 0
    with gzip.open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return total
            total += len(chunk)


def source_stem(src: Path) -> str:
    name = src.name
    for suffix in (".gz", ".json", ".pt.trace"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    return name[:48] or "trace"


def _meta_path(folder: Path) -> Path:
    return folder / "meta.json"


def _read_meta(folder: Path) -> Optional[dict[str, object]]:
    try:
        with open(_meta_path(folder), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def make_tiled(
    tiler: Path,
    corpus: Path,
    src: Path,
    tiles: int,
    work: Path,
    label: str,
    timeout: float,
    log: Optional[Path] = None,
) -> TraceFile:
    """Tile ``src`` ``tiles`` times into its own run folder, or reuse a matching file."""
    src_rel = os.path.relpath(src, corpus)
    made = {"src": src_rel, "src_bytes": src.stat().st_size, "tiles": tiles}
    key = f"{source_stem(src)}-x{tiles}"
    return _made_file(
        work, key, label, made, lambda path: _tile(tiler, src, tiles, path, timeout, log)
    )


def make_cut(tiled: TraceFile, target_bytes: int, work: Path, label: str) -> TraceFile:
    """`tiled` cut to about `target_bytes` of JSON (`_cut.py`, in a process of its own),
    in its own run folder, or the file made before from the same tiling and size."""
    made = {"src": tiled.src, "tiles": tiled.tiles, "cut_bytes": target_bytes}
    key = f"{tiled.key}-cut{target_bytes // MB}"
    return _made_file(work, key, label, made, lambda path: _cut(tiled.path, target_bytes, path))


def _made_file(
    work: Path,
    key: str,
    label: str,
    made: dict[str, object],
    make: Callable[[Path], tuple[int, float]],
) -> TraceFile:
    """The trace `key` in its own run folder: the file made before with the same `made`
    (what it is made of), or `make(path)` (its JSON size and seconds) with its meta."""
    folder = work / "traces" / key
    logdir = folder / "logdir"
    path = logdir / key / TRACE_NAME
    json_bytes = _reusable(folder, made, path)
    make_seconds: Optional[float] = None
    if json_bytes is None:
        json_bytes, make_seconds = make(path)
        meta = {**made, "json_bytes": json_bytes, "gz_bytes": path.stat().st_size}
        with open(_meta_path(folder), "w", encoding="utf-8") as f:
            json.dump({**meta, "make_seconds": make_seconds}, f, indent=1)
    hta_dir = folder / "hta"
    _link_for_hta(hta_dir / (key + ".json.gz"), path)
    return TraceFile(
        label=label,
        key=key,
        src=str(made["src"]),
        tiles=int(made["tiles"]),  # type: ignore[call-overload]
        path=path,
        logdir=logdir,
        run=key,
        worker="worker0",
        span="1",
        hta_dir=hta_dir,
        json_bytes=json_bytes,
        gz_bytes=path.stat().st_size,
        make_seconds=make_seconds,
        reused=make_seconds is None,
    )


def _reusable(folder: Path, made: dict[str, object], path: Path) -> Optional[int]:
    """The JSON size of the file made before from the same source and tile count, or None
    (then the folder's old file and meta are removed)."""
    meta = _read_meta(folder)
    if (
        meta is not None
        and all(meta.get(k) == v for k, v in made.items())
        and path.is_file()
        and meta.get("gz_bytes") == path.stat().st_size
        and isinstance(meta.get("json_bytes"), int)
    ):
        return int(meta["json_bytes"])  # type: ignore[call-overload]
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.iterdir():
        old.unlink()
    _meta_path(folder).unlink(missing_ok=True)
    return None


def _tile(
    tiler: Path, src: Path, tiles: int, path: Path, timeout: float, log: Optional[Path]
) -> tuple[int, float]:
    """Run the tiler into ``path``; its JSON size and the seconds it took."""
    tmp = path.parent.parent / (path.parent.name + ".partial.json.gz")
    started = time.perf_counter()
    with open(log or os.devnull, "ab") as err:
        subprocess.run(
            [sys.executable, str(tiler), str(src), str(tiles), str(tmp)],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            timeout=timeout,
        )
    make_seconds = time.perf_counter() - started
    json_bytes = uncompressed_size(tmp)
    tmp.replace(path)
    return json_bytes, make_seconds


def _cut(tiled: Path, target_bytes: int, path: Path) -> tuple[int, float]:
    """Run `_cut.py` on ``tiled`` into ``path``; its JSON size and the seconds it took."""
    tmp = path.parent.parent / (path.parent.name + ".partial.json.gz")
    started = time.perf_counter()
    cut = [sys.executable, str(Path(__file__).with_name("_cut.py")), str(tiled), str(tmp)]
    out = subprocess.run(
        [*cut, str(target_bytes)],
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    make_seconds = time.perf_counter() - started
    tmp.replace(path)
    return int(out.stdout.split()[-1]), make_seconds


def _link_for_hta(link: Path, path: Path) -> None:
    """HTA reads a folder of traces: a link to the file in a folder of its own."""
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(os.path.relpath(path, link.parent))


def tiles_for(target_bytes: int, one_tile_bytes: int) -> int:
    """Tile count whose output is closest to ``target_bytes``."""
    return max(1, round(target_bytes / max(1, one_tile_bytes)))


def describe(tf: TraceFile, repo: Path) -> dict[str, object]:
    """JSON-ready description with paths relative to the repo."""
    d = asdict(tf)
    for name in ("path", "logdir", "hta_dir"):
        d[name] = os.path.relpath(d[name], repo)
    return d
