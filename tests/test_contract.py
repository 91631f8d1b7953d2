"""The wire contract is one thing: the endpoint registry's Python types. The TypeScript
types are generated from them (and must be fresh), every JSON example of
docs/http_api.md decodes as its route's type, the docs name exactly the registry's
routes, and every endpoint answers its type (200), 400 on a bad parameter and 202 while
its data loads, through TensorBoard's own WSGI app."""

from __future__ import annotations

import re
import threading
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from gen_typescript import OUTPUT, contract_components, generate, ts_name
from kinetoscope.api import contract
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.registry import Answer, Endpoint, Scope
from kinetoscope.api.requests import decode_request
from kinetoscope.model.errors import ViewParamError, bounded
from kinetoscope.store import trace_store as loader
from kinetoscope.store.run_jobs import RunJobs
from kinetoscope.trace_view import params as trace_params
from snapshot_builders import known_snapshot
from test_distributed import GatedExecutor

DOC = Path(__file__).resolve().parents[1] / "docs" / "http_api.md"
COMPILE_LOGS = Path(__file__).parent / "data" / "compile_logs"
JSON_ENDPOINTS = [e for e in ENDPOINTS.values() if e.response is not None]
SPAN = {"run": "job", "worker": "worker0", "span": "1"}
PAIR = {**SPAN, "target_run": "job", "target_worker": "worker1"}  # Scope.PAIR: base, target

# Per endpoint: the query of a good request and of a bad one (400).
QUERIES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "runs": ({}, {}),  # nothing to get wrong
    "workers": ({"run": "job"}, {}),
    # No run named: 400 (a missing worker or span is the first one, as in the CLI).
    "spans": ({"run": "job", "worker": "worker0"}, {"worker": "worker0"}),
    "status": (SPAN, {"worker": "worker0"}),
    "distributed": ({"run": "job"}, {}),
    "memory_snapshot": ({"run": "job"}, {}),
    "compile": ({"run": "job"}, {}),
    "overview": (SPAN, {"worker": "worker0"}),
    "memory": (SPAN, {**SPAN, "start_us": "soon"}),
    "memory_curve": ({**SPAN, "width": "50"}, {**SPAN, "width": "wide"}),
    "memory_events": ({**SPAN, "sort": "duration"}, {**SPAN, "sort": "colour"}),
    "operators": ({**SPAN, "group_by": "shape"}, {**SPAN, "group_by": "stack"}),
    "callstacks": ({**SPAN, "name": "aten::mm"}, SPAN),
    "kernels": ({**SPAN, "group_by": "op"}, {**SPAN, "device": "gpu0"}),
    "modules": (SPAN, {"worker": "worker0"}),
    "serving": (SPAN, {"worker": "worker0"}),
    "flamegraph": ({**SPAN, "metric": "gpu"}, {**SPAN, "metric": "wall"}),
    "gpu_idle": (SPAN, {"worker": "worker0"}),
    "health": (SPAN, {"worker": "worker0"}),
    "tracks": ({"run": "job", "workers": "worker0,worker1"}, {"workers": "worker0"}),
    "trace": ({**SPAN, "width": "80"}, {**SPAN, "t0": "early"}),
    "event": ({**SPAN, "row": "1"}, {**SPAN, "row": "first"}),
    "flows": (SPAN, {**SPAN, "limit": "many"}),
    "search": ({**SPAN, "q": "mm"}, SPAN),
    "range_summary": ({**SPAN, "t0": "0", "t1": "150"}, {**SPAN, "t0": "9", "t1": "1"}),
    "source_paths": (SPAN, {"worker": "worker0"}),
    "diff": ({**PAIR, "group_by": "shape"}, {**PAIR, "group_by": "size"}),
    "trend": ({"window": "3"}, {"window": "many"}),
    "critical_path": ({**SPAN, "step": "2"}, {**SPAN, "step": "99"}),
    "whatif": ({**SPAN, "kernel": "k", "factor": "0.5"}, {**SPAN, "kernel": "k", "factor": "x"}),
    "top_gains": (SPAN, {**SPAN, "factor": "half"}),
    "run_critical_path": ({"run": "job"}, {}),
    "run_whatif": ({"run": "job", "op": "aten::mm", "factor": "2"}, {"run": "job", "factor": "x"}),
    "run_top_gains": ({"run": "job"}, {"run": "job", "factor": "half"}),
}


def worker_trace() -> TraceBuilder:
    """Steps, an op launching a kernel, and memory events: every view has data."""
    t = TraceBuilder()
    for i in range(2):
        t.step(i + 1, i * 100, 100)
        op = t.op("aten::mm", i * 100 + 10, 50)
        t.launch(i * 100 + 20, 5, op, gpu_ts=i * 100 + 30, gpu_dur=40)
        t.memory(i * 100 + 12, 1024, 4096 + i, total_allocated=1024 * (i + 1), total_reserved=4096)
    return t


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs" / "job"
    root.mkdir(parents=True)
    for worker in ("worker0", "worker1"):
        worker_trace().write(root / f"{worker}.100.pt.trace.json")
    known_snapshot().write(root / "snapshot.pickle")
    (root / "torch_trace").mkdir()
    for log in (COMPILE_LOGS / "graph_break" / "torch_trace").glob("*.log.gz"):
        (root / "torch_trace" / log.name).write_bytes(log.read_bytes())
    return root.parent


@pytest.fixture
def client(logdir: Path) -> Iterator[PluginClient]:
    made = PluginClient(logdir)
    yield made
    made.close()


def _ready(client: PluginClient, endpoint: Endpoint, query: dict[str, str]) -> Any:
    """The endpoint's 200 answer, polling while it answers 202."""
    for _ in range(3000):
        response = client.get(endpoint.name, **query)
        if response.status_code != 202:
            break
        threading.Event().wait(0.01)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response


# --- generated TypeScript ---------------------------------------------------------------


def test_generated_typescript_is_fresh() -> None:
    assert OUTPUT.read_text(encoding="utf-8") == generate(), (
        "frontend/src/api/generated.ts is stale: run python tests/gen_typescript.py"
    )


def test_every_endpoint_is_in_the_typescript_map() -> None:
    text = OUTPUT.read_text(encoding="utf-8")
    for endpoint in JSON_ENDPOINTS:
        assert f"\n  {endpoint.name}: {{ params:" in text


def _ts_fields(text: str, name: str) -> dict[str, bool]:
    """An interface's fields in generated.ts, its bases' included: name -> optional."""
    alias = re.search(rf"^export type {name} = (\w+(?: & \w+)*);$", text, re.MULTILINE)
    if alias:
        bases, body = alias.group(1).split(" & "), ""
    else:
        found = re.search(
            rf"^export interface {name}(?: extends ([\w, ]+))? {{\n(.*?)^}}", text, re.M | re.S
        )
        assert found, f"no interface {name}"
        bases, body = (found.group(1) or "").split(", "), found.group(2)
    fields = {f: bool(opt) for f, opt in re.findall(r"^  (\w+)(\??): ", body, re.MULTILINE)}
    for base in filter(None, bases):
        inherited = _ts_fields(text, base)
        assert not inherited.keys() & fields.keys(), f"{name} repeats a field of {base}"
        fields.update(inherited)
    return fields


def test_interfaces_with_their_bases_hold_the_schema_fields() -> None:
    """An interface that extends others states only its own fields: with its bases' it has
    exactly the fields (and optional ones) of the flattened JSON Schema."""
    text = OUTPUT.read_text(encoding="utf-8")
    extended = 0
    for schema_name, schema in contract_components().items():
        props = schema.get("properties")
        if not props:
            continue
        name = ts_name(schema_name)
        required = set(schema.get("required", []))
        assert _ts_fields(text, name) == {f: f not in required for f in props}, name
        extended += f"export interface {name} extends " in text
    assert extended >= 5  # e.g. OperatorsOperatorRow and StackRow share a base


def test_the_registry_says_how_each_endpoint_is_answered() -> None:
    """The handler dispatches on `Endpoint.answer`, never on a name: a route that is not
    JSON answers a file, and one answered by a compute function must have one."""
    for endpoint in ENDPOINTS.values():
        assert (endpoint.response is None) == (endpoint.answer is Answer.FILE), endpoint.name
    with pytest.raises(TypeError, match="compute function"):
        Endpoint("no_compute", Scope.SPAN, contract.NoParams)


# --- docs ----------------------------------------------------------------------------------


def doc_sections() -> dict[str, str]:
    parts = re.split(r"^### ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    return {part.split("`")[1]: part for part in parts}


def test_docs_name_exactly_the_registry_routes() -> None:
    documented = set(doc_sections())
    assert set(ENDPOINTS) - documented == set(), "endpoints without a docs section"
    assert documented - set(ENDPOINTS) == set(), "docs sections of routes that do not exist"


@pytest.mark.parametrize("endpoint", JSON_ENDPOINTS, ids=lambda e: e.name)
def test_docs_examples_decode_as_the_response_type(endpoint: Endpoint) -> None:
    examples = re.findall(r"```json\n(.*?)```", doc_sections()[endpoint.name], flags=re.DOTALL)
    assert examples, f"no JSON example for {endpoint.name}"
    for example in examples:
        loading = '"state": "loading"' in example and endpoint.loading is not None
        kind = endpoint.loading if loading else endpoint.response
        value = msgspec.json.decode(example.encode(), type=kind)  # strict: types, required keys
        extra = set(value) - set(kind.__annotations__)
        assert not extra, f"{endpoint.name}: the example has fields the type lacks: {extra}"


# --- every endpoint through TensorBoard's app ------------------------------------------------


@pytest.mark.parametrize("endpoint", JSON_ENDPOINTS, ids=lambda e: e.name)
def test_answer_decodes_as_the_response_type(client: PluginClient, endpoint: Endpoint) -> None:
    good, _ = QUERIES[endpoint.name]
    response = _ready(client, endpoint, good)
    assert response.mimetype == "application/json"
    msgspec.json.decode(response.get_data(), type=endpoint.response)  # types, required keys
    keys = set(msgspec.json.decode(response.get_data()))
    assert keys <= set(endpoint.response.__annotations__), "fields the type does not declare"


BAD = [e for e in ENDPOINTS.values() if QUERIES.get(e.name, ({}, {}))[1] or e.scope is Scope.RUN]


@pytest.mark.parametrize("endpoint", BAD, ids=lambda e: e.name)
def test_bad_parameter_answers_400(client: PluginClient, endpoint: Endpoint) -> None:
    _, bad = QUERIES[endpoint.name]
    if endpoint.scope in (Scope.SPAN, Scope.SPANS):
        client.wait_ready("job", "worker0")  # semantic checks run on the loaded trace
    response = client.built(endpoint.name, **bad)
    assert response.status_code == 400, response.get_data(as_text=True)


def _sample_text(hint: Any) -> tuple[str, Any]:
    """A query text for a parameter of type `hint`, and the value it decodes to."""
    if hint is int:
        return " 7", 7
    if hint is float:
        return "2.5e3", 2500.0
    if typing.get_origin(hint) is Literal:
        choice = typing.get_args(hint)[-1]
        return str(choice), choice
    return "aten::mm", "aten::mm"


@pytest.mark.parametrize("endpoint", JSON_ENDPOINTS, ids=lambda e: e.name)
def test_request_decodes_once_to_its_type(endpoint: Endpoint) -> None:
    """What compute functions get: each declared parameter parsed by its type, empty ones
    absent, undeclared ones dropped; the result is a valid instance of the request type."""
    hints = typing.get_type_hints(endpoint.request)
    samples = {key: _sample_text(hint) for key, hint in hints.items()}
    query = {key: text for key, (text, _) in samples.items()}
    decoded = endpoint.decode({**query, "run": "job", "unknown": "1"})
    assert decoded == {key: value for key, (_, value) in samples.items()}
    assert msgspec.convert(decoded, type=endpoint.request) == decoded  # strict: the types
    assert endpoint.decode({key: "" for key in hints}) == {}


@pytest.mark.parametrize(
    ("request_type", "query", "message"),
    [
        (trace_params.TraceParams, {"width": "1.5"}, "width must be an integer, not '1.5'"),
        (trace_params.TraceParams, {"t0": "soon"}, "t0 must be a number, not 'soon'"),
        (trace_params.TraceParams, {"t1": "inf"}, "t1 must be finite, not 'inf'"),
        (
            contract.KernelsParams,
            {"group_by": "stream"},
            "group_by must be one of name, op, not 'stream'",
        ),
    ],
)
def test_bad_parameter_words(request_type: Any, query: dict[str, str], message: str) -> None:
    with pytest.raises(ViewParamError) as raised:
        decode_request(request_type, query)
    assert str(raised.value) == message


def test_ranges_are_checked_on_the_decoded_value() -> None:
    assert bounded(None, "limit", 5, 1, 10) == 5
    assert bounded(10, "limit", 5, 1, 10) == 10
    with pytest.raises(ViewParamError, match="limit must be between 1 and 10, not 0"):
        bounded(0, "limit", 5, 1, 10)


LOADING = [e for e in JSON_ENDPOINTS if e.loading is not None]


@pytest.mark.parametrize("endpoint", LOADING, ids=lambda e: e.name)
def test_answers_202_while_loading(
    logdir: Path, endpoint: Endpoint, held_loads: threading.Event
) -> None:
    client = PluginClient(logdir)
    gated = GatedExecutor()
    client.plugin.store.close()
    client.plugin.store = loader.TraceStore(None, executor=gated)
    # The run-level jobs on that store too (not on the closed one, where a job could end
    # before the first answer is read).
    client.plugin.run_jobs = RunJobs(client.plugin.store)
    try:
        good, _ = QUERIES[endpoint.name]
        response = client.get(endpoint.name, **good)
        assert response.status_code == 202, response.get_data(as_text=True)
        body = msgspec.json.decode(response.get_data(), type=endpoint.loading)
        assert body["state"] == "loading"
    finally:
        held_loads.set()
        gated.gate.set()
        client.close()
        gated.pool.shutdown(wait=True)


def test_download_is_the_file(client: PluginClient, logdir: Path) -> None:
    response = client.get("download", **SPAN)
    assert response.status_code == 200
    assert response.get_data() == (logdir / "job" / "worker0.100.pt.trace.json").read_bytes()
    assert client.get("download", worker="worker0").status_code == 400  # no run named
