"""What an endpoint is, as the doors read it: the declarative parts live below the views
(`analysis/core/endpoint.py`) so each view folder can declare its own endpoints; named
here too for the callers above analysis. The table is `endpoints.ENDPOINTS`."""

from ..analysis.core.endpoint import (
    SCOPE_NAMES,
    SPAN_STATUS,
    Answer,
    Cache,
    Endpoint,
    Lazy,
    Scope,
)

__all__ = ["SCOPE_NAMES", "SPAN_STATUS", "Answer", "Cache", "Endpoint", "Lazy", "Scope"]
