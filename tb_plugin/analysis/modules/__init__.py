"""The Modules view: the nn.Module tree of one span with host and device time per module
(`view.py`), and its endpoint (`endpoint.py`)."""

from .view import VERSION, ModulesView, has_modules, modules

__all__ = ["VERSION", "ModulesView", "has_modules", "modules"]
