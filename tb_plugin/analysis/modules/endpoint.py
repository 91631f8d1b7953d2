"""The Modules view's endpoint: listed only for traces with nn.Module calls, as Kernels and
Memory are for theirs; the route itself says why there is no tree (`available: false`,
`reason`). What the registry reads is named here; the compute is imported when first
asked."""

from __future__ import annotations

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.common import name_flags
from ..core.endpoint import Cache, Endpoint, Lazy, span_view
from ..core.requests import NoParams
from ..core.rules import is_module_name

ORDER = 50  # the folder's place in the page order (`api/view_folders.py`)

VERSION = "2"  # bump when the view's output changes (read here without the view)


def has_modules(model: TraceModel) -> bool:
    """The trace has `nn.Module` calls (cheap: a check over the distinct names)."""
    return bool(name_flags(model, is_module_name)[model.complete_names(Kind.PYTHON)].any())


ENDPOINTS: list[Endpoint] = [
    span_view(
        "modules",
        Lazy("kinetoscope.analysis.modules.view", "ModulesView"),
        Lazy("kinetoscope.analysis.modules.view", "modules_view"),
        NoParams,
        VERSION,
        Cache.ALL,
        page="modules",
        supports=has_modules,
        text=Lazy("kinetoscope.analysis.modules.text", "render_modules"),
    ),
]
