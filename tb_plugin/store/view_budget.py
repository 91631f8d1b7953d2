"""One memory budget for every view computed in the process: span views, run-level and
logdir-level jobs, on-demand analyses included.

Each view declares what it costs beside the models it reads (`data/view_costs.json`:
its measured peak over the models' bytes, with a margin), so a job's cost is known
before it runs. A job is admitted while the admitted jobs' costs and its own stay under
the budget (KINETOSCOPE_VIEW_MEMORY_MB, default half the machine's memory), in the order
jobs first asked: a job that does not fit yet waits in line (its place is told: the
route answers 202 and asks again), and one that could never fit is refused
(`ViewTooLarge`, the view's `too_large`). Many different heavy views asked of one big
trace at once then run a few at a time instead of all together into a MemoryError.

A waiter that stops asking (its client went away) is forgotten after STALE_S, so it
never holds the line.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TypedDict

from ..ingest.limits import env_number, machine_memory_mb, server_share_mb
from ..model.errors import TooLarge

STALE_S = 30.0  # a waiter not asking again for this long has left the line
MB = 1 << 20


class ViewQueue(TypedDict):
    """Where a view that waits for memory stands: `place` 1 is next."""

    place: int
    cost_mb: int  # what this view is expected to need
    running_mb: int  # what the views admitted now hold
    budget_mb: int  # KINETOSCOPE_VIEW_MEMORY_MB


class ViewTooLarge(TooLarge):
    """The view needs more than the whole budget: it can never be admitted."""

    def __init__(self, what: str, cost: int, budget: int) -> None:
        super().__init__(
            f"{what} would need about {cost // MB} MB beside the trace, more than the "
            f"views' memory budget of {budget // MB} MB (KINETOSCOPE_VIEW_MEMORY_MB; "
            "raise it on a machine with the memory, or ask for a smaller span)"
        )


class Queued(Exception):
    """Not admitted yet: `queue` says where it stands; `event` is set when memory is
    given back (ask again then)."""

    def __init__(self, queue: ViewQueue, event: threading.Event) -> None:
        super().__init__(f"waiting for memory: place {queue['place']} in line")
        self.queue = queue
        self.event = event


def view_budget_bytes() -> int:
    default = server_share_mb("views", machine_memory_mb() / 2)
    return int(env_number("KINETOSCOPE_VIEW_MEMORY_MB", default) * MB)


# A view at most this share of the budget that fits beside what runs is admitted at once,
# past a bigger one waiting ahead (backfilled): a compile or a Distributed view is not held
# for minutes behind a run's critical path that waits for room.
SMALL_SHARE = 1 / 32


def is_small(cost: int, total: int) -> bool:
    """A view small enough to pass the line when it fits (`SMALL_SHARE`)."""
    return cost <= total * SMALL_SHARE


class ViewBudget:
    """The admitted views' costs kept under `total` bytes, first asked first admitted; a
    small one that fits now is admitted past bigger ones waiting (`SMALL_SHARE`)."""

    def __init__(self, total: int | None = None) -> None:
        self.total = view_budget_bytes() if total is None else total
        self.running = 0
        self.peak = 0  # the most ever admitted at once
        self._waiting: OrderedDict[Hashable, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._freed = threading.Event()

    @contextmanager
    def admitted(self, key: Hashable, cost: int, what: str) -> Iterator[None]:
        """Hold `cost` bytes while the body runs; Queued when it does not fit yet."""
        self._enter(key, cost, what)
        try:
            yield
        finally:
            self._leave(cost)

    @contextmanager
    def waited(
        self,
        key: Hashable,
        cost: int,
        what: str,
        waiting: Callable[[ViewQueue], None] | None = None,
    ) -> Iterator[None]:
        """The same for a job on a thread of its own: waits in line instead of raising
        (`waiting` told its place each time it asks)."""
        while True:
            try:
                self._enter(key, cost, what)
                break
            except Queued as queued:
                if waiting is not None:
                    waiting(queued.queue)
                queued.event.wait(STALE_S / 3)  # asks again within STALE_S: stays in line
        try:
            yield
        finally:
            self._leave(cost)

    def place(self, key: Hashable) -> int | None:
        """Its place in line, or None when it is not waiting."""
        with self._lock:
            for at, waiting in enumerate(self._waiting, 1):
                if waiting == key:
                    return at
        return None

    def _enter(self, key: Hashable, cost: int, what: str) -> None:
        if cost > self.total:
            raise ViewTooLarge(what, cost, self.total)
        now = time.monotonic()
        with self._lock:
            self._forget_stale(now)
            self._waiting[key] = (cost, now)  # a new key joins at the end, a known one stays
            ahead = 0
            place = 1
            for waiting, (their_cost, _) in self._waiting.items():
                if waiting == key:
                    break
                ahead += their_cost
                place += 1
            # Admitted when it fits beside what runs and what waits ahead of it, when it is
            # small and fits beside what runs (the one first in line is passed only by
            # those), or when nothing runs at all.
            fits = self.running + cost <= self.total
            backfilled = fits and is_small(cost, self.total)
            if self.running == 0 or self.running + ahead + cost <= self.total or backfilled:
                del self._waiting[key]
                self.running += cost
                self.peak = max(self.peak, self.running)
                return
            queue = ViewQueue(
                place=place,
                cost_mb=cost // MB,
                running_mb=self.running // MB,
                budget_mb=self.total // MB,
            )
            event = self._freed
        raise Queued(queue, event)

    def _leave(self, cost: int) -> None:
        with self._lock:
            self.running -= cost
            freed, self._freed = self._freed, threading.Event()
        freed.set()

    def _forget_stale(self, now: float) -> None:
        # Under self._lock.
        for key in [k for k, (_, seen) in self._waiting.items() if now - seen > STALE_S]:
            del self._waiting[key]


_SHARED: list[ViewBudget] = []
_SHARED_LOCK = threading.Lock()


def shared_budget() -> ViewBudget:
    """The process's one budget (every store of it shares it: the server's memory is
    one), made from the environment when first asked, and again when the setting
    changed while no view ran (a test's, a notebook's)."""
    with _SHARED_LOCK:
        budget = _SHARED[0] if _SHARED else None
        if budget is None or (budget.total != view_budget_bytes() and budget.running == 0):
            _SHARED[:] = [ViewBudget()]
        return _SHARED[0]
