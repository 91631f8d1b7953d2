"""The TensorBoard plugin: thin routes over discovery, the trace store and the views.

Each route parses its arguments, calls one function, and answers JSON through
`http_util.Respond`; errors are `tensorboard.errors` (404 unknown names, 400 bad
arguments, 422 a file that cannot be read). Routes are listed in docs/http_api.md.
"""

from __future__ import annotations

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

from ..api.endpoints import VIEWS, supported_views
from ..api.listing import run_listing, worker_listing
from ..api.requests import ViewParamError
from ..ingest.discovery import LogdirWatcher, Run, SpanFile
from ..ingest.limits import env_number
from ..store.cache import DiskCache, default_cache_dir
from ..store.pools import executor_from_env
from ..store.run_jobs import FAILED, LOADING
from ..store.trace_store import LoadFailed, NotReady, TraceStore, exception_text
from ..trace_view.routes import ROUTES as TIMELINE_ROUTES
from ..trace_view.routes import TimelineNotFound, WorkerTrace
from .static_files import dist_root, respond_static

PLUGIN_NAME = "kinetoscope"
# werkzeug types `application` for plain functions; our routes are methods.
route: Any = wrappers.Request.application
JSON = "application/json"


class TraceUnreadableError(errors.PublicError):
    """The worker's trace file cannot be read; other workers are unaffected."""

    http_code = 422

    def __init__(self, message: str) -> None:
        super().__init__(message)


class AnalysisError(errors.PublicError):
    http_code = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)


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
        self.watcher = LogdirWatcher(self.logdir, interval_s=interval)
        self._started = False
        self._start_lock = threading.Lock()
        self._active = False
        cache: DiskCache | None = None
        if os.environ.get("KINETOSCOPE_NO_CACHE") != "1":
            cache = DiskCache(default_cache_dir())
        # Ranks come from the store: a trace the UI is loading is not parsed again.
        self.store = TraceStore(cache, executor=executor_from_env())
        self.static_root = dist_root()

    # --- TensorBoard hooks ------------------------------------------------------

    def get_plugin_apps(self) -> dict[str, Any]:
        return {
            "/runs": self._serve_runs,
            "/workers": self._serve_workers,
            "/spans": self._serve_spans,
            "/status": self._serve_status,
            "/distributed": self._serve_distributed,
            "/static/*": self._serve_static,
            **{f"/{name}": self._serve_timeline(name) for name in TIMELINE_ROUTES},
            "/download": self._serve_download,
            **{f"/{name}": self._serve_view(name) for name in VIEWS},
        }

    def is_active(self) -> bool:
        # Sticky: once traces were seen the tab stays, even while files are rewritten.
        if not self._active and self.logdir:
            self._active = bool(self._runs())
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
        return self.watcher.runs()

    def _find_run(self, request: wrappers.Request) -> Run:
        name = request.args.get("run")
        if not name:
            raise errors.InvalidArgumentError("missing parameter: run")
        for run in self._runs():
            if run.name == name:
                return run
        raise errors.NotFoundError(f"no run named {name!r}")

    def _find_span(self, request: wrappers.Request) -> SpanFile:
        run = self._find_run(request)
        worker_name = request.args.get("worker")
        span_name = request.args.get("span")
        if not worker_name:
            raise errors.InvalidArgumentError("missing parameter: worker")
        for worker in run.workers:
            if worker.name == worker_name:
                if not span_name:
                    if not worker.spans:
                        raise errors.NotFoundError(f"worker {worker_name!r} has no spans")
                    return worker.spans[-1]
                for span in worker.spans:
                    if span.name == span_name:
                        return span
                raise errors.NotFoundError(
                    f"no span {span_name!r} for worker {worker_name!r} in run {run.name!r}"
                )
        raise errors.NotFoundError(f"no worker {worker_name!r} in run {run.name!r}")

    def _json(self, request: wrappers.Request, body: Any, code: int = 200) -> Any:
        data = body if isinstance(body, bytes) else msgspec.json.encode(body)
        return http_util.Respond(request, data, JSON, code=code)

    # --- routes -----------------------------------------------------------------

    @route
    def _serve_runs(self, request: wrappers.Request) -> Any:
        return self._json(request, {"runs": [run_listing(r) for r in self._runs()]})

    @route
    def _serve_workers(self, request: wrappers.Request) -> Any:
        run = self._find_run(request)
        return self._json(
            request, {"run": run.name, "workers": [worker_listing(w) for w in run.workers]}
        )

    @route
    def _serve_spans(self, request: wrappers.Request) -> Any:
        run = self._find_run(request)
        name = request.args.get("worker")
        for worker in run.workers:
            if worker.name == name:
                listing = worker_listing(worker)
                return self._json(
                    request, {"run": run.name, "worker": worker.name, "spans": listing["spans"]}
                )
        raise errors.NotFoundError(f"no worker {name!r} in run {run.name!r}")

    @route
    def _serve_status(self, request: wrappers.Request) -> Any:
        span = self._find_span(request)
        return self._json(request, self._status_body(request, span))

    def _status_body(self, request: wrappers.Request, span: SpanFile) -> dict[str, Any]:
        status = self.store.status(span.path)
        views: list[str] = []
        if status["state"] == "ready":
            try:
                model = self.store.model(span.path)
                # The trace view (its own routes, not a registered view) shows any trace.
                views = supported_views(model) + (["trace"] if len(model) else [])
            except (NotReady, LoadFailed):
                views = []
        return {
            "run": request.args.get("run"),
            "worker": request.args.get("worker"),
            "span": span.name,
            **status,
            "views": views,
        }

    def _serve_view(self, name: str) -> Any:
        view = VIEWS[name]

        @route
        def serve(request: wrappers.Request) -> Any:
            span = self._find_span(request)
            params = {k: request.args[k] for k in view.params if request.args.get(k)}
            try:
                # Views whose parameters vary per request are cached only in their default
                # form, which is what a page shows first.
                if view.cached or not params:
                    data = self.store.view(
                        span.path, view.cache_name(params), lambda m: view.compute(m, params)
                    )
                else:
                    data = msgspec.json.encode(view.compute(self.store.model(span.path), params))
            except ViewParamError as exc:
                raise errors.InvalidArgumentError(str(exc)) from None
            except NotReady:
                return self._json(request, self._status_body(request, span), code=202)
            except LoadFailed as exc:
                raise TraceUnreadableError(exc.error["message"]) from None
            except Exception as exc:  # noqa: BLE001 - an analysis bug must not kill TensorBoard
                failure = f"{name} of {span.file} failed: {exception_text(exc)}"
                raise AnalysisError(failure) from None
            return self._json(request, data)

        return serve

    @route
    def _serve_distributed(self, request: wrappers.Request) -> Any:
        """Run-level: all ranks of the run as one job (202 with progress while summarizing)."""
        run = self._find_run(request)
        job = self.store.distributed(run, request.args.get("span"))
        if job.state == FAILED:
            raise AnalysisError(job.failure or "distributed view failed")
        if job.state == LOADING:
            return self._json(request, job.progress(), code=202)
        return self._json(request, job.result)

    # --- trace view (tb_plugin/timeline): per-request windows, never cached to disk --

    def _timeline_spans(self, request: wrappers.Request) -> list[tuple[str | None, SpanFile]]:
        """`worker=W` (times as in the file) or `workers=W1,W2` of one run (epoch µs)."""
        names = request.args.get("workers")
        if not names:
            return [(None, self._find_span(request))]
        run = self._find_run(request)
        span_name = request.args.get("span")
        by_name = {w.name: w for w in run.workers}
        out: list[tuple[str | None, SpanFile]] = []
        for name in dict.fromkeys(n.strip() for n in names.split(",") if n.strip()):
            worker = by_name.get(name)
            if worker is None:
                raise errors.NotFoundError(f"no worker {name!r} in run {run.name!r}")
            spans = [s for s in worker.spans if not span_name or s.name == span_name]
            if not spans:
                raise errors.NotFoundError(f"worker {name!r} has no span {span_name!r}")
            out.append((name, spans[-1]))
        return out

    def _serve_timeline(self, name: str) -> Any:
        compute = TIMELINE_ROUTES[name]

        @route
        def serve(request: wrappers.Request) -> Any:
            spans = self._timeline_spans(request)
            for _, span in spans:
                self.store.state_for(span.path)  # start every load before waiting on one
            workers = []
            for worker, span in spans:
                try:
                    workers.append(WorkerTrace(worker, self.store.model(span.path)))
                except NotReady:
                    body = self._status_body(request, span)
                    return self._json(request, {**body, "worker": worker or body["worker"]}, 202)
                except LoadFailed as exc:
                    raise TraceUnreadableError(exc.error["message"]) from None
            try:
                data = msgspec.json.encode(compute(workers, request.args))
            except ViewParamError as exc:
                raise errors.InvalidArgumentError(str(exc)) from None
            except TimelineNotFound as exc:
                raise errors.NotFoundError(str(exc)) from None
            except Exception as exc:  # noqa: BLE001 - an analysis bug must not kill TensorBoard
                raise AnalysisError(f"{name} failed: {exception_text(exc)}") from None
            return self._json(request, data)

        return serve

    @route
    def _serve_download(self, request: wrappers.Request) -> Any:
        """The trace file itself, streamed, as an attachment."""
        span = self._find_span(request)
        if not os.path.isfile(span.path):
            raise errors.NotFoundError(f"{span.file} was removed")
        gz = span.file.endswith(".gz")
        response = send_file(
            span.path,
            request.environ,
            mimetype="application/gzip" if gz else "application/json",
            as_attachment=True,
            # CR, LF and other controls cannot go into a header (werkzeug refuses them).
            download_name=re.sub(r"[\x00-\x1f\x7f]", "_", span.file),
            conditional=True,
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    @route
    def _serve_static(self, request: wrappers.Request) -> Any:
        return respond_static(request, PLUGIN_NAME, self.static_root)
