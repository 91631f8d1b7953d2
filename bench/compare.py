#!/usr/bin/env python3
"""Print the differences between two benchmark results files.

    python bench/compare.py A.json B.json

Files are matched by label (``100MB``, ``1GB``, ...). For each, G and every tool's wall time
and peak RSS are shown as ``A -> B (change %)``; a change of wall time is only meaningful when
G (the gzip floor) stayed about the same, so G's change is shown too. Machine facts that
differ (commit, versions, cores, memory) are listed first, and route latencies last.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

MB = 1_000_000
TOOLS = ("kinetoscope_cold", "kinetoscope_warm", "torch_tb_profiler", "hta")


def load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or "files" not in doc:
        raise SystemExit(f"{path}: not a bench results file")
    return doc


def flat(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}."))
    else:
        out[prefix.rstrip(".")] = d
    return out


def change(a: Optional[float], b: Optional[float], scale: float = 1.0, spec: str = ".2f") -> str:
    if a is None and b is None:
        return "-"
    if a is None or b is None:
        left = "-" if a is None else format(a / scale, spec)
        right = "-" if b is None else format(b / scale, spec)
        return f"{left} -> {right}"
    pct = f" ({(b - a) / a * 100:+.1f} %)" if a else ""
    return f"{a / scale:{spec}} -> {b / scale:{spec}}{pct}"


def num(d: dict[str, Any], key: str) -> Optional[float]:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    lines: list[str] = [f"A: {a.get('started_utc')}   B: {b.get('started_utc')}"]
    fa, fb = flat(a.get("machine", {})), flat(b.get("machine", {}))
    for key in sorted(set(fa) | set(fb)):
        if fa.get(key) != fb.get(key):
            lines.append(f"  machine.{key}: {fa.get(key)} -> {fb.get(key)}")
    rows_a = {r["label"]: r for r in a["files"]}
    rows_b = {r["label"]: r for r in b["files"]}
    for label in [lab for lab in rows_a if lab in rows_b]:
        ra, rb = rows_a[label], rows_b[label]
        lines.append("")
        lines.append(
            f"{label}: JSON MB {change(ra['json_bytes'], rb['json_bytes'], MB, '.0f')}, "
            f"G s {change(num(ra.get('gzip', {}), 'seconds'), num(rb.get('gzip', {}), 'seconds'))}"
        )
        for tool in TOOLS:
            ta, tb = ra["tools"].get(tool), rb["tools"].get(tool)
            if ta is None and tb is None:
                continue
            ta, tb = ta or {}, tb or {}
            errs = [f"{side}: {t['error']}" for side, t in (("A", ta), ("B", tb)) if "error" in t]
            lines.append(
                f"  {tool:18} s {change(num(ta, 'seconds'), num(tb, 'seconds'))}   "
                f"xG {change(num(ta, 'ratio_to_gzip'), num(tb, 'ratio_to_gzip'))}   "
                f"RSS MB {change(num(ta, 'peak_rss_bytes'), num(tb, 'peak_rss_bytes'), MB, '.0f')}"
            )
            for e in errs:
                lines.append(f"  {'':18} error {e[:120]}")
    only = sorted(set(rows_a) ^ set(rows_b))
    if only:
        lines.append(f"\nfiles in one run only: {', '.join(only)}")
    la, lb = a.get("load") or {}, b.get("load") or {}
    pa, pb = la.get("per_route") or {}, lb.get("per_route") or {}
    if pa or pb:
        lines.append("")
        lines.append(f"load: ready s {change(num(la, 'ready_s'), num(lb, 'ready_s'))}")
        for route in [r for r in pa if r in pb] + [r for r in pb if r not in pa]:
            xa, xb = pa.get(route, {}), pb.get(route, {})
            lines.append(
                f"  {route:22} p50 ms {change(num(xa, 'p50_ms'), num(xb, 'p50_ms'), 1, '.1f')}   "
                f"p99 ms {change(num(xa, 'p99_ms'), num(xb, 'p99_ms'), 1, '.1f')}   "
                f"errors {xa.get('errors', '-')} -> {xb.get('errors', '-')}"
            )
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("\n".join(compare(load(argv[0]), load(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
