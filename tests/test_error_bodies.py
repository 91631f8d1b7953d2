"""Every route's 400 and 404 answer the body docs/http_api.md promises,
`{"error": {"message": ...}}` as JSON (issue 27): the registry is walked, each route asked
with a bad parameter, an unknown run, worker and span."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.registry import Endpoint, Scope
from test_contract import QUERIES, worker_trace

NAMED = [e for e in ENDPOINTS.values() if e.scope not in (Scope.STATIC, Scope.LOGDIR)]
SPAN = {"run": "job", "worker": "worker0", "span": "1"}
# Routes answering other than JSON on success still answer JSON errors.
OTHER = {"download": (SPAN, {"worker": "worker0"})}  # bad: no run named


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PluginClient]:
    root = tmp_path_factory.mktemp("errors") / "logs"
    (root / "job").mkdir(parents=True)
    for worker in ("worker0", "worker1"):
        worker_trace().write(root / "job" / f"{worker}.100.pt.trace.json")
    made = PluginClient(root)
    made.wait_ready("job", "worker0")
    made.wait_ready("job", "worker1")
    yield made
    made.close()


def _error_message(response: object, code: int) -> str:
    assert response.status_code == code, response.get_data(as_text=True)  # type: ignore[attr-defined]
    assert response.mimetype == "application/json"  # type: ignore[attr-defined]
    body = response.get_json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and set(body["error"]) == {"message"}
    message = body["error"]["message"]
    assert isinstance(message, str) and message and "<" not in message
    return message


def _unknown(good: dict[str, str], key: str) -> dict[str, str]:
    """`good` with every parameter naming a `key` (run, worker, span) made unknown."""
    out = dict(good)
    for name in list(out):
        if name.endswith(key):
            out[name] = "nope"
    if key == "worker" and "workers" in out:
        out["workers"] = "worker0,nope"
    return out


@pytest.mark.parametrize("endpoint", NAMED, ids=lambda e: e.name)
def test_unknown_names_answer_404_json(client: PluginClient, endpoint: Endpoint) -> None:
    good, _ = {**QUERIES, **OTHER}[endpoint.name]
    assert "nope" in _error_message(client.get(endpoint.name, **_unknown(good, "run")), 404)
    if endpoint.scope is Scope.RUN:
        return
    for key in ("worker", "span"):
        query = _unknown(good, key)
        if query == good:
            continue  # the route names no such thing
        assert "nope" in _error_message(client.get(endpoint.name, **query), 404)


@pytest.mark.parametrize("endpoint", NAMED, ids=lambda e: e.name)
def test_bad_parameters_answer_400_json(client: PluginClient, endpoint: Endpoint) -> None:
    good, bad = {**QUERIES, **OTHER}[endpoint.name]
    if bad:  # a trace view route checks them once its structures are built (202 before)
        _error_message(client.built(endpoint.name, **bad), 400)
    _error_message(client.get(endpoint.name), 400)  # no run named at all


def test_a_broken_trace_answers_422_json(
    tmp_path: Path, plugin_client: Callable[[Path], PluginClient]
) -> None:
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "w.1.pt.trace.json").write_text("{not json")
    client = plugin_client(tmp_path)
    assert client.wait_ready("job", "w")["state"] == "error"
    assert "w.1.pt.trace.json" in _error_message(client.get("overview", run="job", worker="w"), 422)


@pytest.mark.parametrize("route", ["memory", "memory_curve", "memory_events"])
def test_memory_routes_share_one_rule_without_memory_events(
    tmp_path: Path, plugin_client: Callable[[Path], PluginClient], route: str
) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    (tmp_path / "job").mkdir()
    t.write(tmp_path / "job" / "w.1.pt.trace.json")
    client = plugin_client(tmp_path)
    assert client.wait_ready("job", "w")["state"] == "ready"
    message = _error_message(client.get(route, run="job", worker="w"), 400)
    assert "no memory events" in message


@pytest.mark.parametrize("path", ["no_such_route", "overview/extra", "a/../b"])
def test_an_unknown_route_answers_404_json(client: PluginClient, path: str) -> None:
    """Not TensorBoard's text/plain "Not found": the same JSON body as every route's."""
    message = _error_message(client.get(path, run="job"), 404)
    assert "no route named" in message and "overview" in message  # names the known ones
