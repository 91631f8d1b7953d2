"""The registry of views: name → pure function of a TraceModel, its version, and whether a
trace supports it. Routes, the CLI report and `status.views` all read this one table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .analysis import overview
from .model import TraceModel


@dataclass(frozen=True)
class View:
    name: str
    compute: Callable[[TraceModel], Any]
    version: str
    supports: Callable[[TraceModel], bool]

    @property
    def cache_name(self) -> str:
        return f"{self.name}-v{self.version}"


def _always(model: TraceModel) -> bool:
    return True


VIEWS: dict[str, View] = {
    "overview": View("overview", overview.overview, overview.VERSION, _always),
}


def supported_views(model: TraceModel) -> list[str]:
    return [name for name, view in VIEWS.items() if view.supports(model)]
