"""The Operators view and its call stacks: host ops grouped by name or input shape, with
their device time and roofline numbers (`view.py`), and their endpoints (`endpoint.py`)."""

from .view import (
    VERSION,
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
