"""`kinetoscope mcp LOGDIR`: kinetoscope's views for AI agents over the Model Context
Protocol (stdio, or streamable HTTP on 127.0.0.1 with `--http PORT`). Read-only: each tool
is a route of the registry, its names found by `api/resolve` in the logdir's listing (the
same files, path checks and errors as the routes), its numbers the route's own."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from ..api.version import VersionAction, package_version
from .stdio import serve_stdio
from .views import ProgressFn, ToolError, ViewAnswers

INSTRUCTIONS = (
    "Answers about PyTorch profiler traces in one logdir. Start with `runs` (runs, workers, "
    "spans), then a view: `overview` (step time and where it goes), `operators`, `kernels`, "
    "`memory`, `gpu_idle`, `distributed` (a run of several ranks), `diff` (two traces). "
    "Long lists come `limit` rows at a time: pass `cursor` = `page.next_cursor` for more."
)


class MissingExtra(RuntimeError):
    """The `mcp` SDK is not installed."""


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
            body, text = await views.call(params.name, arguments, _progress_of(ctx))
        except ToolError as exc:  # structured: the route's error kind and HTTP status
            error = types.TextContent(type="text", text=str(exc))
            said = {"error": exc.error, **exc.extra}
            return types.CallToolResult(content=[error], structured_content=said, is_error=True)
        content: list[Any] = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, structured_content=body)

    return Server(
        "kinetoscope",
        version=package_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _progress_of(ctx: Any) -> ProgressFn | None:
    """How to tell the call's client its progress, when it asked (a `progressToken`)."""
    token = (ctx.meta or {}).get("progress_token")
    if token is None:
        return None

    async def tell(done: float, total: float | None, message: str) -> None:
        await ctx.session.send_progress_notification(
            token, done, total, message, related_request_id=ctx.request_id
        )

    return tell


def client_config(logdir: str) -> dict[str, Any]:
    """What an MCP client (Claude Desktop, VS Code, Cursor) needs to start this server: this
    very interpreter (a clone's `.venv/bin/python`, which no client finds on its PATH)
    running the package, on the logdir's absolute path."""
    where = logdir if "://" in logdir else os.path.abspath(logdir)
    command = {"command": sys.executable, "args": ["-m", "kinetoscope", "mcp", where]}
    return {"mcpServers": {"kinetoscope": command}}


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
    parser.add_argument(
        "--client-config",
        action="store_true",
        help="print an MCP client's configuration that starts this server, and exit",
    )
    parser.add_argument("--version", action=VersionAction)
    args = parser.parse_args(argv)
    if args.client_config:
        print(json.dumps(client_config(args.logdir), indent=2))
        return 0
    views = ViewAnswers(args.logdir, args.base_url, cache=not args.no_cache)
    try:
        server = build_server(views)
        if args.http:
            _serve_http(server, args.http)
        else:
            asyncio.run(serve_stdio(server))
    except MissingExtra as exc:
        print(f"kinetoscope: {exc}", file=sys.stderr)
        return 2
    finally:
        views.close()
    return 0
