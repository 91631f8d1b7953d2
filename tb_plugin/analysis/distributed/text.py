"""The Distributed view's CLI text (`kinetoscope report --format text`): one row per rank,
the collectives, the stragglers and the communication groups not ok. The endpoint names
it (`text`), the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, Column, mib, ms, or_dash, rows_table, table, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .types import DistributedResponse

_COLLECTIVE_COLUMNS: list[Column] = [
    ("collective", "name", str),
    ("calls", "calls", str),
    ("MiB", "bytes", mib),
    ("total ms", "total_us", ms),
    ("avg ms", "avg_us", ms),
    ("sync wait ms", "sync_wait_us", ms),
    ("transfer ms", "transfer_us", ms),
    ("unmatched ms", "unmatched_us", ms),
    ("algbw GB/s", "algbw_gbps", or_dash("{:.2f}".format)),
    ("busbw GB/s", "busbw_gbps", or_dash("{:.2f}".format)),
]


def render_distributed(view: DistributedResponse, width: int = DEFAULT_WIDTH) -> str:
    """Run-level view: one row per rank, the collectives, the stragglers."""
    facts = [f"{view['ranks_found']} ranks"]
    if view["world_size"] is not None:
        facts.append(f"world size {view['world_size']}")
    if view["backend"]:
        facts.append(f"backend {view['backend']}")
    facts.append(f"{view['mode']} ranks")
    out = ["Distributed (" + ", ".join(facts) + "), total over steps (ms)"]
    header = ["rank", "worker", "steps", "step", "computation", "overlap", "communication"]
    header += ["other", "sync wait", "transfer", "unmatched"]
    rows = [
        [str(r["rank"]), r["worker"], str(r["step_count"]), ms(r["step_time_us"])]
        + [ms(r[k]) for k in ("computation_us", "overlap_us", "communication_us", "other_us")]
        + [ms(r["sync_wait_us"]), ms(r["transfer_us"]), ms(r["unmatched_us"])]
        for r in view["ranks"]
    ]
    out.append(table(header, rows, width))
    if view["collectives"]:
        out.append("")
        out.append("Collectives (all ranks)")
        out.append(rows_table(_COLLECTIVE_COLUMNS, view["collectives"], width))
    late = [(s["name"], s["straggler"]) for s in view["steps"] if s["straggler"] is not None]
    if late:
        out.append("")
        out.append("Stragglers (last rank to arrive, per step)")
        for step, st in late:
            cause = st["cause"].replace("_", " ")
            if st["cause"] != "unknown":
                cause += f" (+{ms(st['cause_excess_us'])} ms over the other ranks' median)"
            line = f"{step}: rank {st['rank']} late by {ms(st['late_by_us'])} ms; {cause}"
            out.append(wrap(line, width))
    out += [wrap(line, width) for line in _group_lines(view)]
    for note in view["warnings"]:
        out.append(wrap(note, width, "  note: "))
    for err in view["errors"]:
        out.append(wrap(err["message"], width, "  error: "))
    return "\n".join(out)


def _group_lines(view: DistributedResponse) -> list[str]:
    """The communication groups whose verdict is not ok (none: no lines)."""
    flagged = [g for g in view.get("groups", []) if g["verdict"] != "ok"]
    if not flagged:
        return []
    out = [
        "",
        f"Communication groups ({len(view['groups'])}): slow ranks {view['slow_ranks']}, "
        f"slow links in groups {view['slow_groups']}",
    ]
    for g in flagged:
        what = (
            f"transfer {g['transfer_ratio']}x its peers'"
            if g["verdict"] == "slow_link"
            else f"waits for rank {g['waits_for']} ({ms(g['waits_for_us'])} ms)"
        )
        out.append(
            f"group {g['name'] or '(unnamed)'} ({g['role'] or 'role unknown'}, "
            f"{len(g['ranks'])} ranks): {what}"
        )
    return out
