"""The results of a benchmark run: ratios and targets per file, the JSON file, the table.

Paths in the results are relative to the repository (``rel``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from _traces import MB

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

OURS = ("kinetoscope_cold", "kinetoscope_warm")
ANCHORS = ("torch_tb_profiler", "hta")
SHORT = {
    "kinetoscope_cold": "ours cold",
    "kinetoscope_warm": "ours warm",
    "torch_tb_profiler": "tb-profiler",
    "hta": "HTA",
}
# Issue 13: at every size from 50 MB to 4 GB.
TARGETS = {
    "cold_max_gzip_ratio": 3.0,
    "max_rss_per_json": 1.0,
    "warm_max_seconds": 0.3,
    "min_speedup_vs_anchors": 20.0,
}
COLD_KEY = f"cold_le_{TARGETS['cold_max_gzip_ratio']:g}x_gzip"
WARM_KEY = f"warm_le_{TARGETS['warm_max_seconds']:g}s"


def rel(path: Path) -> str:
    return os.path.relpath(path, REPO)


def derive(row: dict[str, Any]) -> None:
    """Ratios to G and to the JSON size, and our speedups against each anchor."""
    g = row.get("gzip", {}).get("seconds")
    json_bytes = row["json_bytes"]
    tools: dict[str, dict[str, Any]] = row["tools"]
    for m in tools.values():
        s = m.get("seconds")
        rss = m.get("peak_rss_bytes")
        if isinstance(s, (int, float)) and g:
            m["ratio_to_gzip"] = s / g
        if isinstance(rss, int) and "error" not in m:
            m["rss_per_json"] = rss / json_bytes
    for ours in OURS:
        mine = tools.get(ours, {}).get("seconds")
        speedups: dict[str, Optional[float]] = {}
        for anchor in ANCHORS:
            theirs = tools.get(anchor, {}).get("seconds")
            ok = isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and mine > 0
            speedups[anchor] = (theirs / mine) if ok else None  # type: ignore[operator]
        if ours in tools:
            tools[ours]["speedup_vs"] = speedups


def targets_for(row: dict[str, Any]) -> dict[str, Optional[bool]]:
    tools = row["tools"]
    cold = tools.get("kinetoscope_cold", {})
    warm = tools.get("kinetoscope_warm", {})
    out: dict[str, Optional[bool]] = {
        COLD_KEY: None,
        "rss_le_json": None,
        WARM_KEY: None,
        "speedup_ge_20x_torch_tb_profiler": None,
        "speedup_ge_20x_hta": None,
    }
    if "ratio_to_gzip" in cold:
        out[COLD_KEY] = cold["ratio_to_gzip"] <= TARGETS["cold_max_gzip_ratio"]
    if "rss_per_json" in cold:
        out["rss_le_json"] = cold["rss_per_json"] <= TARGETS["max_rss_per_json"]
    if isinstance(warm.get("seconds"), (int, float)):
        out[WARM_KEY] = warm["seconds"] <= TARGETS["warm_max_seconds"]
    for anchor in ANCHORS:
        sp = (cold.get("speedup_vs") or {}).get(anchor)
        if sp is not None:
            out[f"speedup_ge_20x_{anchor}"] = sp >= TARGETS["min_speedup_vs_anchors"]
    return out


def _fmt(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, float)):
        return format(v, spec)
    return str(v)


def print_table(results: dict[str, Any]) -> None:
    cols = [
        ("file", 14), ("JSON MB", 8), ("G s", 7), ("tool", 12), ("s", 8), ("xG", 7),
        ("vs tb-prof", 10), ("vs HTA", 8), ("RSS MB", 8), ("RSS/JSON", 8),
    ]  # fmt: skip
    header = " ".join(name.rjust(w) if i else name.ljust(w) for i, (name, w) in enumerate(cols))
    print()
    print(header)
    print("-" * len(header))
    for row in results["files"]:
        g = row.get("gzip", {}).get("seconds")
        first = True
        for tool, m in row["tools"].items():
            sp = m.get("speedup_vs") or {}
            rss = m.get("peak_rss_bytes")
            cells = [
                row["label"] if first else "",
                _fmt(row["json_bytes"] / MB, ".0f") if first else "",
                _fmt(g, ".2f") if first else "",
                SHORT.get(tool, tool),
            ]
            if "error" in m:
                cells.append("error: " + str(m["error"])[:70])
            else:
                cells += [
                    _fmt(m.get("seconds"), ".2f"),
                    _fmt(m.get("ratio_to_gzip"), ".2f"),
                    _fmt(sp.get("torch_tb_profiler"), ".1f"),
                    _fmt(sp.get("hta"), ".1f"),
                    _fmt(rss / MB if isinstance(rss, int) else None, ".0f"),
                    _fmt(m.get("rss_per_json"), ".2f"),
                ]
            print(" ".join(_cell(c, w, i) for i, (c, (_, w)) in enumerate(zip(cells, cols))))
            first = False
        if not row["tools"]:
            print(row["label"])
        t = row.get("targets", {})
        if t:
            marks = " ".join(f"{k}={_mark(v)}" for k, v in t.items())
            print(f"{'':14} targets: {marks}")
    _print_load(results.get("load"))
    _print_load(results.get("load_warm"))


def _print_load(load: Optional[dict[str, Any]]) -> None:
    if not load:
        return
    print()
    if "error" in load:
        print(f"load ({load.get('file')}): error: {load['error']}")
        return
    print(
        f"load ({load.get('file')}, {load.get('cache', '?')} cache): "
        f"ready after {_fmt(load.get('ready_s'), '.2f')} s, "
        f"{load['requests']} requests max, {load['concurrency']} concurrent, "
        f"{_fmt(load.get('seconds'), '.1f')} s"
        + (", accepting gzip" if load.get("accept_gzip") else "")
    )
    print(f"{'route':24} {'n':>6} {'p50 ms':>9} {'p90 ms':>9} {'p99 ms':>9} {'errors':>7}")
    for route, r in load.get("per_route", {}).items():
        print(
            f"{route:24} {r['count']:>6} {_fmt(r['p50_ms'], '.1f'):>9} "
            f"{_fmt(r.get('p90_ms'), '.1f'):>9} {_fmt(r['p99_ms'], '.1f'):>9} {r['errors']:>7}"
        )


def _mark(v: Optional[bool]) -> str:
    return "-" if v is None else ("ok" if v else "MISS")


def _cell(text: str, width: int, index: int) -> str:
    return text.ljust(width) if index in (0, 3) or text.startswith("error") else text.rjust(width)


def write_results(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1, sort_keys=False)
        f.write("\n")
    tmp.replace(path)
