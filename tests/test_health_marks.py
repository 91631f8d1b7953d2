"""The trace view marks the events the `health` checks flag: bit 16 of an exact event's
`flags` in the `trace` route, and the `event` route's `health` ids (tests/e2e/health.mjs
checks the outline and the details panel in a browser)."""

from __future__ import annotations

from pathlib import Path

from builders import TraceBuilder
from kinetoscope.trace_view.window_query import FLAG_HEALTH
from test_timeline import call


def test_flagged_rows_carry_the_health_bit_and_name_their_checks(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.op("clean", 0, 100)
    copy = {"ph": "X", "cat": "cpu_op", "name": "dup", "pid": 1, "tid": 1, "ts": 200, "dur": 50}
    t.events += [copy, dict(copy)]  # a second copy: duplicate_events
    t.op("a", 400, 100)
    t.op("b", 450, 100)  # crosses "a": overlapping_events
    model = t.model(tmp_path)
    window = call(model, "trace", width=1000)
    flags = {}
    for track in window["tracks"]:
        ev = track["events"]
        if ev:
            for row, name, flag in zip(ev["row"], ev["name"], ev["flags"]):
                flags[(window["names"][name], row)] = bool(flag & FLAG_HEALTH)
    health_by_row = {row: call(model, "event", row=row)["health"] for _, row in flags}
    named = {key: health_by_row[key[1]] for key in flags}
    assert [ids for (name, _), ids in sorted(named.items()) if name == "clean"] == [[]]
    dups = sorted(ids for (name, _), ids in named.items() if name == "dup")
    assert dups == [[], ["duplicate_events"]]
    assert ["overlapping_events"] in [ids for (name, _), ids in named.items() if name in "ab"]
    # The bit is set exactly on the rows the event route names checks for.
    assert all(flagged == bool(named[key]) for key, flagged in flags.items())
