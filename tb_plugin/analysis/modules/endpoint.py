"""The Modules view's endpoint: listed only for traces with nn.Module calls, as Kernels and
Memory are for theirs; the route itself says why there is no tree (`available: false`,
`reason`)."""

from __future__ import annotations

from ...model.trace_model import TraceModel
from ..core.endpoint import Cache, Endpoint, span_view
from ..core.requests import NoParams
from .view import VERSION, ModulesView, has_modules, modules

ORDER = 50  # the folder's place in the page order (`api/view_folders.py`)


def _modules(model: TraceModel, params: NoParams) -> ModulesView:
    return modules(model)


ENDPOINTS: list[Endpoint] = [
    span_view(
        "modules",
        ModulesView,
        _modules,
        NoParams,
        VERSION,
        Cache.ALL,
        page="modules",
        supports=has_modules,
    ),
]
