"""The trace file-name grammar: round trips, corpus names, names never read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kinetoscope.ingest.naming import (
    TraceName,
    default_worker_name,
    format_trace_name,
    parse_trace_name,
    temp_name_for,
)

# Printable (no control or surrogate characters), no "/" or NUL, not hidden.
workers = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/\x00"),
    min_size=1,
    max_size=40,
).filter(lambda s: not s.startswith("."))
timestamps = st.integers(min_value=0, max_value=2**64)


@given(workers, timestamps, st.booleans())
def test_format_parse_round_trip(worker: str, timestamp: int, gz: bool) -> None:
    name = format_trace_name(worker, timestamp, gz)
    assert parse_trace_name(name) == TraceName(worker, timestamp, gz, True)


@given(
    workers,
    timestamps,
    st.booleans(),
    st.text(min_size=1, max_size=20).filter(lambda s: "/" not in s and "\x00" not in s),
)
def test_temp_names_never_parse(worker: str, timestamp: int, gz: bool, token: str) -> None:
    assert parse_trace_name(temp_name_for(format_trace_name(worker, timestamp, gz), token)) is None


@given(st.text(max_size=60))
def test_parse_never_raises(name: str) -> None:
    parsed = parse_trace_name(name)
    if parsed is not None:
        assert parsed.worker and not parsed.worker.startswith(".")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # Names as they appear in the corpus.
        ("worker0.1623143089861.pt.trace.json.gz", TraceName("worker0", 1623143089861, True, True)),
        # Only the last ".digits" group is the timestamp; the rest is the worker.
        (
            "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
            TraceName("rank-34.Jul_15_10_52_41", 1074, True, True),
        ),
        ("worker0_span1.pt.trace.json.gz", TraceName("worker0_span1", None, True, True)),
        ("worker0.pt.trace.json.gz", TraceName("worker0", None, True, True)),
        ("sampled_rank-0.json.gz", TraceName("sampled_rank-0", None, True, False)),
        ("before_fix_trace.json", TraceName("before_fix_trace", None, False, False)),
        ("empty.pt.trace.json", TraceName("empty", None, False, True)),
        # A plain name with digits keeps them in the worker: only torch style has a timestamp.
        ("rank0.123.json", TraceName("rank0.123", None, False, False)),
        ("host.example.com_12.17.pt.trace.json", TraceName("host.example.com_12", 17, False, True)),
        ("a/b/worker1.5.pt.trace.json", TraceName("worker1", 5, False, True)),
    ],
)
def test_parse_examples(name: str, expected: TraceName) -> None:
    assert parse_trace_name(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".hidden.pt.trace.json",
        ".pt.trace.json",
        ".json",
        ".json.gz",
        "notes.txt",
        "trace.json.tmp",
        "trace.json.gz.part",
        "worker0.pt.trace.json.gz.1",
        "MANIFEST.tsv",
        ".worker0.1.pt.trace.json.gz.123-gz.tmp",
    ],
)
def test_names_never_read(name: str) -> None:
    assert parse_trace_name(name) is None


def test_format_examples() -> None:
    assert format_trace_name("worker0", 12, True) == "worker0.12.pt.trace.json.gz"
    assert format_trace_name("host.example.com_12", 5, False) == (
        "host.example.com_12.5.pt.trace.json"
    )


@pytest.mark.parametrize("worker", ["", ".hidden", "a/b", "nul\x00"])
def test_format_rejects_bad_workers(worker: str) -> None:
    with pytest.raises(ValueError):
        format_trace_name(worker, 1, True)


def test_format_rejects_negative_timestamp() -> None:
    with pytest.raises(ValueError):
        format_trace_name("w", -1, True)


def test_default_worker_name_round_trips() -> None:
    worker = default_worker_name()
    parsed = parse_trace_name(format_trace_name(worker, 1, True))
    assert parsed is not None and parsed.worker == worker
