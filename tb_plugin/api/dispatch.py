"""The one way every door (the TensorBoard routes, the CLI, the notebook, the MCP server)
asks an endpoint: `Dispatch(endpoint, session, names, query)` resolves the names once
(run, worker or workers, span, target_*: `resolve`), decodes the query once (the request
type) and starts the loads; `answer()` then says `Ready` (the route's JSON, encoded once,
or the trace file to send) or `Pending` (the endpoint's loading body: a span's load
status, a run job's progress, the trend's files summarised). It is the only switch on an
endpoint's scope and answer. HTTP answers Pending with 202; a door that waits calls
`wait(timeout)`, or polls `Pending.ready()` where it must stay cancellable (MCP).

Errors are raised as the resolver, the request type and the store raise them
(`NotFound`, `ViewParamError`, `LoadFailed`), a failed run job as `failures.JobFailed`:
each door maps them through `failures.failure`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from ..ingest.discovery import Run
from ..ingest.limits import env_number
from ..model.errors import TooLarge, ViewParamError
from ..model.trace_model import TraceModel, columns_nbytes
from ..store.run_context import Progress
from ..store.run_jobs import FAILED, LOADING, RunJobState
from ..store.trace_store import LoadFailed, NotReady
from ..store.view_budget import Queued
from .answers import status_body
from .failures import Failure, JobFailed, failure
from .registry import Answer, Endpoint, Scope
from .resolve import NotFound, Target, find_run, resolve, worker_names
from .session import ListingPending, Session

if TYPE_CHECKING:  # the file route's: imported when a file is first sent (never by a report)
    from ..trace_view.building import Build
    from .downloads import Download

Names = Mapping[str, Any]  # run, worker, workers, span, target_run, target_worker, target_span
POLL_S = 0.05  # how often a wait without an event asks again (the first listing)


class Ready(msgspec.Struct, frozen=True):
    """The answer: `body` the route's JSON (encoded once); for a file answer, `file` the
    trace file to send (loaded, so it read as a trace; opened and checked) and an empty
    body."""

    body: bytes
    file: Download | None = None

    def json(self) -> Any:
        """The body decoded (what `kinetoscope report --format json` prints for a view)."""
        return msgspec.json.decode(self.body)


class Pending(msgspec.Struct, frozen=True):
    """Not there yet: `body` what the route's 202 carries (the endpoint's loading type),
    `message` what a door that stops waiting says, `status` what the MCP door shows with
    it; `event` is set once asking again may answer (None: ask again after a moment)."""

    body: Mapping[str, Any]
    message: str
    event: threading.Event | None = None
    status: Mapping[str, Any] = msgspec.field(default_factory=dict)

    def ready(self) -> bool:
        return self.event is None or self.event.is_set()


class Failed(msgspec.Struct, frozen=True):
    """What `dispatch` returns instead of raising: the error and what it answers (the
    route's kind, HTTP status and message, `failures.failure`)."""

    error: Exception
    failure: Failure


Result = Ready | Pending
Step = Callable[[], Result]


def dispatch(
    endpoint: Endpoint, session: Session, names: Names, query: Names
) -> Ready | Pending | Failed:
    """One answer, without waiting, a failure returned rather than raised: the
    TensorBoard routes go down here once and come back with all they answer."""
    call = Dispatch(endpoint, session, names, query)
    try:
        return call.answer()
    except Exception as exc:  # noqa: BLE001 - every failure is answered, never a crash
        return Failed(exc, failure(endpoint.name, exc, call.files))


class Dispatch:
    """One call of `endpoint` by a door: `names` the scope's names, `query` the raw
    request parameters (text, as a URL's query carries them)."""

    def __init__(
        self,
        endpoint: Endpoint,
        session: Session,
        names: Names,
        query: Names,
        progress: Progress | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.session = session
        self.names = names
        self.query = query
        self.progress = progress  # told as a run job summarises its files (the CLI)
        self.targets: list[Target] = []  # the trace files resolved (errors, provenance)
        self.params: Any = None  # the query decoded by the request type, once
        self._step: Step | None = None

    def prepare(self) -> None:
        """Resolve the names and decode the query now (their errors raised here)."""
        if self._step is None:
            self._step = self._resolve()

    @property
    def files(self) -> list[str]:
        return [target.span.file for target in self.targets]

    def answer(self) -> Result:
        """Ready or Pending now; the names are resolved on the first call only."""
        try:
            self.prepare()
        except ListingPending as listing:
            return Pending(listing.body, "listing the logdir...")
        assert self._step is not None
        return self._step()

    def wait(self, timeout: float | None = None) -> Result:
        """Ready, or Pending once `timeout` seconds passed (None: no bound)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            result = self.answer()
            if isinstance(result, Ready):
                return result
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return result
            if result.event is None:
                time.sleep(POLL_S if left is None else min(POLL_S, left))
            elif not result.event.wait(left):
                return self.answer()

    def ready(self, timeout: float | None = None) -> Ready:
        """For a door that blocks (the CLI, the notebook): Ready, or TimeoutError when
        still pending after `timeout` seconds; a failed run job raises what it raised, as
        calling its compute function would have."""
        try:
            result = self.wait(timeout)
        except JobFailed as failed:
            raise (failed.error or failed) from None
        if isinstance(result, Pending):
            raise TimeoutError(result.message)
        return result

    # --- the scope switch -----------------------------------------------------------

    def _resolve(self) -> Step:
        endpoint, names, scope = self.endpoint, self.names, self.endpoint.scope
        if scope is Scope.LOGDIR:
            runs = self.session.runs()
            if endpoint.answer is Answer.RUN_JOB:
                params = self._decode()
                return lambda: self._logdir_job(runs, params)
            return lambda: _ready(endpoint.of_listing(runs))
        run = find_run(self.session.runs(), _text(names.get("run")))
        if scope is Scope.PAIR:
            target_run = find_run(self.session.runs(), _text(names.get("target_run")), "target_run")
            self.targets = [
                resolve(run, _text(names.get("worker")), names.get("span")),
                resolve(target_run, _text(names.get("target_worker")), names.get("target_span")),
            ]
            return self._with_models(self._decode())
        if scope is Scope.WORKER:
            worker = resolve(run, _text(names.get("worker"))).worker
            return lambda: _ready(endpoint.of_listing(run, worker))
        if scope is Scope.RUN:
            params = self._decode()  # 400 on a bad parameter, before any loading
            if endpoint.answer is Answer.RUN_JOB:
                span = _text(names.get("span"))
                _known_span(run, span)  # 404, not every worker's first span
                return lambda: self._run_job(run, span, params)
            return lambda: _ready(endpoint.of_listing(run))
        return self._span_step(run)

    def _span_step(self, run: Run) -> Step:
        """One span (`worker`), or with Scope.SPANS also several (`workers=W1,W2`)."""
        endpoint, names = self.endpoint, self.names
        span = names.get("span")
        several = worker_names(_text(names.get("workers"))) if endpoint.scope is Scope.SPANS else []
        if several:
            self.targets = [resolve(run, name, span) for name in several]
        else:
            self.targets = [resolve(run, _text(names.get("worker")), span)]
        params = self._decode()  # parsed once; 400 before any loading
        first = self.targets[0]
        store = self.session.store
        if endpoint.answer is Answer.STATUS:
            return lambda: _ready(status_body(store, first))
        if endpoint.answer is Answer.FILE:
            return lambda: self._file(first)
        if endpoint.scope is Scope.SPANS:
            return self._with_models(params, several=bool(several))

        def span_view() -> Result:
            try:
                return Ready(endpoint.answer_json(store, first.span.path, params))
            except NotReady:
                return self._loading(first)
            except Queued as queued:
                return self._queued(first, queued)

        return span_view

    # --- answers ---------------------------------------------------------------------

    def _decode(self) -> Any:
        self.params = self.endpoint.decode(self.query)
        return self.params

    def _with_models(self, params: Any, several: bool = False) -> Step:
        """The compute function of every target's model: a pair's base then target, or
        the trace view's workers (each named when several); every load started at the
        first answer."""
        store = self.session.store

        def step() -> Result:
            # Each file's model asked (its load started if it was not; one stat of the file
            # a request); where one is not ready, the others' loads are started too.
            models = []
            for at, target in enumerate(self.targets):
                try:
                    models.append(store.model(target.span.path))
                except (NotReady, LoadFailed) as missing:
                    for later in self.targets[at + 1 :]:
                        store.state_for(later.span.path)
                    if isinstance(missing, NotReady):
                        return self._loading(target)
                    raise
            if self.endpoint.scope is Scope.PAIR:
                return self._pair(models[0], models[1], params)
            # The trace view's (not the report's): a structure the route needs that is not
            # built yet is built in the background (202), never in a request's thread.
            from ..trace_view.building import still_building
            from ..trace_view.workers import WorkerTrace

            building = still_building(self.endpoint.name, models)
            if building is not None:
                return self._building(self.targets[building[0]], building[1])
            traces = [
                WorkerTrace(target.worker.name if several else None, model)
                for target, model in zip(self.targets, models)
            ]
            return Ready(self.endpoint.traces_json(traces, params))

        return step

    def _pair(self, base: TraceModel, target: TraceModel, params: Any) -> Result:
        """A pair's view, once the views' memory budget admits it (its cost over both
        models' columns)."""
        need = self.endpoint.memory_cost * (columns_nbytes(base) + columns_nbytes(target))
        key = (self.endpoint.name, *(t.span.path for t in self.targets), repr(params))
        budget = self.session.store.view_budget
        try:
            with budget.admitted(key, int(need), f"the {self.endpoint.name} view"):
                return _ready(self.endpoint.of_pair(base, target, params))
        except Queued as queued:
            return self._queued(self.targets[0], queued)

    def _loading(self, target: Target) -> Pending:
        store = self.session.store
        status = status_body(store, target)
        event = store.state_for(target.span.path).done
        read = _loading_text(target.span.file, status["bytes_done"], status["bytes_total"])
        return Pending(status, read, event, status)

    def _queued(self, target: Target, queued: Queued) -> Pending:
        """A span view's 202 while it waits for the views' memory budget: the file's
        status (loaded) and `queued`, its place in line."""
        body = {**status_body(self.session.store, target), "queued": queued.queue}
        place = queued.queue["place"]
        message = f"{self.endpoint.name} waits for memory (place {place} in line); call again"
        return Pending(body, message, queued.event, body)

    def _building(self, target: Target, build: Build) -> Pending:
        """A trace view route's 202 while a structure it needs is built: the file's
        status (loaded) and `building`, the structure's name."""
        what = build.structure.what
        body = {**status_body(self.session.store, target), "building": what}
        message = f"the trace view of {target.span.file} is building its {what}; call again"
        return Pending(body, message, build.done, body)

    def _file(self, target: Target) -> Result:
        """The trace file, once it loaded as a trace (a refused or broken one raises its
        load error), opened (`downloads`); waits for the load at most
        KINETOSCOPE_DOWNLOAD_WAIT_S."""
        try:
            self.session.store.wait(
                target.span.path, timeout=env_number("KINETOSCOPE_DOWNLOAD_WAIT_S", 10)
            )
        except NotReady:
            return self._loading(target)
        from .downloads import open_download

        return Ready(b"", open_download(target))

    def _run_job(self, run: Run, span: str | None, params: dict[str, Any]) -> Result:
        """Run-level: every rank of the run as one job of the session's run jobs."""
        compute = self.endpoint.of_context
        name = self.endpoint.name
        need_of = self.endpoint.run_need
        job = self.session.jobs.job(name, compute, run, span, self.progress, params, need_of)
        return self._job_answer(job, job.progress())

    def _logdir_job(self, runs: tuple[Run, ...], params: dict[str, Any]) -> Result:
        """Logdir-level (the trend): every run's traces as one job."""
        compute = self.endpoint.of_context
        need_of = self.endpoint.run_need
        jobs = self.session.jobs
        job = jobs.logdir_job(self.endpoint.name, compute, runs, params, self.progress, need_of)
        body = {"state": LOADING, "files_done": job.ranks_done, "files_total": job.ranks_total}
        return self._job_answer(job, body)

    def _job_answer(self, job: RunJobState, body: dict[str, Any]) -> Result:
        name = self.endpoint.name
        if isinstance(job.error, (ViewParamError, TooLarge)):  # the client's 400, 413
            raise job.error
        if job.state == FAILED or (job.state != LOADING and job.result is None):
            raise JobFailed(job.failure or f"{name} view failed", job.error)
        if job.state == LOADING:
            done = f"{job.ranks_done} of {job.ranks_total} trace files read"
            message = f"{name} is still loading: {done}; call again"
            return Pending(body, message, job.done, job.progress())
        assert job.result is not None
        return Ready(job.result)


def _ready(value: Any) -> Ready:
    return Ready(msgspec.json.encode(value))


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _loading_text(file: str, done: int, total: int) -> str:
    read = f"{done / 1e6:.1f} of {total / 1e6:.1f} MB read" if total else "started"
    return f"{file} is still loading ({read}); call again, or call `status`"


def _known_span(run: Run, span: str | None) -> None:
    """A run-level job's span: one some worker of the run has (a name none has, such as
    `../../x`, is a 404, as a span route's is), or none (each worker's first)."""
    if span is None or not run.workers:
        return
    if not any(s.name == span for w in run.workers for s in w.spans):
        known = sorted({s.name for w in run.workers for s in w.spans})
        raise NotFound(f"run {run.name!r} has no span {span!r} (spans: {', '.join(known)})")
