"""The per-file structures the trace view's routes need (the index, the flow pairs, the
range sums, ...), and what a route does when one is not built yet: it answers 202 at once
while the structure is built in the background, once (`still_building`).

A 4 GB trace's flow pairs or range sums take seconds of CPU the first time; a request
that built them would hold a request thread, and every request of the same route would
queue behind it (cold p99: flows 1.9 s, range_summary 3.2 s). The frontend asks a 202
again (`getReady`); a door that waits (CLI, notebook) waits on the build's event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..analysis.core.health.view import ROW_CHECKS_KEY, row_checks
from ..model.derived_tables import is_derived, unrecorded
from ..model.trace_model import TraceModel
from .index import index_of
from .index_store import kept_on_disk
from .links import flow_pairs, track_ranges
from .range_summary import range_sums
from .workers import WorkerTrace, counters_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Structure:
    """One structure of a model: its `TraceModel.derived` key, how a 202 names it, and
    its build (kept with the model, and on disk beside it)."""

    key: str
    what: str
    build: Callable[[TraceModel], object]


def _health_marks(model: TraceModel) -> None:
    """The health checks' marks of each row (what `trace` flags), kept on disk beside the
    index and given to the model as the health view's own structure when read back."""
    bits = kept_on_disk(
        model,
        "health_row_checks",
        lambda: row_checks(model),
        lambda found: ({"bits": found}, {}),
        lambda arrays, _: arrays["bits"],
    )
    model.derived(ROW_CHECKS_KEY, lambda _: bits)  # nothing when computed already


INDEX = Structure("_timeline_index", "index", index_of)
COUNTERS = Structure(
    "_timeline_counters", "counter tracks", lambda m: counters_of(WorkerTrace(None, m))
)
HEALTH_MARKS = Structure(ROW_CHECKS_KEY, "health marks", _health_marks)
FLOW_PAIRS = Structure("_timeline_flow_pairs", "flow pairs", lambda m: flow_pairs(m, index_of(m)))
TRACK_RANGES = Structure(
    "_timeline_track_ranges", "track ranges", lambda m: track_ranges(m, index_of(m))
)
RANGE_SUMS = Structure("_timeline_range_sums", "range sums", lambda m: range_sums(m, index_of(m)))

# Every structure, in the order `prepare` builds them once a trace loads.
STRUCTURES = (INDEX, COUNTERS, HEALTH_MARKS, FLOW_PAIRS, TRACK_RANGES, RANGE_SUMS)

# What each route needs of every worker's model before it answers at once.
ROUTE_NEEDS: dict[str, tuple[Structure, ...]] = {
    "tracks": (INDEX, COUNTERS),
    "trace": (INDEX, COUNTERS, HEALTH_MARKS),
    "flows": (INDEX, COUNTERS, FLOW_PAIRS, TRACK_RANGES),
    "range_summary": (INDEX, COUNTERS, RANGE_SUMS),
    "event": (INDEX, FLOW_PAIRS, TRACK_RANGES),
    "search": (INDEX,),
}


@dataclass
class Build:
    """One background build of a structure: `done` set once it ended, `failed` if it
    raised (the route then builds it itself and reports the error)."""

    structure: Structure
    done: threading.Event = field(default_factory=threading.Event)
    failed: bool = False


_STARTING = threading.Lock()


def still_building(route: str, models: Sequence[TraceModel]) -> tuple[int, Build] | None:
    """The first structure `route` needs that one of `models` lacks: which model, and
    its build (started in the background unless it was); None when all are built, or when
    a background build of a missing one failed (the request then builds it)."""
    for at, model in enumerate(models):
        for structure in ROUTE_NEEDS.get(route, ()):
            if is_derived(model, structure.key):
                continue
            build = _started(model, structure)
            if build.failed:
                return None
            return at, build
    return None


def _started(model: TraceModel, structure: Structure) -> Build:
    """The model's build of `structure`: the one under way, or a new one started (also
    when one ended but the structure was let go since: `forget_derived`)."""
    builds: dict[str, Build] = model.derived("_trace_view_builds", lambda _: {})
    with _STARTING:
        build = builds.get(structure.key)
        if build is not None and (not build.done.is_set() or build.failed):
            return build
        build = builds[structure.key] = Build(structure)
    thread = threading.Thread(
        target=unrecorded(_build),
        args=(model, build),
        name=f"kinetoscope-build-{structure.what.replace(' ', '-')}",
        daemon=True,
    )
    thread.start()
    return build


def _build(model: TraceModel, build: Build) -> None:
    try:
        build.structure.build(model)
    except Exception as exc:  # noqa: BLE001 - background work: the request reports it
        build.failed = True
        log.warning("kinetoscope: trace view %s not built: %s", build.structure.what, exc)
    finally:
        build.done.set()
