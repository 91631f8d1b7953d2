"""A trace view route whose structure is not built yet (the flow pairs of `flows`, the
range sums of `range_summary`, ...) answers 202 at once, its `building` naming it, while
the structure is built in the background, once; a later request gets the 200 answer a
route that built it itself gives (`trace_view.building`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import PluginClient
from kinetoscope.ingest.build import build_model
from kinetoscope.trace_view import links, range_summary
from kinetoscope.trace_view.workers import WorkerTrace
from test_timeline import answer, nested_trace
from werkzeug import wrappers

Make = Callable[[Path], PluginClient]
Q = {"run": "job", "worker": "worker0", "span": "1"}


@pytest.fixture
def logdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One trace; nothing of its trace view prepared once it loads (the routes build)."""
    monkeypatch.setenv("KINETOSCOPE_PREPARE_TRACE_VIEW", "0")
    run = tmp_path / "logs" / "job"
    run.mkdir(parents=True)
    nested_trace().write(run / "worker0.100.pt.trace.json")
    return tmp_path / "logs"


class Gate:
    """A build that waits for `open` (at most 30 s) and counts its calls; the first
    `failures` calls raise instead (after the wait). Calls from threads that ran before
    the gate was made are passed through uncounted: background work of earlier tests'
    models (a trace view prepared after its load) may still call the patched builder."""

    def __init__(self, build: Callable[..., Any], failures: int = 0) -> None:
        self.build = build
        self.failures = failures
        self.calls = 0
        self.open = threading.Event()
        main = threading.main_thread()
        # Thread objects, not idents: a thread that ends gives its ident to a later one.
        self.earlier = [t for t in threading.enumerate() if t is not main]

    def __call__(self, *args: Any) -> Any:
        if any(t is threading.current_thread() for t in self.earlier):
            return self.build(*args)
        self.calls += 1
        self.open.wait(30)
        if self.calls <= self.failures:
            raise RuntimeError("a failed build")
        return self.build(*args)


def until_not_building(client: PluginClient, route: str, what: str, **params: Any) -> Any:
    """The first answer of `route` that is not a 202 building something before `what`."""
    deadline = time.monotonic() + 30
    while True:
        response = client.get(route, **Q, **params)
        body = response.get_json()
        if response.status_code != 202 or body.get("building") == what:
            return response
        assert time.monotonic() < deadline, body
        time.sleep(0.01)


def until_ready(client: PluginClient, route: str, **params: Any) -> wrappers.Response:
    deadline = time.monotonic() + 30
    while (response := client.get(route, **Q, **params)).status_code == 202:
        assert time.monotonic() < deadline, response.get_json()
        time.sleep(0.01)
    return response


def direct(logdir: Path, route: str, params: dict[str, str]) -> bytes:
    """The route's JSON computed in place on a model of its own (built on the spot)."""
    model = build_model(str(logdir / "job" / "worker0.100.pt.trace.json"))
    return msgspec.json.encode(answer(route, [WorkerTrace(None, model)], params))


@pytest.mark.parametrize(
    ("route", "module", "builder", "what", "params"),
    [
        ("flows", links, "_build_flow_pairs", "flow pairs", {"t0": "100", "t1": "130"}),
        ("range_summary", range_summary, "build_range_sums", "range sums", {"t0": "25"}),
    ],
)
def test_a_route_answers_202_while_its_structure_builds_then_the_same_200(
    plugin_client: Make,
    logdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    route: str,
    module: Any,
    builder: str,
    what: str,
    params: dict[str, str],
) -> None:
    gate = Gate(getattr(module, builder))
    monkeypatch.setattr(module, builder, gate)
    client = plugin_client(logdir)
    assert client.wait_ready("job", "worker0")["state"] == "ready"
    try:
        first = until_not_building(client, route, what, **params)
        assert first.status_code == 202
        body = first.get_json()
        assert body["building"] == what and body["state"] == "ready"
        assert body["worker"] == "worker0" and body["bytes_done"] == body["bytes_total"]
        again = client.get(route, **Q, **params)  # while it builds: 202 again, at once
        assert again.status_code == 202 and again.get_json()["building"] == what
    finally:
        gate.open.set()
    done = until_ready(client, route, **params)
    assert done.status_code == 200
    assert gate.calls == 1  # one build, in the background
    assert done.get_data() == direct(logdir, route, params)


def test_a_failed_background_build_is_built_by_the_request_that_follows(
    plugin_client: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(links._build_flow_pairs, failures=1)
    gate.open.set()
    monkeypatch.setattr(links, "_build_flow_pairs", gate)
    client = plugin_client(logdir)
    client.wait_ready("job", "worker0")
    done = until_ready(client, "flows")  # never 202 for ever
    assert done.status_code == 200
    assert gate.calls == 2
    assert done.get_data() == direct(logdir, "flows", {})


def test_a_door_that_waits_waits_for_the_build(
    plugin_client: Make, logdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kinetoscope.api.dispatch import Dispatch, Ready
    from kinetoscope.api.endpoints import ENDPOINTS

    gate = Gate(links._build_flow_pairs)
    monkeypatch.setattr(links, "_build_flow_pairs", gate)
    client = plugin_client(logdir)
    client.wait_ready("job", "worker0")
    call = Dispatch(ENDPOINTS["flows"], client.plugin.session, Q, {})
    threading.Timer(0.2, gate.open.set).start()
    result = call.wait(30)
    assert isinstance(result, Ready)
    assert gate.calls == 1
    assert result.body == direct(logdir, "flows", {})
