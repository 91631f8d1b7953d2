"""`kinetoscope report --format text`: the `gpu_idle` view (why the GPU is idle, launch
delays, queue lengths) as tables. The endpoint names it (`text`), the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, Column, number, or_dash, rows_table, short, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .view import GpuIdleView


def _ms_of_ns(ns: float) -> str:
    return number(ns / 1e6, 3)


def _us_of_ns(ns: float) -> str:
    return number(ns / 1e3, 1)


# A share of step time (0..1) as a percentage; "-" when there was no step time.
_pct = or_dash(lambda share: f"{100 * share:.1f}")


_IDLE_COLUMNS: list[Column] = [
    ("lane", "lane", str),
    ("step ms", "step_ns", _ms_of_ns),
    ("idle %", "idle_share", _pct),
    ("host wait %", "host_wait_share", _pct),
    ("kernel wait %", "kernel_wait_share", _pct),
    ("other %", "other_share", _pct),
    ("max queue", "max_queue", str),
]

_DELAY_COLUMNS: list[Column] = [
    ("kernel", "short", str),
    ("calls", "count", str),
    ("mean us", "mean_ns", _us_of_ns),
    ("p50 us", "p50_ns", _us_of_ns),
    ("p90 us", "p90_ns", _us_of_ns),
    ("max us", "max_ns", _us_of_ns),
    ("launch call us", "launch_call_mean_ns", _us_of_ns),
]


def render_gpu_idle(view: GpuIdleView, width: int = DEFAULT_WIDTH, top: int = 10) -> str:
    if not view["available"]:
        return f"Why is the {view['device_word']} idle?\n" + wrap(view["reason"] or "", width)
    lanes = []
    for device in view["devices"]:
        lanes.append({"lane": device["label"], **device["total"], "max_queue": "-"})
        for stream in device["streams"]:
            name = f"  stream {stream['stream'] if stream['stream'] is not None else '?'}"
            lanes.append(
                {"lane": name, **stream["total"], "max_queue": stream["queue"]["max_length"]}
            )
    threshold = view["kernel_wait_threshold_ns"] / 1000
    steps = len(view["steps"])
    out = [
        wrap(
            f"Why is the {view['device_word']} idle? (over {steps} "
            f"step{'' if steps == 1 else 's'}; kernel wait: queued gaps under {threshold:g} us)",
            width,
            "",
        ),
        rows_table(_IDLE_COLUMNS, lanes, width),
    ]
    delay = view["launch_delay"]
    assert delay is not None  # None only where the view is not available (returned above)
    rows = [{**r, "short": short(r["name"])} for r in delay["rows"][:top]]
    out.append(
        wrap(
            f"Launch delay (launch call start to GPU start; top {len(rows)} of {delay['names']}"
            f" names by total delay; {delay['linked']} of {delay['activities']} activities"
            " linked)",
            width,
            "",
        )
    )
    out.append(rows_table(_DELAY_COLUMNS, rows, width))
    return "\n".join(out)
