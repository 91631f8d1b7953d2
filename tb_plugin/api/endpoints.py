"""The registry of views: name → pure function of a TraceModel (and request parameters),
its version, and whether a trace supports it. Routes, the CLI report and `status.views`
all read this one table, so a new view is one entry here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..analysis import kernels as kernels_analysis
from ..analysis import operators as operators_analysis
from ..analysis import overview
from ..analysis.memory import view as memory_analysis
from ..analysis.taxonomy import taxonomy_version
from ..store.model import TraceModel
from .requests import Params, ViewParamError

__all__ = ["VIEWS", "View", "ViewParamError", "Params", "supported_views"]


@dataclass(frozen=True)
class View:
    name: str
    compute: Callable[[TraceModel, Params], Any]
    version: str
    supports: Callable[[TraceModel], bool]
    params: tuple[str, ...] = ()  # query parameters the view reads (besides run/worker/span)
    cached: bool = True  # False: only the default (no parameters) form is cached
    in_report: bool = True  # part of `kinetoscope report` and `status.views`

    def cache_name(self, params: Params) -> str:
        used = [f"{k}={params[k]}" for k in self.params if params.get(k) not in (None, "")]
        suffix = "&".join(used)
        # The kernel taxonomy's version keys every view: all of them read its classes.
        version = f"{self.version}t{taxonomy_version()}"
        return f"{self.name}-v{version}" + (f"@{_digest(suffix)}" if suffix else "")


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _always(model: TraceModel) -> bool:
    return True


VIEWS: dict[str, View] = {
    "overview": View("overview", lambda m, p: overview.overview(m), overview.VERSION, _always),
}


_MEMORY_PARAMS = ("device", "start_us", "end_us")
VIEWS.update(
    {
        "memory": View(
            "memory",
            memory_analysis.memory,
            memory_analysis.VERSION,
            memory_analysis.has_memory,
            params=_MEMORY_PARAMS,
            cached=False,  # ranges vary per request; the prepared events stay on the model
        ),
        "memory_curve": View(
            "memory_curve",
            memory_analysis.memory_curve,
            memory_analysis.VERSION,
            memory_analysis.has_memory,
            params=_MEMORY_PARAMS + ("width",),
            cached=False,
            in_report=False,
        ),
        "memory_events": View(
            "memory_events",
            memory_analysis.memory_events,
            memory_analysis.VERSION,
            memory_analysis.has_memory,
            params=_MEMORY_PARAMS + ("sort", "offset", "limit"),
            cached=False,
            in_report=False,
        ),
    }
)


VIEWS.update(
    {
        "operators": View(
            "operators",
            operators_analysis.operators_view,
            operators_analysis.VERSION,
            _always,
            params=("group_by",),
        ),
        "callstacks": View(
            "callstacks",
            operators_analysis.callstacks_view,
            operators_analysis.VERSION,
            _always,
            params=("name", "input_shape"),
            in_report=False,  # needs an operator name
        ),
        "kernels": View(
            "kernels",
            kernels_analysis.kernels_view,
            kernels_analysis.VERSION,
            kernels_analysis.supports,
            params=("group_by", "device", "stream"),
        ),
    }
)


def supported_views(model: TraceModel) -> list[str]:
    return [name for name, view in VIEWS.items() if view.in_report and view.supports(model)]
