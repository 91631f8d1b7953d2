"""Every endpoint's compute function, named by a string (`Lazy`) so the registry imports
nothing it is not asked for, resolves to a function whose annotations are the endpoint's
declared types (issue 72): its return type is the response type, and a span, trace-view or
pair view takes the request type its query is decoded into. A type checker cannot cross the
strings; this test does."""

from __future__ import annotations

import inspect
import typing

import pytest
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.registry import Answer, Scope
from kinetoscope.store.run_context import RunContext

COMPUTED = [name for name, e in ENDPOINTS.items() if e.compute_ref is not None]
TAKES_REQUEST = (Scope.SPAN, Scope.SPANS, Scope.PAIR)


@pytest.mark.parametrize("name", COMPUTED)
def test_compute_returns_the_response_type_and_takes_the_request_type(name: str) -> None:
    endpoint = ENDPOINTS[name]
    compute = endpoint.compute
    assert compute is not None
    hints = typing.get_type_hints(compute)
    assert hints["return"] is endpoint.response, (name, hints["return"], endpoint.response)
    last = list(inspect.signature(compute).parameters)[-1]
    if endpoint.scope in TAKES_REQUEST:
        assert hints[last] is endpoint.request, (name, hints[last], endpoint.request)
    elif endpoint.answer is Answer.RUN_JOB:  # the query decoded into `context.params`
        assert hints[last] is RunContext, (name, hints[last])


def test_every_endpoint_with_a_compute_is_checked() -> None:
    assert len(COMPUTED) >= 30
