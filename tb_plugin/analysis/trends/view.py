"""The `trend` view of a logdir: every run summarised (`summaries`), ordered by trace start
time, and its changes named (`detect`). A logdir-level job of the store, like the
distributed view is a run-level one: `trend_view(context)`, a `store.run_context.RunContext`
of the logdir's runs and the decoded request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from ...ingest.discovery import Run, chosen_spans
from ...model.errors import ViewParamError
from ...store.run_context import RunContext
from .detect import Change, Rule, detect
from .summaries import summarize_files
from .summary import TraceSummary, combine
from .types import (
    NamedTime,
    TrendChange,
    TrendParams,
    TrendRule,
    TrendRun,
    TrendView,
    TrendWorkload,
)
from .workloads import group_workloads, workload_label

Progress = Callable[[int, int], None]


def rule_of(params: TrendParams) -> Rule:
    """The detector's settings from the request (defaults: `detect.Rule`)."""
    default = Rule()
    window = params.get("window") or default.window
    floor = params.get("floor_pct")
    if window < 1 or window > 100:
        raise ViewParamError(f"window must be 1..100, not {window}")
    if floor is not None and not 0 <= floor <= 1000:
        raise ViewParamError(f"floor_pct must be 0..1000, not {floor}")
    return Rule(window=window, floor_pct=default.floor_pct if floor is None else floor)


def _named(values: dict[str, float]) -> list[NamedTime]:
    return [{"name": k, "us": v} for k, v in sorted(values.items(), key=lambda kv: -kv[1])]


def _run_row(run: Run, workers: list[str], summary: TraceSummary | None) -> TrendRun:
    s = summary
    return {
        "run": run.name,
        "index": 0,
        "workers": workers,
        "start_us": s.start_us if s else None,
        "device_type": s.device_type if s else None,
        "devices": s.devices if s else [],
        "step_count": s.step_count if s else 0,
        "step_mean_us": s.step_mean_us if s else None,
        "step_median_us": s.step_median_us if s else None,
        "phases_us": s.phases_us if s else {},
        "op_metric": s.op_metric if s else None,
        "top_ops": _named(s.ops) if s else [],
        "top_kernels": _named(s.kernels) if s else [],
        "top_collectives": _named(s.collectives) if s else [],
        "memory_peak_bytes": s.memory_peak_bytes if s else {},
        "errors": [],
        "workload": None,
    }


def _order(rows: list[tuple[TrendRun, TraceSummary | None, int]]) -> None:
    """Trace start time; a run without one (failed, or no event) by its files' newest
    mtime, after those with one; the name breaks ties."""
    rows.sort(key=lambda r: (r[0]["start_us"] is None, r[0]["start_us"] or 0.0, r[2], r[0]["run"]))
    for i, (row, _, _) in enumerate(rows):
        row["index"] = i


def _change(change: Change, runs: Sequence[TrendRun], workload: int) -> TrendChange:
    """A change found in one workload's series (`runs`: that workload's runs, in order)."""
    i = change.run_index
    return {
        "metric": change.metric,  # type: ignore[typeddict-item]
        "name": change.name,
        "first_run": runs[i]["run"],
        "change_pct": change.change_pct,
        "baseline": round(change.baseline, 3),
        "value": round(change.value, 3),
        "threshold": round(change.threshold, 3),
        "unit": "bytes" if change.metric == "memory_peak" else "us",
        "diff_base_run": runs[i - 1]["run"] if i > 0 else None,
        "diff_target_run": runs[i]["run"],
        "workload": workload,
        "confirmed": change.confirmed,
    }


class _Compared:
    """Each workload's runs compared apart: the changes, the workloads and the notes."""

    def __init__(self, rows: Sequence[tuple[TrendRun, TraceSummary | None, int]]) -> None:
        self.runs = [row for row, _, _ in rows]
        self.summaries = [s for _, s, _ in rows]
        self.changes: list[tuple[int, Change, TrendChange]] = []  # (global run, change, body)
        self.workloads: list[TrendWorkload] = []
        self.notes = [
            f"run {r['run']}: no trace could be summarised"
            for r, s in zip(self.runs, self.summaries)
            if s is None
        ]

    def compare(self, rule: Rule, baseline_name: str | None) -> None:
        groups = group_workloads(self.summaries)
        for run, group in zip(self.runs, groups):
            run["workload"] = group
        count = max((g for g in groups if g is not None), default=-1) + 1
        base_at = next((r["index"] for r in self.runs if r["run"] == baseline_name), None)
        for w in range(count):
            members = [i for i, g in enumerate(groups) if g == w]
            self._workload(w, members, rule, base_at)

    def _workload(self, w: int, members: list[int], rule: Rule, base_at: int | None) -> None:
        first = self.summaries[members[0]]
        assert first is not None
        names = [self.runs[i]["run"] for i in members]
        label = workload_label(first)
        left_out = base_at is not None and base_at not in members
        compared = len(members) > 1 and not left_out
        self.workloads.append({"index": w, "label": label, "runs": names, "compared": compared})
        if len(members) == 1:
            self.notes.append(
                f"run {names[0]} is the only run of its workload ({label}): not compared"
            )
        elif left_out:
            self.notes.append(
                f"runs {', '.join(names)} are another workload ({label}) than the baseline run: "
                "not compared"
            )
        if not compared:
            return
        local_base = members.index(base_at) if base_at is not None else None
        runs = [self.runs[i] for i in members]
        for change in detect([self.summaries[i] for i in members], rule, local_base):
            self.changes.append((members[change.run_index], change, _change(change, runs, w)))

    def bodies(self) -> list[TrendChange]:
        """The changes in run order, then metric and name."""
        ordered = sorted(self.changes, key=lambda t: (t[0], t[1].metric, t[1].name))
        return [body for _, _, body in ordered]


def trend_view(context: RunContext) -> TrendView:
    """The route's body: `context.params` holds span, baseline, window and floor_pct."""
    # Decoded by the endpoint's request type, TrendParams, before the job started.
    runs, params = context.runs, cast(TrendParams, context.params)
    cache_dir, progress, store = context.cache_dir, context.progress, context.store
    rule = rule_of(params)
    span = params.get("span") or None
    listed = [r for r in runs if r.workers]
    baseline_name = params.get("baseline") or None
    if baseline_name is not None and baseline_name not in {r.name for r in listed}:
        raise ViewParamError(f"no run named {baseline_name!r} to compare with")
    picks = [chosen_spans(r, span) for r in listed]
    paths = [s.path for pick in picks for _, s in pick]
    summaries, errors = summarize_files(paths, cache_dir, progress, store)
    rows: list[tuple[TrendRun, TraceSummary | None, int]] = []
    at = 0
    for run, pick in zip(listed, picks):
        mine = summaries[at : at + len(pick)]
        failed = [e for e in errors[at : at + len(pick)] if e]
        at += len(pick)
        known = [s for s in mine if s is not None]
        summary = combine(known) if known else None
        row = _run_row(run, [w.name for (w, _), s in zip(pick, mine) if s is not None], summary)
        row["errors"] = failed
        rows.append((row, summary, max(s.mtime_ns for _, s in pick)))
    _order(rows)
    compared = _Compared(rows)
    compared.compare(rule, baseline_name)
    changes = compared.bodies()
    return {
        "span": span or "1",
        "rule": _rule_body(rule, baseline_name),
        "runs": compared.runs,
        "workloads": compared.workloads,
        "notes": compared.notes,
        "regressions": [c for c in changes if c["value"] > c["baseline"]],
        "improvements": [c for c in changes if c["value"] <= c["baseline"]],
    }


def _rule_body(rule: Rule, baseline: str | None) -> TrendRule:
    return {
        "mode": "baseline" if baseline else "rolling",
        "baseline_run": baseline,
        "window": rule.window,
        "floor_pct": rule.floor_pct,
        "spread_k": rule.spread_k,
        "envelope_k": rule.envelope_k,
        "min_step_pct": rule.min_step_pct,
        "min_memory_bytes": rule.min_memory_bytes,
        "min_history": rule.min_history,
    }
