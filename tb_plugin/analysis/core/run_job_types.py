"""The 202 body of a run-level job (`Answer.RUN_JOB`): what every run view answers while
its per-rank work runs or waits for the views' memory. Here, below the views, so each
folder's endpoint names it without naming another view."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from ...store.view_budget import ViewQueue


class DistributedLoading(TypedDict):
    """`distributed` (and every run-level view) answers 202 with this while the per-rank
    summaries are computed, or while the job waits for the views' memory (`queued`)."""

    run: str
    span: str
    state: Literal["loading"]
    ranks_done: int
    ranks_total: int
    queued: NotRequired[ViewQueue]
