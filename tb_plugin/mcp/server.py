"""`kinetoscope mcp LOGDIR`: kinetoscope's views for AI agents over the Model Context
Protocol (stdio, or streamable HTTP on 127.0.0.1 with `--http PORT`). Read-only: each tool
is a route of the registry, its names found by `api/resolve` in the logdir's listing (the
same files, path checks and errors as the routes), its numbers the route's own."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import numpy as np

from ..api.answers import answer
from ..api.registry import Scope
from ..api.resolve import NotFound, find_run, resolve
from ..ingest.discovery import Run, target_runs
from ..model.errors import ViewParamError
from ..model.trace_model import TraceModel
from ..store.cache import DiskCache, default_cache_dir
from ..store.trace_store import LoadFailed, TraceStore
from .tools import DEFAULT_LIMIT, MAX_LIMIT, Tool, page, summary, tools, view_link

INSTRUCTIONS = (
    "Answers about PyTorch profiler traces in one logdir. Start with `runs` (runs, workers, "
    "spans), then a view: `overview` (step time and where it goes), `operators`, `kernels`, "
    "`memory`, `gpu_idle`, `distributed` (a run of several ranks), `diff` (two traces). "
    "Long lists come `limit` rows at a time: pass `cursor` = `page.next_cursor` for more."
)


class MissingExtra(RuntimeError):
    """The `mcp` SDK is not installed."""


class ViewAnswers:
    """What every tool call reads: the logdir's listing and one store of models."""

    def __init__(self, logdir: str, base_url: str = "", cache: bool = True) -> None:
        self.logdir = logdir
        self.base_url = base_url
        self.store = TraceStore(DiskCache(default_cache_dir()) if cache else None)
        self.tools = tools()

    def runs(self) -> list[Run]:
        return list(target_runs(self.logdir))  # rescanned per call: new runs appear

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str]:
        """(structured answer, text summary); raises ToolError with a clear message."""
        tool = self.tools.get(name)
        if tool is None:
            raise ToolError(f"no tool named {name!r}")
        limit, cursor = _paging(arguments)
        names = {k: v for k, v in arguments.items() if k in tool.input_schema["properties"]}
        params = {k: str(v) for k, v in names.items() if k not in ("limit", "cursor")}
        runs = self.runs()  # one listing per call, for the answer and its provenance
        try:
            body = answer(tool.endpoint, self.store, runs, names, params)
        except (NotFound, ViewParamError) as exc:
            raise ToolError(str(exc)) from None
        except LoadFailed as exc:
            raise ToolError(exc.error["message"]) from None
        paged, note = page(body, limit, cursor)
        return self._with_provenance(tool, runs, names, paged, note), summary(name, body)

    def _with_provenance(
        self,
        tool: Tool,
        runs: list[Run],
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
        if tool.endpoint.scope in (Scope.SPAN, Scope.SPANS):
            provenance.update(self._source(runs, names))
        link = view_link(self.base_url, tool.endpoint, names)
        if link:
            provenance["link"] = link
        out["provenance"] = provenance
        return out

    def _source(self, runs: list[Run], names: dict[str, Any]) -> dict[str, Any]:
        """The trace file the numbers come from, and the time window its events cover
        (`ts` in µs as the file has them: the `trace` tool's `t0`/`t1` clock)."""
        target = resolve(find_run(runs, names.get("run")), names.get("worker"), names.get("span"))
        window = self.store.wait(target.span.path).derived("_event_window", _event_window)
        return {"file": target.span.file, "worker": target.worker.name, "window_us": window}

    def close(self) -> None:
        self.store.close()


def _event_window(model: TraceModel) -> list[float] | None:
    """[first start, last end] of the trace's events, µs (None for no event)."""
    ev = model.events
    if not len(ev["ts"]):
        return None
    return [float(np.nanmin(ev["ts"])), float(np.nanmax(ev["ts"] + np.nan_to_num(ev["dur"])))]


class ToolError(Exception):
    """A bad argument or a trace that cannot be read: answered as a tool error."""


def _paging(arguments: dict[str, Any]) -> tuple[int, int]:
    try:
        limit = int(arguments.get("limit", DEFAULT_LIMIT))
        cursor = int(arguments.get("cursor", 0))
    except (TypeError, ValueError):
        raise ToolError("limit and cursor must be integers") from None
    if not 1 <= limit <= MAX_LIMIT or cursor < 0:
        raise ToolError(f"limit must be 1..{MAX_LIMIT} and cursor >= 0")
    return limit, cursor


def build_server(views: ViewAnswers) -> Any:
    """The SDK's low-level server with our tools list and call handlers."""
    try:
        import mcp_types as types
        from mcp.server.lowlevel import Server
    except ImportError as exc:
        raise MissingExtra(
            f"kinetoscope mcp needs the MCP SDK: pip install 'kinetoscope[mcp]' ({exc})"
        ) from None

    async def list_tools(ctx: Any, params: Any) -> Any:
        listed = [
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=t.input_schema,
                output_schema=t.output_schema,
                annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            )
            for t in views.tools.values()
        ]
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: Any) -> Any:
        arguments = dict(params.arguments or {})
        try:
            body, text = await asyncio.to_thread(views.call, params.name, arguments)
        except ToolError as exc:
            error = types.TextContent(type="text", text=str(exc))
            return types.CallToolResult(content=[error], is_error=True)
        content: list[Any] = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, structured_content=body)

    return Server(
        "kinetoscope",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _serve_http(server: Any, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kinetoscope mcp",
        description="Serve the views of LOGDIR as MCP tools for AI agents (read-only).",
    )
    parser.add_argument("logdir", help="a logdir (folders of trace files), or a URL")
    parser.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1")
    parser.add_argument("--base-url", default="", help="TensorBoard's URL, for links to views")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    args = parser.parse_args(argv)
    views = ViewAnswers(args.logdir, args.base_url, cache=not args.no_cache)
    try:
        server = build_server(views)
        if args.http:
            _serve_http(server, args.http)
        else:
            asyncio.run(_serve_stdio(server))
    except MissingExtra as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return 2
    finally:
        views.close()
    return 0
