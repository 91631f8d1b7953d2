"""The trace view's kept answers (`workers.KeptAnswers`): a route's JSON is msgspec's
encoding of its answer, made once and handed back again (`kept_json`, the routes'
`*_kept`); the routes' HTTP body is that JSON. Only the JSON is kept: the compute function
makes its answer anew. The answers not kept are made one at a time (`WINDOW_LANE`); one
kept is handed back without waiting."""

from __future__ import annotations

import threading
import time
from typing import Any

import msgspec
import pytest
from corpus import corpus_model
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.trace_view.workers import (
    WINDOW_LANE,
    FairLane,
    KeptAnswers,
    WorkerTrace,
    kept_json,
)

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

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


def _threads(count: int, target: Any) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    return threads


def test_answers_asked_side_by_side_are_made_one_at_a_time() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    inside, most = [0], [0]
    lock = threading.Lock()
    bodies: dict[int, bytes] = {}

    def ask(i: int) -> None:
        def answer() -> dict[str, int]:
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.01)  # long enough for the others to arrive meanwhile
            with lock:
                inside[0] -= 1
            return {"window": i}

        bodies[i] = kept_json(workers, "test_lane", (i,), answer)

    for t in _threads(8, ask):
        t.join(10)
    assert most[0] == 1
    assert bodies == {i: b'{"window":%d}' % i for i in range(8)}


def test_the_same_answer_asked_side_by_side_is_made_once() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    made: list[int] = []
    bodies: list[bytes] = []

    def ask(i: int) -> None:
        def answer() -> dict[str, int]:
            made.append(i)
            time.sleep(0.01)
            return {"same": 1}

        bodies.append(kept_json(workers, "test_lane_once", ("same",), answer))

    for t in _threads(6, ask):
        t.join(10)
    assert len(made) == 1 and bodies == [b'{"same":1}'] * 6


def test_a_kept_answer_does_not_wait_for_the_lane() -> None:
    workers = [WorkerTrace(None, corpus_model(TRACE))]
    kept = kept_json(workers, "test_lane_kept", (0,), lambda: {"kept": 0})
    entered, release = threading.Event(), threading.Event()

    def slow(_: int) -> None:
        def answer() -> dict[str, int]:
            entered.set()
            release.wait(10)
            return {"slow": 1}

        kept_json(workers, "test_lane_kept", (1,), answer)

    (busy,) = _threads(1, slow)
    try:
        assert entered.wait(10) and WINDOW_LANE.locked()
        started = time.monotonic()
        again = kept_json(workers, "test_lane_kept", (0,), lambda: {"kept": 99})
        assert again is kept and time.monotonic() - started < 1.0
    finally:
        release.set()
        busy.join(10)
    assert not WINDOW_LANE.locked()


def test_the_lane_goes_to_the_thread_that_waited_longest() -> None:
    lane = FairLane()
    order: list[int] = []

    def wait_turn(i: int) -> None:
        with lane:
            order.append(i)

    threads = []
    with lane:
        for i in range(5):
            (t,) = _threads(1, lambda _, i=i: wait_turn(i))
            threads.append(t)
            deadline = time.monotonic() + 10
            while lane.waiting() < i + 1 and time.monotonic() < deadline:
                time.sleep(0.001)  # thread i queued before thread i + 1 starts
        assert lane.waiting() == 5 and order == []
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]
    assert not lane.locked() and lane.waiting() == 0
