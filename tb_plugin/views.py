"""The registry of views: name → pure function of a TraceModel (and request parameters),
its version, and whether a trace supports it. Routes, the CLI report and `status.views`
all read this one table, so a new view is one entry here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .analysis import overview
from .model import TraceModel

Params = Mapping[str, str]


class ViewParamError(ValueError):
    """A request parameter of a view is malformed (answered as HTTP 400)."""


@dataclass(frozen=True)
class View:
    name: str
    compute: Callable[[TraceModel, Params], Any]
    version: str
    supports: Callable[[TraceModel], bool]
    params: tuple[str, ...] = ()  # query parameters the view reads (besides run/worker/span)
    cached: bool = True  # False for views whose parameters vary per request (windows)
    in_report: bool = True  # part of `kinetoscope report` and `status.views`

    def cache_name(self, params: Params) -> str:
        used = [f"{k}={params[k]}" for k in self.params if params.get(k) not in (None, "")]
        suffix = "&".join(used)
        return f"{self.name}-v{self.version}" + (f"@{_digest(suffix)}" if suffix else "")


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _always(model: TraceModel) -> bool:
    return True


VIEWS: dict[str, View] = {
    "overview": View("overview", lambda m, p: overview.overview(m), overview.VERSION, _always),
}


def supported_views(model: TraceModel) -> list[str]:
    return [name for name, view in VIEWS.items() if view.in_report and view.supports(model)]
