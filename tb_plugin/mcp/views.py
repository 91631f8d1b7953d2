"""What every tool call reads, and how a call waits: never in a shared worker. A call is
one `api.dispatch.Dispatch` (its names resolved once, its body encoded once) over this
door's session, whose listing is rescanned at most every KINETOSCOPE_RESCAN_SECONDS
(default 10), not per call. The names and the view's computation run in this door's own
threads; a call whose trace (or run job) is still loading waits on the event loop, where
a hang-up or a `notifications/cancelled` ends the wait at once, for at most
KINETOSCOPE_MCP_WAIT_S (default 5) seconds, then answers "still loading" with the load's
progress. A call that asks for progress (a `progressToken`) is told it every second and
waits up to KINETOSCOPE_MCP_PROGRESS_WAIT_S (default 300): its client knows it is alive
(a progress notification resets the SDKs' request timeouts), so a cold run job answers in
one call instead of "call again". The load itself goes on in the store's pools: the next
call (or another client's) takes it up."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import msgspec
import numpy as np

from ..api.dispatch import Dispatch, Pending
from ..api.failures import BAD_ARGUMENT, NOT_FOUND, Failure, failure
from ..api.lower import LoadFailed, NotReady, Run, TraceModel, env_number
from ..api.registry import Scope
from ..api.resolve import Target
from ..api.session import RescannedListing, Session
from .tools import DEFAULT_LIMIT, MAX_LIMIT, Tool, page, summary, tools, view_link

T = TypeVar("T")
CALL_THREADS = 16  # listings and views computed at once; nothing waits for a load in one
POLL_S = 0.05
PROGRESS_EVERY_S = 1.0
# (done, total or None, message): a `notifications/progress` of the call's token
ProgressFn = Callable[[float, "float | None", str], Awaitable[None]]
# What a load's or a job's progress counts, in the order a status may hold them.
_PROGRESS_COUNTS = (("bytes_done", "bytes_total"), ("ranks_done", "ranks_total"),
                    ("files_done", "files_total"))  # fmt: skip


class ToolError(Exception):
    """A call answered as a tool error: `error` is `{message, kind, http_status}` (the
    kind and status the HTTP route answers), `extra` more structured content."""

    def __init__(self, error: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        super().__init__(error["message"])
        self.error = error
        self.extra = extra or {}


class _Told:
    """A waiting call's progress notifications: one a second at most, each only when
    the count moved (the protocol wants each larger than the last)."""

    def __init__(self, progress: ProgressFn | None, now: float) -> None:
        self.progress = progress
        self.at = now
        self.done = -math.inf

    def due(self, now: float) -> bool:
        return self.progress is not None and now - self.at >= PROGRESS_EVERY_S

    async def tell(self, pending: Pending, now: float) -> None:
        self.at = now
        done, total = _counts(pending.status)
        if self.progress is not None and done > self.done:
            self.done = done
            await self.progress(done, total, pending.message)


def _counts(status: Mapping[str, Any]) -> tuple[float, float | None]:
    """(done, total) of a load's or a job's progress; (0, None) when it counts nothing."""
    for done, total in _PROGRESS_COUNTS:
        if isinstance(status.get(done), (int, float)):
            whole = status.get(total)
            return float(status[done]), float(whole) if isinstance(whole, (int, float)) else None
    return 0.0, None


def _refused(kind: str, message: str) -> ToolError:
    return ToolError(Failure(kind, message).body())


class StillLoading(ToolError):
    """The trace (or the run's job) is not ready within the wait: 202 on the routes."""

    def __init__(self, message: str, status: Mapping[str, Any]) -> None:
        error = {"message": message, "kind": "still_loading", "http_status": 202}
        super().__init__(error, {"status": status})


class ViewAnswers:
    """The logdir's listing, one store of models and one of run jobs, for every call."""

    def __init__(self, logdir: str, base_url: str = "", cache: bool = True) -> None:
        self.logdir = logdir
        self.base_url = base_url
        self.session = Session(RescannedListing(logdir), cache)
        self.store = self.session.store
        self.tools = tools()
        self.wait_s = env_number("KINETOSCOPE_MCP_WAIT_S", 5)
        self.progress_wait_s = env_number("KINETOSCOPE_MCP_PROGRESS_WAIT_S", 300)
        self._threads = ThreadPoolExecutor(CALL_THREADS, thread_name_prefix="kinetoscope-mcp")

    def runs(self) -> list[Run]:
        return list(self.session.runs())  # rescanned at most every interval: new runs appear

    async def _thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, fn, *args)

    async def call(
        self, name: str, arguments: dict[str, Any], progress: ProgressFn | None = None
    ) -> tuple[Any, str]:
        """(structured answer, text summary); raises ToolError with a clear message.
        `progress`: the call asked to be told its progress while it waits."""
        tool = self.tools.get(name)
        if tool is None:
            raise _refused(NOT_FOUND, f"no tool named {name!r}")
        limit, cursor = _paging(arguments)
        names = {k: v for k, v in arguments.items() if k in tool.input_schema["properties"]}
        params = {k: _param_text(v) for k, v in names.items() if k not in ("limit", "cursor")}
        call = Dispatch(tool.endpoint, self.session, names, params)
        try:
            body = await self._answer(call, progress)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is a tool error, never a crash
            raise ToolError(failure(name, exc, call.files).body()) from None
        paged, note = page(body, limit, cursor)
        out = await self._thread(self._with_provenance, tool, call.targets, names, paged, note)
        return out, summary(name, body)

    async def _answer(self, call: Dispatch, progress: ProgressFn | None = None) -> Any:
        """The call's JSON, decoded once for paging; while it is pending (a trace or a run
        job loading) the wait is on the event loop (cancellable), at most `wait_s`, or
        `progress_wait_s` telling `progress` every second."""
        started = time.monotonic()
        wait_s = self.wait_s if progress is None else max(self.wait_s, self.progress_wait_s)
        told = _Told(progress, started)
        result = await self._thread(call.answer)
        while isinstance(result, Pending):
            now = time.monotonic()
            if now > started + wait_s or told.due(now):
                result = await self._thread(call.answer)  # its progress as it is now
                if not isinstance(result, Pending):
                    break
                if now > started + wait_s:
                    raise StillLoading(result.message, result.status)
                await told.tell(result, now)
            ready = result.ready()
            await asyncio.sleep(0 if ready and result.event is not None else POLL_S)
            if ready:
                result = await self._thread(call.answer)
        return msgspec.json.decode(result.body)

    def _with_provenance(
        self,
        tool: Tool,
        targets: list[Target],
        names: dict[str, Any],
        body: Any,
        note: dict[str, Any] | None,
    ) -> Any:
        if not isinstance(body, dict):
            return body
        out = dict(body)
        if note is not None:
            out["page"] = note
        known = {k: names.get(k) for k in ("run", "worker", "span") if names.get(k)}
        provenance: dict[str, Any] = {"logdir": self.logdir, **known, "tool": tool.name}
        if tool.endpoint.scope in (Scope.SPAN, Scope.SPANS) and targets:
            sources = [self._source(target) for target in targets]
            provenance.update(sources[0] if len(sources) == 1 else {"sources": sources})
        link = view_link(self.base_url, tool.endpoint, names)
        if link:
            provenance["link"] = link
        out["provenance"] = provenance
        return out

    def _source(self, target: Target) -> dict[str, Any]:
        """The trace file the numbers come from, and the time window its events cover
        (`ts` in µs as the file has them: the `trace` tool's `t0`/`t1` clock); null while
        the file loads or when it cannot be read."""
        try:
            window = self.store.model(target.span.path).derived("_event_window", _event_window)
        except (NotReady, LoadFailed):
            window = None
        return {"file": target.span.file, "worker": target.worker.name, "window_us": window}

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.store.close()


def _event_window(model: TraceModel) -> list[float] | None:
    """[first start, last end] of the trace's events, µs (None for no event)."""
    ev = model.events
    if not len(ev["ts"]):
        return None
    return [float(np.nanmin(ev["ts"])), float(np.nanmax(ev["ts"] + np.nan_to_num(ev["dur"])))]


def _param_text(value: Any) -> str:
    """A JSON argument as the route's query text has it (`true`, not Python's `True`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _paging(arguments: dict[str, Any]) -> tuple[int, int]:
    limit = _whole(arguments.get("limit", DEFAULT_LIMIT))
    cursor = _whole(arguments.get("cursor", 0))
    if limit is None or cursor is None or not 1 <= limit <= MAX_LIMIT or cursor < 0:
        message = f"limit must be an integer 1..{MAX_LIMIT} and cursor an integer >= 0"
        raise _refused(BAD_ARGUMENT, message)
    return limit, cursor


def _whole(value: Any) -> int | None:
    """An integer argument (`50`, `50.0`); None for anything else (`true`, `2.5`, `1e400`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None
