"""The MCP tools: one per JSON route of the registry, its input schema from the route's
scope and request type, its output schema from the route's response type (the TypedDicts
the TypeScript client is generated from, through msgspec's JSON Schema), and its answer the
route's JSON with long lists paged, provenance and a short text summary."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import msgspec

from ..api.endpoints import ENDPOINTS
from ..api.registry import SCOPE_NAMES, Endpoint, Scope

DEFAULT_LIMIT = 50  # rows of each long list in one answer
MAX_LIMIT = 500
NAME_PARAMS: dict[Scope, tuple[str, ...]] = {
    scope: tuple(name for name, _ in names) for scope, (_, names) in SCOPE_NAMES.items()
}
NAME_HELP = {
    "run": "run name (a folder of the logdir, as the `runs` tool lists it)",
    "worker": "worker name (default: the run's first worker)",
    "workers": "comma list of workers shown on one time axis",
    "span": "span name: '1', '2', ... (default: the worker's first span)",
    "target_run": "the compared run",
    "target_worker": "the compared worker (default: its run's first)",
    "target_span": "the compared span (default: its worker's first)",
}
PAGING = {
    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "rows"},
    "cursor": {"type": "integer", "minimum": 0, "description": "first row (next_cursor)"},
}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    endpoint: Endpoint


def tools() -> dict[str, Tool]:
    """Every JSON route of the registry as a tool named after it."""
    return {e.name: _tool(e) for e in ENDPOINTS.values() if e.response is not None}


def _tool(endpoint: Endpoint) -> Tool:
    return Tool(
        endpoint.name,
        _description(endpoint),
        input_schema(endpoint),
        output_schema(endpoint),
        endpoint,
    )


def _description(endpoint: Endpoint) -> str:
    doc = (endpoint.compute.__doc__ or "") if endpoint.compute else ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ")
    what = f"The `{endpoint.name}` view of kinetoscope's HTTP API"
    return f"{what}: {first}" if first else f"{what} (docs/http_api.md)."


def input_schema(endpoint: Endpoint) -> dict[str, Any]:
    """The scope's names (run required but for the whole logdir), the request's own
    parameters with their JSON types, and paging."""
    properties: dict[str, Any] = {
        n: {"type": "string", "description": NAME_HELP[n]} for n in NAME_PARAMS[endpoint.scope]
    }
    request = _schema_object(msgspec.json.schema(endpoint.request))
    properties.update(request.get("properties", {}))
    properties.update(PAGING)
    required = ["run"] if "run" in properties else []
    if endpoint.scope is Scope.PAIR:
        required.append("target_run")
    required += [r for r in request.get("required", []) if r not in required]
    schema = {"type": "object", "properties": properties, "required": required}
    if "$defs" in request:
        schema["$defs"] = request["$defs"]
    return schema


def output_schema(endpoint: Endpoint) -> dict[str, Any]:
    """The response type's schema, plus the `page` and `provenance` this door adds."""
    schema = _schema_object(msgspec.json.schema(endpoint.response))
    schema["properties"] = {**schema.get("properties", {}), **_EXTRA_PROPERTIES}
    return schema


_EXTRA_PROPERTIES = {
    "page": {"type": "object", "description": "lists cut to `limit` rows from `cursor`"},
    "provenance": {"type": "object", "description": "the trace file, window and view link"},
}


def _schema_object(schema: dict[str, Any]) -> dict[str, Any]:
    """msgspec's `{"$ref": "#/$defs/T", "$defs": ...}` as the object T at the top (MCP
    wants an object schema there); references into `$defs` still resolve from the root."""
    ref = schema.get("$ref", "")
    if not ref.startswith("#/$defs/"):
        return dict(schema)
    defs = schema.get("$defs", {})
    top = dict(defs[ref.rsplit("/", 1)[1]])
    top["$defs"] = defs
    return top


# Lists that other lists of the same body index into (the flame graph's `node_frame`
# points into `frames`): kept whole on every page, so each page's indices resolve.
INDEXED_LISTS = frozenset({"frames"})


def page(body: Any, limit: int, cursor: int) -> tuple[Any, dict[str, Any] | None]:
    """`body` with each top-level list longer than `limit` cut to rows [cursor, cursor +
    limit), except the lists others index into (`INDEXED_LISTS`); a list no longer than
    `limit` (a trace's `devices`, its `roofs`) comes whole on every page. Below the top,
    each list longer than `limit` in the rows kept is cut the same way (its total under
    its path, e.g. `snapshots[0].devices[0].ooms`). The paging note, or None when nothing
    was cut: `totals` names every top-level list with its length (cut or whole), and each
    nested list that was cut."""
    if not isinstance(body, dict):
        return body, None
    lists = {k: len(v) for k, v in body.items() if isinstance(v, list)}
    long = {k for k, n in lists.items() if n > limit and k not in INDEXED_LISTS}
    cut = {k: v[cursor : cursor + limit] if k in long else v for k, v in body.items()}
    nested: dict[str, int] = {}
    for k, v in cut.items():
        cut[k] = _cut_nested(v, limit, cursor, k, nested)
    if not long and not nested and cursor == 0:
        return body, None
    longest = max((lists[k] for k in long), default=0)
    longest = max([longest, *nested.values()])
    following = cursor + limit if cursor + limit < longest else None
    note = {
        "cursor": cursor,
        "limit": limit,
        "next_cursor": following,
        "totals": {**lists, **nested},
    }
    return cut, note


def _cut_nested(value: Any, limit: int, cursor: int, path: str, totals: dict[str, int]) -> Any:
    """The lists inside `value` (a top-level value, already cut) longer than `limit`, cut."""
    if isinstance(value, list):
        return [_cut_nested(v, limit, cursor, f"{path}[{i}]", totals) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out = {}
    for k, v in value.items():
        where = f"{path}.{k}"
        if isinstance(v, list) and len(v) > limit and k not in INDEXED_LISTS:
            totals[where] = len(v)
            v = v[cursor : cursor + limit]
        out[k] = _cut_nested(v, limit, cursor, where, totals)
    return out


def view_link(base_url: str, endpoint: Endpoint, names: dict[str, Any]) -> str | None:
    """A link that opens the view in TensorBoard (its hash keys, as the page writes them)."""
    if not base_url or not endpoint.page:
        return None
    keys = {k: names.get(k) for k in ("run", "worker", "span")}
    keys["view"] = endpoint.page
    items = "".join(f"&p.kinetoscope.{k}={quote(str(v), safe='')}" for k, v in keys.items() if v)
    return f"{base_url.rstrip('/')}/#kinetoscope{items}"


# Lists whose key alone would mislead in the summary line: the health view's `warnings`
# are the loader's, not its checks' (a trace of status `errors` has "0 load warnings").
SUMMARY_NOUNS = {"warnings": "load warnings"}


def summary(name: str, body: Any) -> str:
    """A line an agent reads before the structured answer: a `status` first, then the
    lists' lengths and the numbers."""
    if not isinstance(body, dict):
        return f"{name}: {body!r}"[:300]
    parts = [f"status={body['status']}"] if isinstance(body.get("status"), str) else []
    for key, value in body.items():
        if isinstance(value, list):
            parts.append(f"{len(value)} {SUMMARY_NOUNS.get(key, key)}")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            shown = round(value, 3) if isinstance(value, float) and math.isfinite(value) else value
            parts.append(f"{key}={shown}")
        if len(parts) == 8:
            break
    return f"{name}: " + ", ".join(parts) if parts else f"{name}: (empty)"
