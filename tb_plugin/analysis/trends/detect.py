"""The change detector: which numbers of which run moved, robust to run-to-run noise.

Every metric is a series over the runs (in trace start order): the step time (its
median), each phase, each op, kernel and collective (µs per step) and each device's memory
peak (bytes). Higher is worse for all of them.

Rolling rule (the default). Run i is compared with the median `m` of the last `window`
runs before it that have the value, within the metric's current segment; the threshold is

    max(floor_pct % of m, spread_k × MAD, min_step_pct % of the baseline step time)

where MAD is the baseline's median absolute deviation × 1.4826 (the standard deviation of
normal noise); the last term applies to time metrics other than the step itself, so a
kernel of a few µs that doubles is not news. A value above m + threshold is a regression,
below m − threshold an improvement. The first `min_history` runs (3) that have the value
are its first baseline and are not judged themselves: two runs tell nothing of the noise.
When a change is named, the metric's segment restarts
at that run: later runs are compared with the new level, so a lasting step change is named
once, at its first run, and a return to the old level is named as the opposite change.

Baseline rule (`baseline` given): every run is compared with that one run (threshold
max(floor_pct %, min_step_pct % of its step)); each metric's regression and improvement is
named once, at the first run that crosses it.

A name a run does not have is 0 when the run's list is complete (it did not run), else
unknown (beyond the top kept): an unknown value is never compared. A metric new in a run
(0 before) is named with `change_pct` None.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .summary import TraceSummary

MAD_SCALE = 1.4826
NOISE_RUNS = 20


@dataclass(frozen=True)
class Rule:
    window: int = 5  # runs in the rolling baseline
    floor_pct: float = 5.0  # the smallest relative change named
    spread_k: float = 3.0  # × the baseline's robust spread
    envelope_k: float = 1.5  # × the largest excursion seen without a change named
    min_step_pct: float = 0.5  # time metrics: the smallest change, % of the step
    min_memory_bytes: float = 2.0**20  # memory peaks: the smallest change (bytes are not news)
    min_history: int = 3  # runs with the value before the first one judged


@dataclass(frozen=True)
class Change:
    metric: str  # step, phase, op, kernel, collective, memory_peak
    name: str
    run_index: int  # where it is first seen
    baseline: float
    value: float
    threshold: float
    # Whether the next run with the value stayed beyond the threshold too (a lasting change,
    # not one run's excursion); False for a change at the last run, not yet confirmed.
    confirmed: bool = True

    @property
    def change_pct(self) -> float | None:
        if self.baseline == 0:
            return None
        return round(100.0 * (self.value - self.baseline) / self.baseline, 2)

    @property
    def regression(self) -> bool:
        return self.value > self.baseline


Key = tuple[str, str]
Series = list[float | None]


def _values(summary: TraceSummary) -> dict[Key, float | None]:
    """The metrics of one run (None: unknown)."""
    out: dict[Key, float | None] = {("step", "step"): summary.step_median_us}
    out.update({("phase", p): v for p, v in summary.phases_us.items()})
    out.update({("op", k): v for k, v in summary.ops.items()})
    out.update({("kernel", k): v for k, v in summary.kernels.items()})
    out.update({("collective", k): v for k, v in summary.collectives.items()})
    out.update({("memory_peak", k): v for k, v in summary.memory_peak_bytes.items()})
    return out


def _absent(summary: TraceSummary, metric: str) -> float | None:
    """A name a run's summary lacks: 0 where its list is complete, else unknown."""
    if metric == "op":
        return 0.0 if summary.ops_complete else None
    if metric == "kernel":
        return 0.0 if summary.kernels_complete and summary.device_type == "GPU" else None
    if metric == "collective":
        return 0.0
    return None  # step, phase, memory peak: not measured


def metric_series(runs: Sequence[TraceSummary | None]) -> dict[Key, Series]:
    """Each metric's value per run, in the runs' order (None: unknown or failed run)."""
    per_run = [_values(s) if s is not None else {} for s in runs]
    keys = list(dict.fromkeys(k for values in per_run for k in values))
    out: dict[Key, Series] = {}
    for key in keys:
        out[key] = [
            values.get(key, _absent(s, key[0]) if s is not None else None)
            for s, values in zip(runs, per_run)
        ]
    return out


def _step_floor(metric: str, steps: Series, index: int, rule: Rule) -> float:
    if metric == "memory_peak":
        return rule.min_memory_bytes
    if metric == "step":
        return 0.0
    step = steps[index] if index < len(steps) else None
    return rule.min_step_pct / 100.0 * step if step else 0.0


def _mad(values: Sequence[float], center: float) -> float:
    return MAD_SCALE * statistics.median(abs(v - center) for v in values)


def _noise(base: Sequence[float], center: float, excursions: Sequence[float], rule: Rule) -> float:
    """The change a metric's own noise can make: `spread_k` × the baseline's MAD (normal
    noise), or `envelope_k` × the largest excursion it has shown without a change being
    named (the baseline's own deviations from its median, and each judged run's deviation
    that stayed within its threshold, the last NOISE_RUNS): a metric that jumps now and
    then (an Overview phase whose bounds move with the events) needs a bigger move."""
    envelope = max([abs(v - center) for v in base] + list(excursions))
    return max(rule.spread_k * _mad(base, center), rule.envelope_k * envelope)


def _beyond(value: float, center: float, threshold: float) -> bool:
    return abs(value - center) > threshold and (center > 0 or value > threshold)


def _next_known(values: Series, i: int) -> float | None:
    return next((v for v in values[i + 1 :] if v is not None), None)


def rolling_changes(key: Key, values: Series, steps: Series, rule: Rule) -> list[Change]:
    """The changes of one series under the rolling rule (module docstring)."""
    changes: list[Change] = []
    segment: list[tuple[int, float]] = []  # (run, value) known since the last change
    excursions: list[float] = []  # judged runs' deviations that were not named
    for i, value in enumerate(values):
        if value is None:
            continue
        recent = segment[-rule.window :]
        if recent and (changes or len(segment) >= rule.min_history):
            base = [v for _, v in recent]
            center = statistics.median(base)
            threshold = max(
                rule.floor_pct / 100.0 * abs(center),
                _noise(base, center, excursions, rule),
                _step_floor(key[0], steps, recent[-1][0], rule),
            )
            after = _next_known(values, i)
            lasting = after is None or (
                _beyond(after, center, threshold) and (after > center) == (value > center)
            )
            if _beyond(value, center, threshold) and lasting:
                changes.append(
                    Change(key[0], key[1], i, center, value, threshold, after is not None)
                )
                segment = []
            else:
                excursions = [*excursions[-NOISE_RUNS + 1 :], abs(value - center)]
        segment.append((i, value))
    return changes


def baseline_changes(
    key: Key, values: Series, steps: Series, baseline: int, rule: Rule
) -> list[Change]:
    """The changes of one series against run `baseline`, each direction named once."""
    base = values[baseline]
    if base is None:
        return []
    threshold = max(rule.floor_pct / 100.0 * abs(base), _step_floor(key[0], steps, baseline, rule))
    named: dict[bool, Change] = {}
    for i, value in enumerate(values):
        if i == baseline or value is None or abs(value - base) <= threshold:
            continue
        if base <= 0 and value <= threshold:
            continue
        after = _next_known(values, i)
        lasting = (
            after is not None and abs(after - base) > threshold and (after > base) == (value > base)
        )
        change = Change(key[0], key[1], i, base, value, threshold, lasting)
        named.setdefault(change.regression, change)
    return sorted(named.values(), key=lambda c: c.run_index)


def detect(
    runs: Sequence[TraceSummary | None], rule: Rule, baseline: int | None = None
) -> list[Change]:
    """Every change of every metric, in run order, then metric and name."""
    series = metric_series(runs)
    steps = series.get(("step", "step"), [None] * len(runs))
    changes: list[Change] = []
    for key, values in series.items():
        if baseline is None:
            changes.extend(rolling_changes(key, values, steps, rule))
        else:
            changes.extend(baseline_changes(key, values, steps, baseline, rule))
    return sorted(changes, key=lambda c: (c.run_index, c.metric, c.name))
