"""What each failure of a route answers, for every door: the HTTP status and a kind
(the TensorBoard routes answer the status with `{"error": {"message"}}`; the MCP tools a
tool error carrying the same kind and status; the CLI exits by it)."""

from __future__ import annotations

from typing import Any

import msgspec

from ..model.errors import TooLarge, ViewParamError
from ..store.errors import LoadFailed, exception_text
from ..trace_view.params import TimelineNotFound
from .resolve import NotFound

BAD_ARGUMENT, NOT_FOUND, TOO_LARGE, UNREADABLE, ANALYSIS = (
    "bad_argument",
    "not_found",
    "too_large",
    "unreadable",
    "analysis",
)
STATUS = {BAD_ARGUMENT: 400, NOT_FOUND: 404, TOO_LARGE: 413, UNREADABLE: 422, ANALYSIS: 500}


class JobFailed(Exception):
    """A run- or logdir-level job failed as a whole (an analysis bug, not one rank's file):
    its message is the job's, said as it is (HTTP 500); `error` what the job raised."""

    def __init__(self, message: str, error: BaseException | None = None) -> None:
        super().__init__(message)
        self.error = error


class Failure(msgspec.Struct, frozen=True):
    kind: str  # one of STATUS's keys
    message: str

    @property
    def http_status(self) -> int:
        return STATUS[self.kind]

    def body(self) -> dict[str, Any]:
        """The MCP door's error: the message, its kind and the route's HTTP status."""
        return {"message": self.message, "kind": self.kind, "http_status": self.http_status}


def failure(route: str, exc: BaseException, files: list[str] | tuple[str, ...] = ()) -> Failure:
    """The one mapping: a bad argument 400, an unknown name 404, an answer past a cap 413,
    a trace that cannot be read 422, anything else an analysis bug (500) named with the
    route and its files."""
    if isinstance(exc, ViewParamError):
        return Failure(BAD_ARGUMENT, str(exc))
    if isinstance(exc, TooLarge):
        return Failure(TOO_LARGE, str(exc))
    if isinstance(exc, (NotFound, TimelineNotFound)):
        return Failure(NOT_FOUND, str(exc))
    if isinstance(exc, LoadFailed):
        return Failure(UNREADABLE, exc.error["message"])
    if isinstance(exc, JobFailed):
        return Failure(ANALYSIS, str(exc))
    where = f" of {', '.join(files)}" if files else ""
    return Failure(ANALYSIS, f"{route}{where} failed: {exception_text(exc)}")
