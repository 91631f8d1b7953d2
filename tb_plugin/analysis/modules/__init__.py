"""The Modules view: the nn.Module tree of one span with host and device time per module
(`view.py`), and its endpoint (`endpoint.py`). Its names are imported from their modules
when first read: importing the endpoint does not import the compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION, has_modules
    from .view import ModulesView, modules

__all__ = ["VERSION", "ModulesView", "has_modules", "modules"]
__getattr__ = lazy_exports(
    __name__,
    {"VERSION": "endpoint", "has_modules": "endpoint", "ModulesView": "view", "modules": "view"},
)
