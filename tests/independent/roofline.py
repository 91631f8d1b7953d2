"""The Operators view's roofline fields per op name, computed again from the raw trace JSON
(docs/metrics.md "Roofline"): each aten call's FLOPs and bytes from its shapes
(`roofline_ops.work`), its device time (the GPU activities its launches, and those of the
ops inside it, started), the device's peaks from data/device_peaks.json matched by name
(exact, model family) or, unnamed, by memory and CU count, and the row sums.

Standard library only (and `raw`): nothing from the product is imported.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from .raw import RawTrace, read_raw
from .roofline_ops import work

PEAKS = Path(__file__).resolve().parents[2] / "tb_plugin" / "data" / "device_peaks.json"
OPS = {"cpu_op", "operator"}
NODES = OPS | {"user_annotation"}
LAUNCH = {"cuda_runtime", "runtime", "cuda_driver", "mtia_runtime", "xpu_runtime"}
GPU = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "mtia_ccp_events"}
CAT_TYPE = re.compile(r"CatArrayBatchedCopy\w*<\s*([^,<>]*(?:<\s*(\d+)u?\s*>)?)")
CXX = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long": 8, "int": 4}


def cat_element_size(kernel: str) -> int | None:
    m = CAT_TYPE.search(kernel)
    if not m:
        return None
    return int(m.group(2)) if m.group(2) else CXX.get(m.group(1).strip())


# --- device peaks ---------------------------------------------------------------------------

DECOR = re.compile(r"NVIDIA|AMD|INSTINCT|TESLA|VF|OAM|\d+GB|HBM\d*E?")


def _fits(entry: dict[str, Any], gib: float | None, sms: int | None, strict: bool) -> bool:
    mem = entry.get("memory_gib")
    if mem and (gib is None if strict else False):
        return False
    if mem and gib is not None and not mem[0] <= gib <= mem[1]:
        return False
    return not (entry.get("sms") and sms is not None and sms != entry["sms"])


def match_peaks(props: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """(entry, how) for a `deviceProperties` entry: its name fully matching an entry's
    pattern; else its model token (vendor, VF, OAM, sizes dropped) naming one entry of a
    family its form and memory allow; else, nameless, an entry allowing it by memory
    and CU count."""
    entries = json.loads(PEAKS.read_text())["devices"]
    name = str(props.get("name") or "").strip()
    mem = props.get("totalGlobalMem")
    gib = mem / 2**30 if isinstance(mem, (int, float)) and mem > 0 else None
    sms = props.get("numSms") if isinstance(props.get("numSms"), int) else None
    if not name:
        for e in entries:
            if e.get("match_unnamed") and gib and sms == e.get("sms") and _fits(e, gib, sms, True):
                return e, "unnamed"
        return None
    for e in entries:
        if any(re.fullmatch(p, name, re.I) for p in e["names"]) and _fits(e, gib, sms, True):
            return e, "exact"
    words = [w for w in re.split(r"[\s\-_/,]+", name.upper()) if w and not DECOR.fullmatch(w)]
    forms = {
        ("SXM" if w.startswith("SXM") else w) for w in words if re.fullmatch(r"SXM\d*|PCIE|NVL", w)
    }
    model = [w for w in words if not re.fullmatch(r"SXM\d*|PCIE|NVL", w)]
    if len(model) != 1 or len(forms) > 1:
        return None
    family = [e for e in entries if str(e.get("family", "")).upper() == model[0]]
    several = len({e.get("form") for e in family}) > 1
    said = [int(g) * 1e9 / 2**30 for g in re.findall(r"(\d+)GB\b", name.upper())]
    found = [
        e
        for e in family
        if (
            str(e.get("form", "")).upper() in forms
            if forms
            else not several or (e.get("memory_gib") and gib)
        )
        and _fits(e, gib, sms, False)
        and not any(
            e.get("memory_gib") and not e["memory_gib"][0] <= s <= e["memory_gib"][1] for s in said
        )
    ]
    return (found[0], "family") if len(found) == 1 else None


def device_peaks(trace: RawTrace) -> dict[int, tuple[dict[str, Any], str] | None]:
    props = trace.header.get("deviceProperties") or []
    out: dict[int, tuple[dict[str, Any], str] | None] = {}
    for i, p in enumerate(props):
        if isinstance(p, dict):
            out[int(p.get("id", i))] = match_peaks(p)
    return out


# --- calls, their device time and device ------------------------------------------------------


def _cat(e: dict[str, Any]) -> str:
    return str(e.get("cat", "")).lower()


def _thread(e: dict[str, Any]) -> tuple[str, str]:
    return str(e.get("pid")), str(e.get("tid"))


def calls(trace: RawTrace) -> list[dict[str, Any]]:
    """Every op call that is a row of its own (a single same-named child of an op is
    folded into it), with `device_us` (GPU time its launches and its children's
    started), `device` (the highest device id of that work) and its event."""
    gpu_by_corr: dict[Any, list[dict[str, Any]]] = {}
    for e in trace.events:
        if e.get("ph") == "X" and _cat(e) in GPU:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                gpu_by_corr.setdefault(corr, []).append(e)
    launches: dict[tuple[str, str], list[tuple[float, float, list[dict[str, Any]]]]] = {}
    nodes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in trace.events:
        if e.get("ph") != "X":
            continue
        if _cat(e) in LAUNCH:
            corr = (e.get("args") or {}).get("correlation")
            work_ = gpu_by_corr.get(corr, []) if corr is not None else []
            launches.setdefault(_thread(e), []).append(
                (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), work_)
            )
        elif _cat(e) in NODES:
            nodes.setdefault(_thread(e), []).append(e)
    out: list[dict[str, Any]] = []
    for thread, events in nodes.items():
        out += _thread_calls(events, sorted(launches.get(thread, []), key=lambda x: x[0]))
    return out


def _thread_calls(events: list[dict[str, Any]], launched: list[tuple]) -> list[dict[str, Any]]:
    starts = [s for s, _, _ in launched]
    events.sort(key=lambda e: (float(e["ts"]), -float(e.get("dur", 0))))
    parent: list[int] = []
    stack: list[int] = []
    for i, e in enumerate(events):
        ts, end = float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))
        while stack and not _inside(events[stack[-1]], ts, end):
            stack.pop()
        parent.append(stack[-1] if stack else -1)
        stack.append(i)
    children = [0] * len(events)
    for p in parent:
        if p >= 0:
            children[p] += 1
    out = []
    for i, e in enumerate(events):
        p = parent[i]
        if _cat(e) not in OPS:
            continue
        if (
            p >= 0
            and children[p] == 1
            and events[p].get("name") == e.get("name")
            and _cat(events[p]) in OPS
        ):
            continue  # folded into its parent
        ts, end = float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))
        lo, hi = bisect.bisect_left(starts, ts), bisect.bisect_right(starts, end)
        gpu = [g for s, f, ws in launched[lo:hi] if f <= end for g in ws]
        devices = [_device(g) for g in gpu]
        out.append(
            {
                "event": e,
                "device_us": sum(float(g.get("dur", 0)) for g in gpu),
                "device": max(devices) if devices else -1,
                "kernels": [str(g.get("name", "")) for g in gpu],
            }
        )
    return out


def _inside(outer: dict[str, Any], ts: float, end: float) -> bool:
    o_ts, o_end = float(outer["ts"]), float(outer["ts"]) + float(outer.get("dur", 0))
    return o_ts <= ts and end <= o_end and (end > ts or ts < o_end)


def _device(g: dict[str, Any]) -> int:
    d = (g.get("args") or {}).get("device")
    if isinstance(d, int):
        return d
    return int(g["pid"]) if isinstance(g.get("pid"), int) else -1


# --- rows -------------------------------------------------------------------------------------


def _peaks_of(trace: RawTrace) -> Any:
    by_id = device_peaks(trace)
    props = [p for p in trace.header.get("deviceProperties") or [] if isinstance(p, dict)]
    same = len({(p.get("name"), p.get("totalGlobalMem"), p.get("numSms")) for p in props}) == 1

    def of(device: int) -> tuple[dict[str, Any], str] | None:
        if device < 0:
            return None
        if device in by_id:
            return by_id[device]
        return match_peaks(props[0]) if props and same else None

    return of


def call_work(call: dict[str, Any]) -> tuple[float, float, str | None, str] | None:
    """(flops, bytes (nan: unknown), roof dtype, family) of a call with device time."""
    e = call["event"]
    args = e.get("args") or {}
    dims = args.get("Input Dims", args.get("Input dims"))
    found = work(str(e.get("name", "")), dims, args.get("Input type"), args.get("Concrete Inputs"))
    if found is None or call["device_us"] <= 0:
        return None
    flops, nbytes, unsized, roof, family = found
    given = args.get("flops")
    if isinstance(given, (int, float)) and given > 0:
        flops = float(given)
    if nbytes is not None and unsized:
        sizes = {cat_element_size(k) for k in call["kernels"]} - {None}
        nbytes = nbytes + unsized * sizes.pop() if len(sizes) == 1 else None
    return flops, math.nan if nbytes is None else float(nbytes), roof, family


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def operator_rows(path: str | Path) -> dict[str, dict[str, Any]]:
    """Per op name: flops, bytes, tflops, gbps, pct_of_peak, bound (None: unknown)."""
    trace = read_raw(path)
    peaks_of = _peaks_of(trace)
    acc: dict[str, dict[str, float]] = {}
    for call in calls(trace):
        w = call_work(call)
        if w is None:
            continue
        flops, nbytes, roof, family = w
        t = call["device_us"]
        a = acc.setdefault(
            str(call["event"]["name"]),
            dict.fromkeys(("flops", "n_f", "t_f", "bytes", "n_b", "t_b", "tc", "tm", "t_r"), 0.0),
        )
        a["flops"] += flops
        a["n_f"] += 1
        a["t_f"] += t
        if not math.isnan(nbytes):
            a["bytes"] += nbytes
            a["n_b"] += 1
            a["t_b"] += t
        matched = peaks_of(call["device"])
        if matched is None:
            continue
        entry = matched[0]
        peak = (entry["peaks_tflops"].get(roof) if roof else None) or math.nan
        tc = flops / peak / 1e6
        tm = nbytes / entry["memory_gbps"] / 1e3
        if family == "memory" and math.isnan(tc):
            tc = 0.0
        if family == "compute" and math.isnan(tm):
            tm = 0.0
        if not math.isnan(tc) and not math.isnan(tm):
            a["tc"] += tc
            a["tm"] += tm
            a["t_r"] += t
    return {name: _fields(a) for name, a in acc.items()}


def _fields(a: dict[str, float]) -> dict[str, Any]:
    return {
        "flops": a["flops"] if a["n_f"] else None,
        "bytes": a["bytes"] if a["n_b"] else None,
        "tflops": _sig(a["flops"] / a["t_f"] / 1e6) if a["n_f"] and a["t_f"] > 0 else None,
        "gbps": _sig(a["bytes"] / a["t_b"] / 1e3) if a["n_b"] and a["t_b"] > 0 else None,
        "pct_of_peak": round(100 * max(a["tc"], a["tm"]) / a["t_r"], 2) if a["t_r"] > 0 else None,
        "bound": ("compute" if a["tc"] >= a["tm"] else "memory")
        if a["t_r"] > 0 and a["tc"] + a["tm"] > 0
        else None,
    }


if __name__ == "__main__":  # python -m independent.roofline TRACE, from tests/
    for name, row in sorted(operator_rows(sys.argv[1]).items()):
        print(name, row)
