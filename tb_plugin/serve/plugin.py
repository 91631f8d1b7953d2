"""The TensorBoard plugin: one generic handler over the endpoint registry.

Every route is an entry of `api.endpoints.ENDPOINTS`. The handler hands the query to the
api's dispatcher (`api.dispatch`: it resolves what the query addresses, decodes the
parameters once, loads and answers the endpoint's way) and answers its `Ready` JSON
through `http_util.Respond`, its `Pending` with 202, its file as a download. One
error mapper turns exceptions into `tensorboard.errors` (404 unknown names, 400 bad
arguments, 422 a file that cannot be read, 500 an analysis bug), and one answer says
"still loading" (202 with the endpoint's loading body). Routes are
listed in docs/http_api.md.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import msgspec
from tensorboard import errors
from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers
from werkzeug.utils import send_file

from ..api.dispatch import Failed, Pending, dispatch
from ..api.downloads import Download
from ..api.endpoints import ENDPOINTS
from ..api.failures import ANALYSIS, BAD_ARGUMENT, NOT_FOUND, TOO_LARGE, UNREADABLE
from ..api.registry import Endpoint, Scope
from ..api.session import ListingPending, LogdirUnreadable
from .early_start import EarlyStart, begin_session
from .gzip_answers import GzipMemo, accepts_gzip
from .static_files import dist_root, respond_static

log = logging.getLogger(__name__)
PLUGIN_NAME = "kinetoscope"
# werkzeug types `application` for plain functions; our routes are methods.
route: Any = wrappers.Request.application
JSON = "application/json"


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


class TooLargeError(errors.PublicError):
    """An answer past one of its view's caps: the message names the cap."""

    http_code = 413

    def __init__(self, message: str) -> None:
        super().__init__(message)


class AnalysisError(errors.PublicError):
    http_code = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)


_PUBLIC: dict[str, Any] = {
    BAD_ARGUMENT: errors.InvalidArgumentError,
    NOT_FOUND: errors.NotFoundError,
    TOO_LARGE: TooLargeError,
    UNREADABLE: TraceUnreadableError,
    ANALYSIS: AnalysisError,
}


def public_error(failed: Failed) -> errors.PublicError:
    """The one error mapper: what each failure of a route answers (its kind and message
    from `api/failures`, the same for every door; a logdir that cannot be listed 502)."""
    if isinstance(failed.error, LogdirUnreadable):
        return LogdirUnreadableError(str(failed.error))
    return _PUBLIC[failed.failure.kind](failed.failure.message)


def _logdir(context: base_plugin.TBContext) -> str:
    logdir = getattr(context, "logdir", None)
    if not logdir and getattr(context, "flags", None) is not None:
        logdir = getattr(context.flags, "logdir_spec", "") or getattr(context.flags, "logdir", "")
    return os.path.expanduser(logdir or "")


class KinetoscopePlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext, early: EarlyStart | None = None) -> None:
        self.logdir = _logdir(context)
        # The session TensorBoard's start began (`early_start`), else one begun now. Ranks
        # come from the store: a trace the UI is loading is not parsed again; run-level
        # views (distributed) are the session's run jobs.
        session = early.session_for(self.logdir) if early is not None else None
        self.session = session or begin_session(self.logdir)
        self._active = False
        self.static_root = dist_root()
        self.gzip = GzipMemo()  # the answers' gzip for browsers (`gzip_answers`)

    @property
    def watcher(self) -> Any:
        return self.session.listing.watcher  # type: ignore[attr-defined]

    @property
    def store(self) -> Any:
        return self.session.store

    @store.setter
    def store(self, store: Any) -> None:
        self.session.store = store

    @property
    def run_jobs(self) -> Any:
        return self.session.jobs

    @run_jobs.setter
    def run_jobs(self, jobs: Any) -> None:
        self.session.jobs = jobs

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
                self._active = bool(self.session.runs())
            except LogdirUnreadable as exc:
                log.warning("kinetoscope: %s", exc)
            except ListingPending:
                pass  # not known yet: asked again at TensorBoard's next plugins_listing
        return self._active

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(
            es_module_path="/static/index.js", tab_name="PyTorch Profiler", disable_reload=False
        )

    # --- the generic handler ----------------------------------------------------

    def _handler(self, endpoint: Endpoint) -> Any:
        @route
        def serve(request: wrappers.Request) -> Any:
            if endpoint.scope is Scope.STATIC:
                return respond_static(request, PLUGIN_NAME, self.static_root)
            answer = dispatch(endpoint, self.session, request.args, request.args)
            if isinstance(answer, Failed):
                return self._error(request, public_error(answer))
            if isinstance(answer, Pending):
                return self._json(request, answer.body, code=202)
            if answer.file is not None:
                return _download(request, answer.file)
            return self._json(request, answer.body)

        return serve

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
        # For a browser: compressed here (`gzip_answers`), cheaper than Respond's own.
        if accepts_gzip(request.headers.get("Accept-Encoding")):
            packed = self.gzip.compressed(data)
            return http_util.Respond(request, packed, JSON, code=code, content_encoding="gzip")
        return http_util.Respond(request, data, JSON, code=code)


def _download(request: wrappers.Request, file: Download) -> Any:
    """The trace file itself, streamed, as an attachment (an object in blocks); only a
    file that loaded as a trace (a refused or broken one answers its load error). The
    file sent is the one `storage` opened and checked (inside the logdir at that moment),
    never the path opened again."""
    local = file.local
    response = send_file(
        file.handle,
        request.environ,
        mimetype=file.mimetype,
        as_attachment=True,
        download_name=file.name,
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
