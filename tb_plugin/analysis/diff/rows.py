"""Operators and kernels of two traces matched by name (and by input shape when the
operators are grouped by shape), from the Operator and Kernel views' rows.

A row absent from one side ran 0 times there: its numbers on that side are 0, not
unknown. Device times of a side without GPU kernels are unknown (None)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from ..kernels import KernelRow
from ..operators import OperatorRow
from .numbers import changed, compare, rounded
from .types import Compared, KernelDiff, OperatorDiff, TopChange

OPERATOR_TIMES = ("host_self_us", "host_total_us", "device_self_us", "device_total_us")
DEVICE_TIMES = ("device_self_us", "device_total_us")
TOP_CHANGES = 10


def _status(in_base: bool, in_target: bool, numbers: list[Compared]) -> str:
    if not in_base:
        return "added"
    if not in_target:
        return "removed"
    return "changed" if changed(numbers) else "same"


def _operator_key(row: OperatorRow, by_shape: bool) -> tuple[str, str]:
    shape = json.dumps(row.get("input_shape"), separators=(",", ":")) if by_shape else ""
    return row["name"], shape


def _side_value(row: dict[str, Any] | None, field: str, device_known: bool) -> float | None:
    if field in DEVICE_TIMES and not device_known:
        return None
    return 0.0 if row is None else row[field]


def operator_rows(
    base: list[OperatorRow],
    target: list[OperatorRow],
    by_shape: bool,
    device_known: tuple[bool, bool],
    metric: str,
) -> list[OperatorDiff]:
    """Every operator (name, or name and shape) of either side, largest |change| of
    `metric` first (then by name)."""
    base_rows = {_operator_key(r, by_shape): r for r in base}
    target_rows = {_operator_key(r, by_shape): r for r in target}
    out: list[OperatorDiff] = []
    for key in dict.fromkeys([*base_rows, *target_rows]):
        b, t = base_rows.get(key), target_rows.get(key)
        numbers: dict[str, Compared] = {
            "calls": compare(b["calls"] if b else 0, t["calls"] if t else 0)
        }
        for field in OPERATOR_TIMES:
            numbers[field] = compare(
                _side_value(b, field, device_known[0]),  # type: ignore[arg-type]
                _side_value(t, field, device_known[1]),  # type: ignore[arg-type]
            )
        row: dict[str, Any] = {
            "name": key[0],
            "status": _status(b is not None, t is not None, list(numbers.values())),
            **numbers,
        }
        if by_shape:
            either = b if b is not None else t
            row["input_shape"] = either.get("input_shape") if either is not None else None
        out.append(row)  # type: ignore[arg-type]
    out.sort(key=lambda r: (-abs(r[metric]["delta"] or 0.0), r["name"]))  # type: ignore[literal-required]
    return out


def _kernel_totals(rows: list[KernelRow]) -> dict[str, tuple[int, float]]:
    """Calls and total time per kernel name, summed over devices and streams."""
    totals: dict[str, tuple[int, float]] = {}
    for r in rows:
        calls, total = totals.get(r["name"], (0, 0.0))
        totals[r["name"]] = (calls + r["calls"], rounded(total + r["total_us"], 3))
    return totals


def kernel_rows(base: list[KernelRow], target: list[KernelRow]) -> list[KernelDiff]:
    """Every kernel name of either side, largest |change| of total time first."""
    base_totals, target_totals = _kernel_totals(base), _kernel_totals(target)
    out: list[KernelDiff] = []
    for name in dict.fromkeys([*base_totals, *target_totals]):
        b_calls, b_total = base_totals.get(name, (0, 0.0))
        t_calls, t_total = target_totals.get(name, (0, 0.0))
        numbers = {
            "calls": compare(b_calls, t_calls),
            "total_us": compare(b_total, t_total),
            "mean_us": compare(
                rounded(b_total / b_calls, 3) if b_calls else None,
                rounded(t_total / t_calls, 3) if t_calls else None,
            ),
        }
        status = _status(name in base_totals, name in target_totals, list(numbers.values()))
        out.append({"name": name, "status": status, **numbers})  # type: ignore[typeddict-item]
    out.sort(key=lambda r: (-abs(r["total_us"]["delta"] or 0.0), r["name"]))
    return out


def _bars(kind: Literal["operator", "kernel"], rows: Iterable[Any], field: str) -> list[TopChange]:
    bars: list[TopChange] = []
    for row in rows:
        number: Compared = row[field]
        if row["status"] == "same" or not number["delta"]:
            continue
        bars.append(
            {
                "kind": kind,
                "name": row["name"],
                "input_shape": row.get("input_shape"),
                "metric": field,
                "base": number["base"],
                "target": number["target"],
                "delta": number["delta"],
            }
        )
    return bars


def top_changes(
    operators: Iterable[OperatorDiff], kernels: Iterable[KernelDiff], metric: str
) -> list[TopChange]:
    """The largest changes of operators' main time and kernels' total time, for a chart."""
    bars = _bars("operator", operators, metric) + _bars("kernel", kernels, "total_us")
    bars.sort(key=lambda b: -abs(b["delta"]))
    return bars[:TOP_CHANGES]
