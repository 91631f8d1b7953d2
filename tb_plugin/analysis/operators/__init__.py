"""The Operators view and its call stacks: host ops grouped by name or input shape, with
their device time and roofline numbers (`view.py`), and their endpoints (`endpoint.py`).
Its names are imported from their modules when first read: importing the endpoint does
not import the compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION
    from .view import (
        CallStacksView,
        OperatorRow,
        OperatorsView,
        callstacks,
        callstacks_view,
        group_by_param,
        operators,
        operators_view,
        shape_codes,
    )

__all__ = [
    "VERSION",
    "CallStacksView",
    "OperatorRow",
    "OperatorsView",
    "callstacks",
    "callstacks_view",
    "group_by_param",
    "operators",
    "operators_view",
    "shape_codes",
]
__getattr__ = lazy_exports(
    __name__, {name: "endpoint" if name == "VERSION" else "view" for name in __all__}
)
