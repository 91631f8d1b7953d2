"""The `health` view as text: `kinetoscope check`'s report (`render_check`), and
`kinetoscope report --format text`'s "Trace health" block (the endpoint's `text`).

One line per check that counts any or could not run, in columns (severity, check, count,
what happens to the events in time sums), its first example under it: the event's name,
its start in ms since the trace start (as every CLI time), its process/thread and its row
(the trace view's `sel`). A check that cannot run on a trace says why in the last column;
one that does not apply is 0 and not listed (the route decides: a CPU-only trace's
"kernels before their launch" is 0, not unknown)."""

from __future__ import annotations

import textwrap
from collections import Counter
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ..core.text_tables import DEFAULT_WIDTH, report_width

if TYPE_CHECKING:  # types only: naming them imports no view
    from ..core.health.view import HealthExample, HealthView
    from ..distributed.types import RankOffset, RunHealthCheck


class RunHealth(TypedDict):
    """`kinetoscope check`'s run-level entry: the `distributed` view's checks of a run."""

    status: str
    checks: list[RunHealthCheck]


CHECK_WIDTH = 30
COLUMNS = f"  {'severity':8} {'check':{CHECK_WIDTH}} {'count':>8}  in time sums"
EFFECT = {"left_out": "left out", "kept": "kept"}
LEGEND = (
    "Times are ms since each trace's start; an example names its process/thread (pid/tid) "
    "and its event row (the trace view's p.kinetoscope.sel=ROW selects it). 'kept': the "
    "events still count in time sums; 'left out': they do not."
)


def health_lines(found: HealthView | RunHealth) -> list[str]:
    """A line per check that counts any (with its first example) or cannot run; the
    loader's warnings."""
    start = cast("float | None", found.get("trace_start_us"))
    lines = []
    for check in found["checks"]:
        head = f"  {check['severity']:8} {check['id']:{CHECK_WIDTH}}"
        if check["count"] is None:
            lines.append(f"{head} {'?':>8}  not checked: {check['unknown']}")
        elif check["count"]:
            rule = check.get("torch_rule")
            said = f" (torch validator: {rule})" if rule else ""
            lines.append(f"{head} {check['count']:>8}  {EFFECT[check['effect']]}{said}")
            if check["examples"]:
                lines.append(f"{'':11}e.g. {_example(check['examples'][0], start)}")
    warnings: list[str] = found.get("warnings", [])  # type: ignore[assignment]  # a run's: none
    for warning in warnings:
        lines.append(f"  load warning: {warning}")
    return lines


def _example(first: HealthExample | RankOffset, start: float | None) -> str:
    if "rank" in first:  # a run-level check names a rank (`rank_clock_skew`)
        rank = cast("RankOffset", first)
        return f"rank {rank['rank']}: {rank['offset_us']:+.3f} µs ({rank['calls']} calls)"
    first = cast("HealthExample", first)
    ts = cast("float | None", first["ts_us"])  # null in JSON: a "ts" that is not a number
    if ts is None:
        at = "at no time (its ts is not a number)"
    elif start is not None:
        at = f"at {(ts - start) / 1000:.3f} ms"
    else:
        at = f"at {ts:.3f} µs (the trace has no start)"
    return f"{first['name'][:60]} {at} on process/thread {first['lane']} (event row {first['row']})"


def summary_line(statuses: list[str]) -> str:
    """ "12 traces: 9 ok, 2 with warnings, 1 with errors" (and those that cannot be read)."""
    counts = Counter(statuses)
    parts = [
        f"{counts['ok']} ok",
        f"{counts['warnings']} with warnings",
        f"{counts['errors']} with errors",
    ]
    if counts["unreadable"]:
        parts.append(f"{counts['unreadable']} unreadable")
    noun = "trace" if len(statuses) == 1 else "traces"
    return f"{len(statuses)} {noun}: {', '.join(parts)}"


def render_health(view: HealthView, width: int = DEFAULT_WIDTH) -> str:
    head = f"Trace health: {view['status']}"
    if view["left_out_rows"]:
        head += f" ({view['left_out_rows']} events left out of time sums)"
    lines = health_lines(view)
    if not lines:
        return head
    legend = textwrap.wrap(LEGEND, width - 2, initial_indent="  ", subsequent_indent="  ")
    return "\n".join([head, *(line[:width] for line in [COLUMNS, *lines]), *legend])


def render_check(results: dict[str, Any], run_worker: str, width: int | None = None) -> str:
    """`kinetoscope check`'s text of {run: {worker: {span: health}}} (`run_worker`: the
    worker key of a run's run-level checks): the columns' heading; one heading per trace
    with its status, then a line per check that counts any (or cannot run), and its first
    example; a summary line and what the words mean."""
    lines: list[str] = [COLUMNS]
    traces: list[str] = []
    runs: list[str] = []
    for run, workers in results.items():
        for worker, spans in workers.items():
            for span, found in spans.items():
                (runs if worker == run_worker else traces).append(found["status"])
                lines.append(f"{run} · {worker} · span {span}: {found['status']}")
                if "error" in found:
                    lines.append(f"  cannot be read: {found['error']}")
                lines.extend(health_lines(found))
    summary = summary_line(traces)
    if any(status != "ok" for status in runs):
        summary += f"; checks of all ranks: {summary_line(runs).split(': ', 1)[1]}"
    legend = textwrap.wrap(LEGEND, width or report_width())
    return "\n".join([*lines, "", summary, *legend])
