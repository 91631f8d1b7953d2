"""`api/view_types` holds every JSON route's response type under its own name: the doors
(the CLI's renderers) import their types from there only."""

from __future__ import annotations

from kinetoscope.api import view_types
from kinetoscope.api.endpoints import ENDPOINTS


def test_every_route_response_type_is_re_exported() -> None:
    missing = [
        f"{name}: {endpoint.response.__module__}.{endpoint.response.__qualname__}"
        for name, endpoint in ENDPOINTS.items()
        if endpoint.response is not None
        and getattr(view_types, endpoint.response.__name__, None) is not endpoint.response
    ]
    assert missing == []
