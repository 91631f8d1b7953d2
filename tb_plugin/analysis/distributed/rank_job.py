"""One job of `rank_summaries.summarize_all`: the tier of summaries it makes (`Tier`),
and its per-path results as they come in (`Collected`: the summaries already kept, then
each future's answer, one rank's summary or a batch's outcomes, with the errors, the
ranks a broken process pool lost and the progress)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar

from ...model.trace_model import TraceModel
from ...store.errors import LoadError, describe_error
from ...store.run_context import Progress
from ..core.summary_cache import SummaryCache
from .summary_pack import SummaryPack

log = logging.getLogger(__name__)
S = TypeVar("S")


@dataclass(frozen=True)
class Tier(Generic[S]):
    """One kind of per-rank summary: made from a rank's model by `make`, kept one by one
    in the summary cache `cache(cache_dir)` (a user's executor: each task keeps its own)
    and per run in the pack `pack(cache_dir, run)` names (its view: the tier's). With
    `make_many`, a worker's batch of small ranks is summarised together, each summary the
    one `make` gives. All picklable (top-level functions or partials of them), so a
    process pool or a cluster can run them."""

    make: Callable[[TraceModel], S]
    cache: Callable[[str], SummaryCache[S]]
    pack: Callable[[str, str], SummaryPack[S]]
    make_many: Optional[Callable[[list[TraceModel]], list[S]]] = None


class RankFailed(Exception):
    """A rank's file could not be summarized; `error` is a loader error dict (picklable)."""

    def __init__(self, error: LoadError) -> None:
        super().__init__(error)
        self.error = error


# What a batch answers per rank: its summary, else the error (a loader error dict) and,
# for an unexpected one (a bug), how it was raised, for the caller's log.
Outcome = tuple[Optional[Any], Optional[LoadError], Optional[str]]


class Collected:
    """Per-path results of one job as they come in."""

    def __init__(
        self, paths: list[str], keys: list[str | None], progress: Progress | None, tier: Tier[Any]
    ) -> None:
        self.paths = paths
        self.keys = keys
        self.progress = progress
        self.tier = tier
        self.results: list[Any] = [None] * len(paths)
        self.errors: list[LoadError | None] = [None] * len(paths)
        self.lost: list[int] = []
        self.done = 0

    def take_cached(self, cache_dir: str | None, packed: dict[str, Any]) -> list[int]:
        """Takes the summaries already kept (the run's pack, else one by one), here in
        the caller: a warm run of 2,048 ranks then starts no pool (spawning it and sending
        2,048 summaries back through it took most of a warm run). Returns the indices
        left to compute."""
        summaries = self.tier.cache(cache_dir) if cache_dir else None
        todo = []
        for i, key in enumerate(self.keys):
            found = packed.get(key) if key is not None else None
            if found is None and summaries is not None and key is not None:
                found = summaries.get(key)
            if found is None:
                todo.append(i)
                continue
            self.results[i] = found
            self.done += 1
        if self.done and self.progress is not None:
            self.progress(self.done, len(self.paths))
        return todo

    def kept(self) -> dict[str, Any]:
        """The summaries by file key, for the run's pack."""
        return {
            key: summary
            for key, summary in zip(self.keys, self.results)
            if key is not None and summary is not None
        }

    def collect(self, futures: dict[Future[Any], tuple[list[int], bool]]) -> None:
        """Takes each future's answer: one rank's summary, or (batched) its ranks'
        outcomes."""
        for future in as_completed(futures):
            at, batched = futures[future]
            try:
                answer = future.result()
            except RankFailed as exc:
                self._take(at[0], (None, exc.error, None))
            except BrokenProcessPool:
                self.lost += at
                continue
            except Exception as exc:  # noqa: BLE001 - one rank never takes the job down
                for i in at:
                    self._take(i, (None, describe_error(self.paths[i], exc), repr(exc)))
            else:
                for i, outcome in zip(at, answer if batched else [(answer, None, None)]):
                    self._take(i, outcome)
            if self.progress is not None:
                self.progress(self.done, len(self.paths))

    def _take(self, i: int, outcome: Outcome) -> None:
        summary, error, unexpected = outcome
        if unexpected is not None:
            log.warning("kinetoscope: rank summary of %s failed: %s", self.paths[i], unexpected)
        self.results[i] = summary
        self.errors[i] = error
        self.done += 1


# A tier's `make_many` takes ranks up to this many rows together (the bench's 2,048-rank
# job: ~200 rows a rank); a larger rank is summarised alone, as its passes are long enough.
TOGETHER_ROWS = 1 << 15


def made_one(tier: Tier[Any], model: TraceModel, path: str) -> Outcome:
    """The tier's summary of one rank's model, or the error it raised (its own)."""
    try:
        return (tier.make(model), None, None)
    except Exception as exc:  # noqa: BLE001 - one rank never takes the job down
        return (None, describe_error(path, exc), repr(exc))


def made_together(
    tier: Tier[Any],
    waiting: list[tuple[int, TraceModel]],
    files: list[tuple[str, str]],
    out: list[Outcome],
) -> None:
    """The summaries of the `waiting` ranks, made together (`make_many`); where that
    fails, one by one, so that one rank's error is its own."""
    if not waiting or tier.make_many is None:
        return
    try:
        made = tier.make_many([model for _, model in waiting])
    except Exception:  # noqa: BLE001 - the ranks are made again one by one, each its error
        for i, model in waiting:
            out[i] = made_one(tier, model, files[i][0])
        return
    for (i, _), summary in zip(waiting, made):
        out[i] = (summary, None, None)
