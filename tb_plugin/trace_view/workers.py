"""The workers of one trace-view request and what every route shares: their time offsets,
the time range and track selection of a query, one track id per event, and the answer's
own name table.

Several workers of one run share one absolute time axis (epoch µs, `model.time_origin_us`
added); one worker alone keeps the file's own times. docs/http_api.md has the shapes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from ..model.errors import ViewParamError
from ..model.trace_model import TraceModel
from .counters import Counter, build_counters, pack_counters, unpack_counters
from .index import TimelineIndex, index_of
from .index_store import kept_on_disk
from .params import TimelineNotFound
from .recorded_counters import recorded_counters


@dataclass(frozen=True)
class WorkerTrace:
    """One worker's model in a request. `name` is None for a single-worker request
    (plain track ids, file times); with names, ids are `worker:id` and times epoch µs."""

    name: str | None
    model: TraceModel

    @property
    def index(self) -> TimelineIndex:
        return index_of(self.model)

    @property
    def offset(self) -> float:
        return self.model.time_origin_us if self.name is not None else 0.0

    def qualify(self, local: str) -> str:
        return local if self.name is None else f"{self.name}:{local}"

    def track_of(self, pos: int) -> str:
        """The (qualified) id of the track that the event at index position `pos` is on."""
        index = self.index
        return self.qualify(index.tracks[int(index.group_track[index.group[pos]])].id)


def counters_of(worker: WorkerTrace) -> list[Counter]:
    """The worker's counter tracks, kept with the model and on disk beside it (a warm
    start would build them again: ~2 s of CPU at 4 GB)."""

    def kept(model: TraceModel) -> list[Counter]:
        def build() -> list[Counter]:  # the computed ones, then those the trace records
            return build_counters(model) + recorded_counters(model)

        return kept_on_disk(model, "timeline_counters", build, pack_counters, unpack_counters)

    return worker.model.derived("_timeline_counters", kept)


def time_base(workers: Sequence[WorkerTrace]) -> str:
    """ "file": one worker's own times; "epoch": several workers on absolute time."""
    return "file" if workers[0].name is None else "epoch"


def time_extent(workers: Sequence[WorkerTrace]) -> tuple[float, float]:
    lo = min((w.index.t_min + w.offset for w in workers if len(w.index)), default=0.0)
    hi = max((w.index.t_max + w.offset for w in workers if len(w.index)), default=0.0)
    return lo, max(hi, lo)


def time_range(
    workers: Sequence[WorkerTrace], t0: float | None, t1: float | None
) -> tuple[float, float]:
    """The query's [t0, t1), by default all of the workers' time."""
    lo, hi = time_extent(workers)
    t0 = lo if t0 is None else t0
    t1 = hi + 1.0 if t1 is None else t1  # + 1: the last instant is inside
    if not t1 > t0:
        raise ViewParamError(f"t1 ({t1}) must be after t0 ({t0})")
    return t0, t1


@dataclass
class Selection:
    slices: np.ndarray  # slice track indices
    counters: list[Counter]


def select_tracks(workers: Sequence[WorkerTrace], text: str | None) -> list[Selection]:
    """`tracks`: a comma list of ids (`worker:id` for several workers), or all."""
    if not text or text == "all":
        return [Selection(np.arange(len(w.index.tracks)), counters_of(w)) for w in workers]
    wanted: list[tuple[list[int], list[Counter]]] = [([], []) for _ in workers]
    by_name = {w.name: i for i, w in enumerate(workers)}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        which = 0
        local = item
        if workers[0].name is not None:
            worker_name, sep, local = item.rpartition(":")
            if not sep or worker_name not in by_name:
                raise TimelineNotFound(f"no track {item!r} (ids are worker:track)")
            which = by_name[worker_name]
        worker = workers[which]
        n = len(worker.index.tracks)
        if local.startswith("t") and local[1:].isdigit() and int(local[1:]) < n:
            wanted[which][0].append(int(local[1:]))
            continue
        counter = next((c for c in counters_of(worker) if c.id == local), None)
        if counter is None:
            raise TimelineNotFound(f"no track {item!r}")
        wanted[which][1].append(counter)
    return [Selection(np.array(sorted(set(s)), dtype=np.int64), c) for s, c in wanted]


class NameTable:
    """The response's own name table: models of several workers have their own codes.
    While one model with no name twice has entered, its codes are placed by numpy (a
    window names hundreds); a second model's names are then matched by their text."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] | None = {}
        self._model: TraceModel | None = None
        self._place: np.ndarray | None = None  # per code of `_model`: its entry, or -1

    @property
    def index(self) -> dict[str, int]:
        """Each name's entry."""
        if self._index is None:
            self._index = {name: i for i, name in enumerate(self.table)}
        return self._index

    def remap(self, model: TraceModel, codes: np.ndarray) -> np.ndarray:
        """The table's codes of `codes` (the model's), names entering in code order."""
        if codes.size == 0:
            return codes.astype(np.int64)
        n_names = len(model.names)
        if int(codes.min()) >= 0 and int(codes.max()) < n_names:
            # A mark per name code in place of np.unique's sort: the same codes, in order.
            present = np.zeros(n_names, dtype=bool)
            present[codes] = True
            uniq = np.flatnonzero(present)
            local_of = np.empty(n_names, dtype=np.int64)
            local_of[uniq] = self._entries(model, uniq)
            return local_of[codes]
        uniq, inverse = np.unique(codes, return_inverse=True)
        return self._entries(model, uniq)[inverse.reshape(-1)]

    def _entries(self, model: TraceModel, uniq: np.ndarray) -> np.ndarray:
        """The table's code of each of the model's name codes `uniq`, new names added."""
        in_range = uniq.size == 0 or (int(uniq[0]) >= 0 and int(uniq[-1]) < len(model.names))
        if in_range and self._one_model(model):
            return self._placed(model, uniq)
        self._model, self._place = None, None  # from here on, names matched by their text
        local = np.empty(uniq.size, dtype=np.int64)
        for i, code in enumerate(uniq.tolist()):
            name = model.names[code] if 0 <= code < len(model.names) else ""
            found = self.index.get(name)
            if found is None:
                found = len(self.table)
                self.index[name] = found
                self.table.append(name)
            local[i] = found
        return local

    def _one_model(self, model: TraceModel) -> bool:
        """Whether `model`'s codes are placed by numpy: it is the only model entered and
        names nothing twice (its codes then name the table's entries one to one)."""
        if self._model is model:
            return True
        if self.table or not names_unique(model):
            return False
        self._model = model
        self._place = np.full(len(model.names), -1, dtype=np.int64)
        return True

    def _placed(self, model: TraceModel, uniq: np.ndarray) -> np.ndarray:
        """`_entries` of the one model (`uniq`: its codes, ascending, in range)."""
        assert self._place is not None
        place = self._place
        new = uniq[place[uniq] < 0]
        place[new] = np.arange(len(self.table), len(self.table) + new.size)
        names = model.names
        self.table.extend([names[code] for code in new.tolist()])
        self._index = None  # made from the table if asked
        return place[uniq]


def names_unique(model: TraceModel) -> bool:
    """Whether no two of the model's name codes name the same text (kept)."""
    found: bool = model.derived("_names_unique", lambda m: len(set(m.names)) == len(m.names))
    return found


KEPT_ANSWERS = 16  # per model: the last answers of the trace view's windowed routes


class FairLane:
    """A lock taken in the order it was asked for: on release it goes to the thread that has
    waited longest. (A `threading.Lock` goes to whichever thread runs first, often one that
    just arrived, so under load some requests waited behind many later ones: p99 about
    twice p50 against ~1.6 times in order, at the same throughput.)"""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._queue: deque[threading.Lock] = deque()  # one held lock a waiting thread
        self._held = False

    def __enter__(self) -> None:
        with self._guard:
            if not self._held:
                self._held = True
                return
            turn = threading.Lock()
            turn.acquire()
            self._queue.append(turn)
        turn.acquire()  # released by the thread that hands the lane over

    def __exit__(self, *_: object) -> None:
        with self._guard:
            if self._queue:
                self._queue.popleft().release()  # held passes on without a gap
            else:
                self._held = False

    def locked(self) -> bool:
        return self._held

    def waiting(self) -> int:
        return len(self._queue)


# The windowed routes' answers are made one at a time, whatever the trace: each is a few
# ms of numpy and encoding under the GIL. Made side by side (TensorBoard serves each
# request in its own thread), every numpy call that lets the GIL go hands it to another
# request for up to the switch interval, so a wide window waited through many: under the
# bench's load (16 in flight, a 4 GB trace) p99 ~140 ms and 3.0 ms of server CPU a request
# (GIL hand-offs in the kernel), against ~75 ms and 1.9 ms in one lane. A request waiting
# for the lane sleeps; an answer already kept never waits.
WINDOW_LANE = FairLane()


class KeptAnswers:
    """The JSON of a route's last `size` answers, by their resolved request: the model
    never changes, so an answer asked again is the one given before (the track list is
    asked at every pan, a window again at every redraw: a 4 GB trace's tracks ~80 KB).
    Only the JSON is kept, not the answer: its lists (tens of thousands of items) kept
    alive would be walked by each garbage collection meanwhile (at 4 GB under the bench's
    load: ~10 % of the server's CPU, pauses of 20-60 ms); made and encoded, the answer
    is freed at once."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
            return found

    def put(self, key: Hashable, json: bytes) -> None:
        with self._lock:
            self._answers[key] = json
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)


def kept_json(
    workers: Sequence[WorkerTrace], route: str, request: tuple[Any, ...], answer: Any
) -> bytes:
    """The JSON of `route`'s answer to the resolved `request` on these workers: the bytes
    given before when among the route's last KEPT_ANSWERS of the first worker's model,
    else `answer()` encoded (kept). A trace's views never change, and the same window is
    asked again whenever a page is drawn again (a whole 4 GB trace's window: tens of ms)."""
    key = (route, tuple((w.name, *sorted(w.model.source.items())) for w in workers), request)
    # One memo a route: a pan through many windows does not push out the track list.
    kept = workers[0].model.derived(f"_kept_{route}", lambda _: KeptAnswers(KEPT_ANSWERS))
    found = kept.get(key)
    if found is not None:
        return found
    with WINDOW_LANE:
        found = kept.get(key)  # made meanwhile by the request ahead in the lane
        if found is None:
            found = msgspec.json.encode(answer())
            kept.put(key, found)
    return found
