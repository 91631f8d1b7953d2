"""The stdio transport of `kinetoscope mcp`: one JSON-RPC message a line on stdin and
stdout, the SDK's server between. Every request gets an answer: a line the SDK cannot
read as a message (not JSON, a lone surrogate escape such as `"\\ud800"`, `params` an
array) is answered here with a JSON-RPC error, `-32700` (parse error), `-32600`
(invalid request) or `-32602` (invalid params), with the request's `id` where the line
has one (else null); a notification (no `id`) gets none, as JSON-RPC says.

While serving, file descriptor 0 reads the null device and 1 writes to stderr, so a
stray print never lands on the wire; both are restored at the end."""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def refusal(line: str, problem: Exception) -> str | None:
    """The JSON-RPC error line answering `line`, which the SDK refused (`problem`); None
    for a notification or a response, which get no answer."""
    try:
        data = json.loads(line)  # Python's reader takes lone surrogates, so the id is found
    except ValueError:
        return _error(None, PARSE_ERROR, "parse error: the line is not JSON")
    if not isinstance(data, dict):
        return _error(None, INVALID_REQUEST, "invalid request: a message is one JSON object")
    rid = data.get("id")
    known_id = isinstance(rid, (int, str)) and not isinstance(rid, bool)
    if "id" not in data or ("method" not in data and ("result" in data or "error" in data)):
        return None  # a notification, or a response to a request of ours
    if data.get("jsonrpc") != "2.0" or not isinstance(data.get("method"), str) or not known_id:
        return _error(
            rid if known_id else None,
            INVALID_REQUEST,
            'invalid request: needs "jsonrpc": "2.0", a string "method" and a string or '
            'integer "id"',
        )
    return _error(rid, INVALID_PARAMS, f"invalid params: {_what(problem, data)}")


def _what(problem: Exception, data: dict[str, Any]) -> str:
    params = data.get("params")
    if params is not None and not isinstance(params, dict):
        return f"params must be an object, not {type(params).__name__}"
    errors = getattr(problem, "errors", None)
    first = errors(include_input=False)[0] if callable(errors) else {}
    if first.get("type") == "json_invalid":  # Python read it, the SDK's reader did not
        return "a string is not Unicode text (a lone surrogate escape such as \\ud800)"
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first.get('msg', problem)}" if where else str(first.get("msg", problem))


def _error(rid: Any, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


async def serve_stdio(server: Any) -> None:
    """Serve `server` (the SDK's low-level server) until stdin ends."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    wire_in, wire_out, restore = _claim_std()
    to_server, server_reads = anyio.create_memory_object_stream[Any](0)
    server_writes, from_server = anyio.create_memory_object_stream[Any](0)
    out, out_lines = anyio.create_memory_object_stream[str](64)

    async def read_lines(out: Any) -> None:
        async with to_server, out:
            while line := await anyio.to_thread.run_sync(wire_in.readline, abandon_on_cancel=True):
                text = line.decode("utf-8", errors="replace")
                if not text.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                except ValueError as exc:  # pydantic's ValidationError is one
                    if (answer := refusal(text, exc)) is not None:
                        await out.send(answer)
                    continue
                await to_server.send(SessionMessage(message))

    async def server_lines(out: Any) -> None:
        async with out:
            async for sent in from_server:
                await out.send(sent.message.model_dump_json(by_alias=True, exclude_unset=True))

    async def write_lines() -> None:
        async for text in out_lines:
            await anyio.to_thread.run_sync(_write, wire_out, text)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines, out.clone())
            tasks.start_soon(server_lines, out.clone())
            tasks.start_soon(write_lines)
            out.close()
            options = server.create_initialization_options()
            await server.run(server_reads, server_writes, options)
            tasks.cancel_scope.cancel()
    finally:
        restore()


def _write(wire: BinaryIO, text: str) -> None:
    wire.write(text.encode("utf-8", errors="replace") + b"\n")
    wire.flush()


def _claim_std() -> tuple[BinaryIO, BinaryIO, Any]:
    """The wire's own copies of fds 0 and 1; fd 0 then reads the null device, fd 1
    writes to stderr."""
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in_fd, 0)
        os.dup2(wire_out_fd, 1)

    wire_in = os.fdopen(wire_in_fd, "rb", closefd=False)
    wire_out = os.fdopen(wire_out_fd, "wb", closefd=False)
    return wire_in, wire_out, restore
