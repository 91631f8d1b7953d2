"""Plain-text rendering of views for `kinetoscope report --format text`.

Lines fit the terminal: `$COLUMNS` wide, 100 when unset (a pipe or a file), so tables
shrink their text columns and long sentences wrap. Times are relative to the trace start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api.endpoints import ENDPOINTS
from ..api.lower import TraceModel, report_width, wrap


def renderer_of(name: str) -> Callable[[Any, int], str] | None:
    """The text of view `name`, as its folder gives it (the endpoint's `text`: it takes the
    route's response type, `render_text` hands it the decoded JSON); None: the view has
    none."""
    endpoint = ENDPOINTS.get(name)
    return endpoint.text if endpoint is not None else None


def render_text(
    run: str,
    worker: str,
    span: str,
    model: TraceModel,
    views: dict[str, Any],
    width: int | None = None,
) -> str:
    """Every view that has a renderer, `width` columns wide (default: report_width());
    `views`: each route's decoded JSON, which its renderer takes as the route's type."""

    width = width or report_width()
    head = f"== run {run} / worker {worker} / span {span} ({len(model)} events)"
    if model.warnings:  # what the load kept out or read leniently (an empty event...)
        said = "   partial trace: " if model.partial else "   read with warnings: "
        head += "\n" + wrap("; ".join(model.warnings), width, said)
    blocks = [head]
    for name, view in views.items():
        render = renderer_of(name)
        if isinstance(view, dict) and set(view) == {"error"}:  # the route's 413, in its place
            blocks.append(wrap(view["error"]["message"], width, f"{name}: "))
        elif render is not None:
            blocks.append(render(view, width))
    return "\n\n".join(blocks) + "\n"
