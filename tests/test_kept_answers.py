"""The trace view's kept answers (`workers.KeptAnswers`): a route's JSON is msgspec's
encoding of its answer, made once and handed back again (`kept_json`, the routes'
`*_kept`); the routes' HTTP body is that JSON. Only the JSON is kept: the compute function
makes its answer anew."""

from __future__ import annotations

import msgspec
from corpus import corpus_model
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.trace_view.workers import KeptAnswers, WorkerTrace, kept_json

TRACE = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


def test_a_kept_answer_is_encoded_once_as_msgspec_encodes_it() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    routes = (
        ("tracks", {}),
        ("trace", {"width": "700"}),
        ("flows", {}),
        ("range_summary", {"t0": "0"}),
    )
    for route, params in routes:
        endpoint = ENDPOINTS[route]
        answer = endpoint.of_traces(workers, endpoint.decode(params))
        again = endpoint.of_traces(workers, endpoint.decode(params))
        assert again == answer and again is not answer  # made anew, the same answer
        first = endpoint.traces_json(workers, endpoint.decode(params))
        assert first == msgspec.json.encode(answer)
        assert endpoint.traces_json(workers, endpoint.decode(params)) is first  # not again


def test_a_route_not_kept_is_encoded_as_its_answer() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    endpoint = ENDPOINTS["search"]
    params = endpoint.decode({"q": "conv"})
    assert endpoint.kept_ref is None
    body = endpoint.traces_json(workers, params)
    assert msgspec.json.decode(body) == endpoint.of_traces(workers, params)


def test_kept_json_makes_an_answer_once_and_hands_back_its_json() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    made: list[dict[str, list[int]]] = []

    def answer() -> dict[str, list[int]]:
        made.append({"n": [len(made)] * 3})
        return made[-1]

    first = kept_json(workers, "test_route", (1,), answer)
    assert first == b'{"n":[0,0,0]}'
    assert kept_json(workers, "test_route", (1,), answer) is first
    assert kept_json(workers, "test_route", (2,), answer) == b'{"n":[1,1,1]}'
    assert len(made) == 2


def test_answers_pushed_out_are_forgotten() -> None:
    kept = KeptAnswers(2)
    pairs = [msgspec.json.encode({"n": i}) for i in range(4)]
    kept.put("a", pairs[0])
    kept.put("b", pairs[1])
    assert kept.get("a") is pairs[0]  # "a" used last: "b" goes first
    kept.put("c", pairs[2])
    assert kept.get("b") is None and kept.get("a") is pairs[0]
    kept.put("a", pairs[3])  # the same request answered by another object
    assert kept.get("a") is pairs[3] and kept.get("c") is pairs[2]
