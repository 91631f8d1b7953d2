"""The TensorBoard plugin: one generic handler over the endpoint registry.

Every route is an entry of `api.endpoints.ENDPOINTS`. The handler resolves what the query
addresses (run, worker or workers, span: a missing `span` means the worker's first span,
the one the UI shows when none is chosen), decodes the query parameters once by the
request type, loads, calls the endpoint's pure compute function with them and answers
JSON through `http_util.Respond`; an endpoint whose `answer` names another way (the load
status, the run's background job, a file) is answered that way, never by its name. One
error mapper turns exceptions into `tensorboard.errors` (404 unknown names, 400 bad
arguments, 422 a file that cannot be read, 500 an analysis bug), and one answer says
"still loading" (202 with the endpoint's loading body). Routes are
listed in docs/http_api.md.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Any

import msgspec
from tensorboard import errors
from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers
from werkzeug.utils import send_file

from ..api.answers import status_body
from ..api.endpoints import ENDPOINTS
from ..api.failures import ANALYSIS, BAD_ARGUMENT, NOT_FOUND, UNREADABLE, failure
from ..api.registry import Answer, Endpoint, Scope
from ..api.resolve import Target, find_run, resolve, worker_names
from ..ingest import storage
from ..ingest.discovery import Run
from ..ingest.formats import FORMATS
from ..ingest.limits import env_number
from ..ingest.naming import parse_trace_name
from ..ingest.watcher import BackgroundWatcher, StillListing
from ..model.errors import ViewParamError
from ..model.trace_model import TraceModel
from ..store.cache import DiskCache, default_cache_dir
from ..store.pools import executor_from_env
from ..store.run_jobs import FAILED, LOADING, RunJobs
from ..store.trace_store import NotReady, TraceStore, describe_error
from ..trace_view.workers import WorkerTrace
from .static_files import dist_root, respond_static

log = logging.getLogger(__name__)
PLUGIN_NAME = "kinetoscope"
# werkzeug types `application` for plain functions; our routes are methods.
route: Any = wrappers.Request.application
JSON = "application/json"


class StillLoading(Exception):
    """The data is not there yet: answered 202 with `body` (the endpoint's loading type)."""

    def __init__(self, body: Any) -> None:
        super().__init__("still loading")
        self.body = body


class TraceUnreadableError(errors.PublicError):
    """The worker's trace file cannot be read; other workers are unaffected."""

    http_code = 422

    def __init__(self, message: str) -> None:
        super().__init__(message)


class LogdirUnreadableError(errors.PublicError):
    """The logdir cannot be listed: an object store refused (credentials, a missing bucket)
    or its backend is not installed. 502: the store behind the server failed, not the
    request."""

    http_code = 502

    def __init__(self, message: str) -> None:
        super().__init__(message)


class AnalysisError(errors.PublicError):
    http_code = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)


_PUBLIC: dict[str, Any] = {
    BAD_ARGUMENT: errors.InvalidArgumentError,
    NOT_FOUND: errors.NotFoundError,
    UNREADABLE: TraceUnreadableError,
    ANALYSIS: AnalysisError,
}


def public_error(endpoint: Endpoint, exc: Exception, files: list[str]) -> errors.PublicError:
    """The one error mapper: what each failure of a route answers."""
    if isinstance(exc, errors.PublicError):
        return exc
    said = failure(endpoint.name, exc, files)  # api/failures: the same for every door
    return _PUBLIC[said.kind](said.message)


def _logdir(context: base_plugin.TBContext) -> str:
    logdir = getattr(context, "logdir", None)
    if not logdir and getattr(context, "flags", None) is not None:
        logdir = getattr(context.flags, "logdir_spec", "") or getattr(context.flags, "logdir", "")
    return os.path.expanduser(logdir or "")


class KinetoscopePlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext) -> None:
        self.logdir = _logdir(context)
        interval = env_number("KINETOSCOPE_RESCAN_SECONDS", 10)
        # The first listing runs off the request thread: a store that never answers must
        # not hold TensorBoard's plugins_listing (every plugin's page).
        first_wait = env_number("KINETOSCOPE_FIRST_LISTING_WAIT_S", 2)
        self.watcher = BackgroundWatcher(self.logdir, interval_s=interval, first_wait_s=first_wait)
        self._started = False
        self._start_lock = threading.Lock()
        self._active = False
        cache: DiskCache | None = None
        if os.environ.get("KINETOSCOPE_NO_CACHE") != "1":
            cache = DiskCache(default_cache_dir())
        # Ranks come from the store: a trace the UI is loading is not parsed again.
        self.store = TraceStore(cache, executor=executor_from_env())
        self.run_jobs = RunJobs(self.store)  # run-level views (distributed) in the background
        self.static_root = dist_root()

    # --- TensorBoard hooks ------------------------------------------------------

    def get_plugin_apps(self) -> dict[str, Any]:
        apps = {f"/{name}": self._handler(endpoint) for name, endpoint in ENDPOINTS.items()}
        # Any other path of the plugin: the JSON error body, as every route's (TensorBoard
        # itself answers text/plain); the longer `static/*` still comes first.
        return {**apps, "/*": self._unknown_route}

    @route
    def _unknown_route(self, request: wrappers.Request) -> Any:
        name = request.path.rsplit(f"/{PLUGIN_NAME}/", 1)[-1]
        known = ", ".join(sorted(n for n, e in ENDPOINTS.items() if e.scope is not Scope.STATIC))
        message = f"no route named {name!r} (known: {known})"
        return self._error(request, errors.NotFoundError(message))

    def is_active(self) -> bool:
        # Sticky: once traces were seen the tab stays, even while files are rewritten.
        if not self._active and self.logdir:
            try:
                self._active = bool(self._runs())
            except LogdirUnreadableError as exc:
                log.warning("kinetoscope: %s", exc)
            except StillLoading:
                pass  # not known yet: asked again at TensorBoard's next plugins_listing
        return self._active

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(
            es_module_path="/static/index.js", tab_name="PyTorch Profiler", disable_reload=False
        )

    # --- helpers ----------------------------------------------------------------

    def _runs(self) -> tuple[Run, ...]:
        if not self._started:
            with self._start_lock:
                if not self._started:
                    self.watcher.start()
                    self._started = True
        try:
            return self.watcher.runs()
        except StillListing:
            raise StillLoading({"state": "listing", "message": "listing the logdir..."}) from None
        except OSError as exc:  # only a URL logdir raises: a local one lists what it can
            raise LogdirUnreadableError(f"cannot list the logdir: {exc}") from None

    # --- the generic handler ----------------------------------------------------

    def _handler(self, endpoint: Endpoint) -> Any:
        @route
        def serve(request: wrappers.Request) -> Any:
            files: list[str] = []  # the trace files resolved, for an error message
            try:
                answer = self._answer(endpoint, request, files)
            except StillLoading as loading:
                return self._json(request, loading.body, code=202)
            except Exception as exc:  # noqa: BLE001 - an analysis bug must not kill TensorBoard
                return self._error(request, public_error(endpoint, exc, files))
            if isinstance(answer, wrappers.Response):
                return answer
            return self._json(request, answer)

        return serve

    def _answer(self, endpoint: Endpoint, request: wrappers.Request, files: list[str]) -> Any:
        """A JSON body (bytes, or an object to encode) or a whole response."""
        args, scope = request.args, endpoint.scope
        if scope is Scope.STATIC:
            return respond_static(request, PLUGIN_NAME, self.static_root)
        if scope is Scope.LOGDIR:
            if endpoint.answer is Answer.RUN_JOB:
                return self._logdir_job(endpoint, endpoint.decode(args))
            return endpoint.call(self._runs())
        run = self._find_run(args)
        if scope is Scope.PAIR:
            return self._pair_view(endpoint, request, run, files)
        if scope is Scope.WORKER:
            return endpoint.call(run, resolve(run, args.get("worker")).worker)
        if scope is Scope.RUN:
            endpoint.decode(args)  # 400 on a bad parameter, though none is read yet
            if endpoint.answer is Answer.RUN_JOB:
                return self._run_job(endpoint, run, args.get("span"))
            return endpoint.call(run)
        targets = self._resolve_spans(run, args, several=scope is Scope.SPANS)
        files.extend(target.span.file for _, target in targets)
        params = endpoint.decode(args)  # parsed once; 400 before any loading
        first = targets[0][1]
        if endpoint.answer is Answer.STATUS:
            return self._status_body(first)
        if endpoint.answer is Answer.FILE:
            return self._download(request, first)
        if scope is Scope.SPANS:
            return self._trace_view(endpoint, targets, params)
        return self._span_view(endpoint, first, params)

    def _error(self, request: wrappers.Request, error: errors.PublicError) -> Any:
        """The documented error body, `{"error": {"message": ...}}` as JSON with the
        error's code (TensorBoard's own handler would answer text/plain)."""
        if error.http_code >= 500:
            log.warning("kinetoscope: %s", error)
        response = self._json(request, {"error": {"message": str(error)}}, code=error.http_code)
        for name, value in error.headers:
            response.headers[name] = value
        return response

    def _json(self, request: wrappers.Request, body: Any, code: int = 200) -> Any:
        data = body if isinstance(body, bytes) else msgspec.json.encode(body)
        return http_util.Respond(request, data, JSON, code=code)

    # --- names to files: the api's one resolver ---------------------------------------

    def _find_run(self, args: Any, param: str = "run") -> Run:
        return find_run(self._runs(), args.get(param), param)

    @staticmethod
    def _resolve_spans(run: Run, args: Any, several: bool) -> list[tuple[str | None, Target]]:
        """`worker=W`: one span, (None, target). With `several` (the trace view), also
        `workers=W1,W2` of one run: each (worker name, target), on one time axis."""
        span_name = args.get("span")
        names = worker_names(args.get("workers")) if several else []
        if not names:
            return [(None, resolve(run, args.get("worker"), span_name))]
        return [(name, resolve(run, name, span_name)) for name in names]

    def _resolve_pair(self, run: Run, args: Any) -> list[Target]:
        """`Scope.PAIR`: the base (run, worker, span) and the target (target_run,
        target_worker, target_span), each resolved as one span is."""
        target_run = self._find_run(args, "target_run")
        return [
            resolve(run, args.get("worker"), args.get("span")),
            resolve(target_run, args.get("target_worker"), args.get("target_span")),
        ]

    # --- answers --------------------------------------------------------------------

    def _status_body(self, target: Target) -> dict[str, Any]:
        return status_body(self.store, target)

    def _span_view(self, endpoint: Endpoint, target: Target, params: Any) -> Any:
        try:
            return endpoint.answer_json(self.store, target.span.path, params)
        except NotReady:
            raise StillLoading(self._status_body(target)) from None

    def _trace_view(
        self, endpoint: Endpoint, targets: list[tuple[str | None, Target]], params: Any
    ) -> Any:
        models = self._loaded_models([target for _, target in targets])
        workers = [WorkerTrace(worker, model) for (worker, _), model in zip(targets, models)]
        return msgspec.json.encode(endpoint.call(workers, params))

    def _loaded_models(self, targets: list[Target]) -> list[TraceModel]:
        """The models of several trace files, every load started before waiting on one;
        while one loads, 202 with its status."""
        for target in targets:
            self.store.state_for(target.span.path)
        models = []
        for target in targets:
            try:
                models.append(self.store.model(target.span.path))
            except NotReady:
                raise StillLoading(self._status_body(target)) from None
        return models

    def _pair_view(
        self, endpoint: Endpoint, request: wrappers.Request, run: Run, files: list[str]
    ) -> Any:
        """Both spans' models to the compute function (base first); 202 with the status of
        the first side still loading."""
        sides = self._resolve_pair(run, request.args)
        files.extend(side.span.file for side in sides)
        params = endpoint.decode(request.args)  # parsed once; 400 before any loading
        models = self._loaded_models(sides)
        return msgspec.json.encode(endpoint.call(*models, params))

    def _run_job(self, endpoint: Endpoint, run: Run, span: str | None) -> Any:
        """Run-level: all ranks of the run as one job (202 with progress while summarizing).
        The job's state is mapped here, at its one boundary."""
        assert endpoint.compute is not None  # a RUN_JOB endpoint has its view function
        job = self.run_jobs.job(endpoint.name, endpoint.compute, run, span)
        if job.state == FAILED:  # the cross-rank analysis failed, not a rank
            raise AnalysisError(job.failure or f"{endpoint.name} view failed")
        if job.state == LOADING:
            raise StillLoading(job.progress())
        return job.result

    def _logdir_job(self, endpoint: Endpoint, params: dict[str, Any]) -> Any:
        """Logdir-level (the trend): every run's traces as one job (202 with the files
        summarised while it runs)."""
        assert endpoint.compute is not None  # a RUN_JOB endpoint has its view function
        job = self.run_jobs.logdir_job(endpoint.name, endpoint.compute, self._runs(), params)
        if isinstance(job.error, ViewParamError):
            raise job.error
        if job.state == FAILED:
            raise AnalysisError(job.failure or f"{endpoint.name} view failed")
        if job.state == LOADING:
            body = {"state": LOADING, "files_done": job.ranks_done}
            raise StillLoading({**body, "files_total": job.ranks_total})
        return job.result

    def _download(self, request: wrappers.Request, target: Target) -> Any:
        """The trace file itself, streamed, as an attachment (an object in blocks); only a
        file that loaded as a trace (a refused or broken one answers its load error). The
        file sent is the one `storage` opened and checked (inside the logdir at that
        moment), never the path opened again."""
        span = target.span
        try:
            self.store.wait(span.path, timeout=env_number("KINETOSCOPE_DOWNLOAD_WAIT_S", 10))
        except NotReady:
            raise StillLoading(self._status_body(target)) from None
        try:
            handle = storage.open_binary(span.path)
        except FileNotFoundError:
            raise errors.NotFoundError(f"{span.file} was removed") from None
        except OSError as exc:  # a link swapped in since it loaded, a folder, a FIFO
            raise TraceUnreadableError(describe_error(span.path, exc)["message"]) from None
        gz = span.file.endswith(".gz")
        parsed = parse_trace_name(span.file)
        plain = FORMATS[parsed.format if parsed else "json"].mimetype
        local = None if storage.is_url(span.path) else os.fstat(handle.fileno())
        response = send_file(
            handle,
            request.environ,
            mimetype="application/gzip" if gz else plain,
            as_attachment=True,
            # CR, LF and other controls cannot go into a header (werkzeug refuses them).
            download_name=re.sub(r"[\x00-\x1f\x7f]", "_", span.file),
            etag=f"{local.st_mtime_ns}-{local.st_size}" if local else False,
            last_modified=local.st_mtime if local else None,
            conditional=False,
        )
        if local is not None:
            response.content_length = local.st_size
            response.make_conditional(
                request.environ, accept_ranges=True, complete_length=local.st_size
            )
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response
