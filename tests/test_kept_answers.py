"""The trace view's kept answers (`workers.KeptAnswers`) and their JSON (`answer_json`): a
kept answer's JSON is msgspec's encoding of it, made once while the answer is kept; an
answer pushed out, replaced, or never kept is encoded each time it is asked."""

from __future__ import annotations

import msgspec
from corpus import corpus_model
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.trace_view import workers as workers_module
from kinetoscope.trace_view.workers import KeptAnswers, WorkerTrace, answer_json

TRACE = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


def test_a_kept_answer_is_encoded_once_as_msgspec_encodes_it() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    for route, params in (("tracks", {}), ("trace", {"width": "700"}), ("flows", {})):
        endpoint = ENDPOINTS[route]
        answer = endpoint.of_traces(workers, endpoint.decode(params))
        assert endpoint.of_traces(workers, endpoint.decode(params)) is answer  # kept
        first = answer_json(answer)
        assert first == msgspec.json.encode(answer)
        assert answer_json(answer) is first  # not encoded again


def test_an_answer_not_kept_is_encoded_each_time() -> None:
    answer = {"t0": 1.5, "rows": [1, 2, 3]}
    first = answer_json(answer)
    assert first == msgspec.json.encode(answer)
    assert answer_json(answer) is not first


def test_answers_pushed_out_or_replaced_are_forgotten() -> None:
    kept = KeptAnswers(2)
    answers = [{"n": [i] * 50} for i in range(4)]
    kept.put("a", answers[0])
    kept.put("b", answers[1])
    json_a = answer_json(answers[0])
    assert answer_json(answers[0]) is json_a
    kept.put("c", answers[2])  # "a" pushed out
    assert id(answers[0]) not in workers_module._HOLDERS
    assert answer_json(answers[0]) is not json_a
    assert answer_json(answers[0]) == json_a
    json_b = answer_json(answers[1])
    kept.put("b", answers[3])  # the same request answered by another object
    assert id(answers[1]) not in workers_module._HOLDERS
    assert answer_json(answers[1]) is not json_b
    assert answer_json(answers[3]) is answer_json(answers[3])
    assert kept.get("b") is answers[3] and kept.get("a") is None
