"""One trace file (a worker's span) in a notebook: its views as pandas DataFrames.

Every frame is made from a route's JSON, computed by the endpoint's own compute function
with the request decoded by its own request type, and cached with the trace as the plugin
caches it (`Endpoint.caches`): a frame holds exactly the numbers the route answers. A new
frame of a new route is one method returning `self.rows(route, "its_rows_key", **params)`.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

from ..api.dispatch import Dispatch
from ..api.endpoints import ENDPOINTS, VIEWS
from ..api.lower import LoadSnapshot, SpanFile, TraceModel, memory_events_page_max
from ..api.registry import Scope
from ..api.session import Session
from .frames import breakdown_frame, events_frame, plain_fields, rows_frame, whole_path
from .gpu_idle_frames import queue_frame

# The JSON routes of one trace: its views, then the trace view's routes (of one worker here).
SPAN_ROUTES = {
    name: e
    for name, e in ENDPOINTS.items()
    if e.scope in (Scope.SPAN, Scope.SPANS) and e.response is not None
}

if TYPE_CHECKING:
    import pandas as pd


class Trace:
    """A worker's span of a run: `events()`, `overview()`, `breakdown()`, `operators()`,
    `kernels()`, `memory()` and friends return DataFrames; `view(route)` the route's JSON."""

    def __init__(self, session: Session, run: str, worker: str, span: SpanFile) -> None:
        self._session = session
        self._store = session.store
        self.run = run
        self.worker = worker
        self.span = span.name
        self.file = span.file
        self.path = span.path

    def __repr__(self) -> str:
        return f"<kinetoscope Trace run={self.run!r} worker={self.worker!r} span={self.span!r}>"

    # --- the data ------------------------------------------------------------------

    @property
    def model(self) -> TraceModel:
        """The columnar model (loaded once, from the disk cache when it holds this file);
        raises LoadFailed with the reason when the file cannot be read."""
        return self._store.wait(self.path)

    def status(self) -> LoadSnapshot:
        """What the `status` route says of this trace: state, partial, warnings, error."""
        self._store.state_for(self.path).done.wait()
        return self._store.status(self.path)

    def view(self, route: str, **params: Any) -> dict[str, Any]:
        """The JSON the span route `route` answers for these parameters (None: not given),
        decoded: parameters are checked by the route's request type (ViewParamError). Any
        route of one trace: its views (`overview`, `kernels`, ...) and the trace view's
        (`tracks`, `trace`, `event`, `search`, `flows`, `range_summary`, `source_paths`)."""
        endpoint = SPAN_ROUTES.get(route)
        if endpoint is None:
            raise ValueError(f"no span route named {route!r} (known: {', '.join(SPAN_ROUTES)})")
        query = {name: _query_text(value) for name, value in params.items() if value is not None}
        names = {"run": self.run, "worker": self.worker, "span": self.span}
        call = Dispatch(endpoint, self._session, names, query)
        call.prepare()  # the parameters checked before the load
        return call.ready().json()  # type: ignore[no-any-return]  # LoadFailed: why not

    def rows(self, route: str, key: str, **params: Any) -> pd.DataFrame:
        """The list `key` of the route's JSON as a frame (`frames.rows_frame`): one row per
        item, nested objects' fields as `parent.child` columns, plain fields in `attrs`."""
        return rows_frame(self.view(route, **params), key, SPAN_ROUTES[route].response)

    def frame(self, name: str, **params: Any) -> pd.DataFrame:
        """A frame a view's folder gives by `name` (its endpoint's `frames`, e.g.
        `serving_phases`), made of that view's JSON for these parameters: a view added
        with frames of its own needs no method here."""
        for route, endpoint in SPAN_ROUTES.items():
            if name in endpoint.frames_ref:
                return endpoint.frame(name)(self.view(route, **params))
        known = sorted(n for e in SPAN_ROUTES.values() for n in e.frames_ref)
        raise ValueError(f"no view gives a frame named {name!r} (known: {', '.join(known)})")

    # --- frames --------------------------------------------------------------------

    def events(self) -> pd.DataFrame:
        """One row per event of the model (index `row`, as the `event` route names it)."""
        return events_frame(self.model)

    def overview(self) -> pd.DataFrame:
        """One row per step of the `overview` route (`breakdown_us.<part>` columns); the
        route's totals, step count and source in `attrs`."""
        return self.rows("overview", "steps")

    def breakdown(self) -> pd.DataFrame:
        """One row per part of step time (index `part`: kernel, memcpy, ... other) with
        `total_us` and `average_us` (per step), as the `overview` route sums them."""
        return breakdown_frame(self.view("overview"), VIEWS["overview"].response)

    def devices(self) -> pd.DataFrame:
        """One row per GPU that ran kernels (the `overview` route's `devices`)."""
        return self.rows("overview", "devices")

    def operators(self, group_by: str = "name") -> pd.DataFrame:
        """One row per operator name (`group_by="shape"`: per name and input shape), as the
        `operators` route orders them."""
        return self.rows("operators", "rows", group_by=group_by)

    def kernels(
        self, group_by: str = "name", device: int | None = None, stream: int | None = None
    ) -> pd.DataFrame:
        """One row per kernel name (`group_by="op"`: per name and launching op), of one
        device or stream when given, as the `kernels` route answers."""
        return self.rows("kernels", "rows", group_by=group_by, device=device, stream=stream)

    def flamegraph(self, metric: str = "cpu") -> pd.DataFrame:
        """One row per node of the merged call paths of host time (`metric="cpu"`, per
        thread) or kernel time (`"gpu"`), as the `flamegraph` route answers
        (the view's `flamegraph_nodes` frame)."""
        return self.frame("flamegraph_nodes", metric=metric)

    def critical_path(self, step: str | int | None = None) -> pd.DataFrame:
        """One row per segment of the critical path (the `critical_path` route's
        `segments`: of every step, or of `step`, every page); its length and totals in
        `attrs`."""
        view = whole_path(
            lambda offset: self.view("critical_path", step=step, offset=offset),
            "segments",
            "segments_total",
        )
        return rows_frame(view, "segments", SPAN_ROUTES["critical_path"].response)

    def whatif(self, factor: float, rank: int | None = None, **change: Any) -> pd.DataFrame:
        """One row per step, recorded and predicted (the `whatif` route's `steps`) with one
        change: `kernel=`, `op=`, `collective=` or `rank_all=1`, scaled by `factor` (0.5:
        twice as fast); the medians and the predicted path in `attrs`."""
        return self.rows("whatif", "steps", factor=factor, rank=rank, **change)

    def memory(
        self, device: str | None = None, start_us: float | None = None, end_us: float | None = None
    ) -> pd.DataFrame:
        """One row per memory device: its peaks (`peak_op.*`: the op running at the
        allocated peak) in the range, from the `memory` route."""
        return self.rows("memory", "devices", device=device, start_us=start_us, end_us=end_us)

    def memory_operators(
        self, device: str | None = None, start_us: float | None = None, end_us: float | None = None
    ) -> pd.DataFrame:
        """One row per (device, operator name): allocations and releases, from the `memory`
        route's `operator_stats`."""
        params = {"device": device, "start_us": start_us, "end_us": end_us}
        return self.rows("memory", "operator_stats", **params)

    def memory_allocations(
        self,
        device: str | None = None,
        start_us: float | None = None,
        end_us: float | None = None,
        sort: str = "alloc",
    ) -> pd.DataFrame:
        """One row per allocation (paired with its free when seen), all of them: the pages
        of the `memory_events` route joined."""
        params = {"device": device, "start_us": start_us, "end_us": end_us, "sort": sort}
        first = self.view("memory_events", **params, limit=memory_events_page_max())
        rows = list(first["rows"])
        while len(rows) < first["total_rows"]:
            page = self.view(
                "memory_events", **params, offset=len(rows), limit=memory_events_page_max()
            )
            if not page["rows"]:
                break
            rows.extend(page["rows"])
        whole = {**first, "rows": rows, "offset": 0, "limit": len(rows)}
        return rows_frame(whole, "rows", VIEWS["memory_events"].response)

    # --- serving (the `serving` route) -------------------------------------------------

    def iterations(self) -> pd.DataFrame:
        """One row per iteration of a vLLM or SGLang serving trace (phase, start, duration,
        tokens, GPU busy and idle, graph replay share, scheduling, `top_kernels`), as the
        `serving` route answers; `attrs` has the engine, how they were found, and the
        `reason` when there are none."""
        view = whole_path(
            lambda offset: self.view("serving", offset=offset), "iterations", "iteration_count"
        )
        return rows_frame(view, "iterations", SPAN_ROUTES["serving"].response)

    def serving_phases(self) -> pd.DataFrame:
        """One row per phase (prefill, decode, mixed, ...) of the serving iterations: count,
        median / p90 times, tokens per second, kernel time by class, per-token estimates
        (the serving view's `frames.phases_frame`)."""
        return self.frame("serving_phases")

    # --- why the GPU is idle (the `gpu_idle` route) -----------------------------------

    def idle(self) -> pd.DataFrame:
        """One row per device lane and stream per step: idle ns by class (host wait,
        kernel wait, other) and shares of step time (the view's `gpu_idle_lanes` frame)."""
        return self.frame("gpu_idle_lanes")

    def idle_intervals(self) -> pd.DataFrame:
        """The longest idle intervals, with their class, cause and trace times (µs); `step`
        is the route's step index and `step_name` the step's name (as in `idle()`)."""
        view = self.view("gpu_idle")
        frame = rows_frame(view, "top_intervals", SPAN_ROUTES["gpu_idle"].response)
        names = [step["name"] for step in view["steps"]]
        frame.insert(
            int(frame.columns.get_loc("step")) + 1, "step_name", [names[i] for i in frame["step"]]
        )
        return frame

    def health(self) -> pd.DataFrame:
        """One row per health check (`id`, `count`, `severity`, `effect`, `examples`) as
        the `health` route answers; `attrs["status"]` is ok, warnings or errors."""
        return self.rows("health", "checks")

    def launch_delays(self) -> pd.DataFrame:
        """One row per kernel name: launch call start → kernel start (count, mean, p50,
        p90, max ns) and the launch call's own duration. Empty when launches are unknown
        (`attrs["reason"]` says why)."""
        return self._launch_delay("rows")

    def launch_outliers(self) -> pd.DataFrame:
        """The activities with the longest launch delays, with their start times (µs)."""
        return self._launch_delay("outliers")

    def queue_length(self) -> pd.DataFrame:
        """Per GPU stream, activities launched but not finished, as a step series
        (`gpu_idle_frames.queue_frame`): the trace view's queue tracks."""
        return queue_frame(self.model)

    def _launch_delay(self, key: str) -> pd.DataFrame:
        view = self.view("gpu_idle")
        response = SPAN_ROUTES["gpu_idle"].response  # the types cross the registry
        part = view["launch_delay"] or {key: []}
        frame = rows_frame(part, key, _not_none(typing.get_type_hints(response)["launch_delay"]))
        frame.attrs.update(plain_fields(view, response))
        return frame


def _not_none(hint: Any) -> Any:
    """`X` of an `X | None` hint."""
    (kept,) = [t for t in typing.get_args(hint) if t is not type(None)]
    return kept


def _query_text(value: Any) -> str:
    """A parameter as the query of a route carries it (the request type parses it back)."""
    if isinstance(value, bool):
        raise TypeError("view parameters are numbers or text, not booleans")
    return repr(value) if isinstance(value, float) else str(value)
