"""Health names the slices of a category no view reads (issue 71): categories Kineto
writes for another purpose (`overhead`, `cuda_event`, ...) and categories a newer
producer writes that kinetoscope does not know; metadata, flows and counters are read."""

from __future__ import annotations

from pathlib import Path

from builders import CPU_PID, TraceBuilder
from kinetoscope.analysis.core.health.view import health
from kinetoscope.model.categories import KNOWN_UNREAD_CATEGORIES


def test_unread_and_unknown_categories_are_counted(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0.0, 100)
    t.op("aten::mm", 10.0, 30)
    # The instant is a mark on the Trace page, whatever its category: not counted.
    for cat, ph in (("overhead", "X"), ("cuda_event", "X"), ("a_2027_category", "X"), ("x", "i")):
        event = {"ph": ph, "cat": cat, "name": cat, "pid": CPU_PID, "tid": 1, "ts": 20.0}
        t.events.append(event | ({"dur": 5.0} if ph == "X" else {"s": "t"}))
    t.events.append(
        {
            "ph": "C",
            "cat": "hardware_counters",
            "name": "m",
            "pid": "GPU 0 Counters",
            "tid": 0,
            "ts": 1.0,
            "args": {"": 1},
        }
    )
    view = health(t.model(tmp_path))
    (check,) = [c for c in view["checks"] if c["id"] == "unread_categories"]
    assert (check["count"], check["severity"]) == (3, "info")
    assert {"overhead", "cuda_event"} <= KNOWN_UNREAD_CATEGORIES
