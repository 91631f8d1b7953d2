"""Track events' args encoded ahead of the compiled Perfetto reader (`prepare_packets`,
ingest/perfetto/_pf_prepare.h): only those that need no sequence state are, their text is
the reader's own, what is prepared is bounded, and the reader trusts none of it blindly."""

from __future__ import annotations

import itertools
import struct
from pathlib import Path
from typing import Any

import perfetto_bombs as pb
import pytest
from kinetoscope.ingest import text_blocks
from kinetoscope.ingest.perfetto import native, rules, stream
from test_perfetto_native import annotation, check, event, interned

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled reader is not built")

NONE = 0xFFFFFFFF
# _pf_prepare.h: PREPARED_GROWTH, PREPARED_SLACK
GROWTH, SLACK = 4, 1 << 16


def prepared_args(prepared: bytes) -> list[bytes | None]:
    """Each packet's prepared args text (None: left to the reading thread)."""
    (n,) = struct.unpack_from("<I", prepared)
    offsets = struct.unpack_from(f"<{n}I", prepared, 4)
    records = 4 + 4 * n
    texts: list[bytes | None] = []
    for at in offsets:
        if at == NONE:
            texts.append(None)
            continue
        length, packed = struct.unpack_from("<IB", prepared, records + at)
        start = records + at + 8 + packed
        texts.append(prepared[start : start + length])
    return texts


def prepare(run: bytes) -> list[bytes | None]:
    module = rules.native_module()
    assert module is not None
    checks, prepared = module.prepare_packets(run, 7)
    assert checks == module.check_packets(run)
    return prepared_args(prepared)


def test_only_args_without_sequence_state_are_prepared(tmp_path: Path) -> None:
    literal = (
        annotation(b"b", i=1),
        annotation(b"a", s=b"x\ty"),
        annotation(b"empty", legacy=b"[]"),
    )
    nested_iid = annotation(b"d", dict=[annotation(b"k", siid=7)])
    data = pb.thread_track(1, 10, 11) + interned(1, 3, 6, b"arg") + interned(1, 29, 7, b"val")
    data += event(3, 1, 1, b"literal", *literal)
    data += event(3, 2, 1, b"named by iid", annotation(name_iid=6, i=1))
    data += event(3, 3, 1, b"string by iid, nested", nested_iid)
    data += event(3, 4, 1, b"legacy read by Python", annotation(b"j", legacy=b'{"a": 1.50}'))
    data += event(3, 5, 1, b"no args")
    texts = prepare(data)
    assert texts == [None, None, None, b'{"b":1,"a":"x\\ty","empty":[]}', None, None, None, None]
    check(tmp_path, data)  # read with them, and the same both ways


def test_correlation_is_added_to_prepared_args(tmp_path: Path) -> None:
    correlated = pb.number(52, 77)
    data = pb.thread_track(1, 10, 11)
    data += event(3, 1, 1, b"added", annotation(b"x", i=1), extra=correlated)
    data += event(3, 2, 1, b"named", annotation(b"correlation", i=5), extra=correlated)
    data += event(1, 3, 1, b"slice", annotation(b"device", i=0), annotation(b"stream", i=7))
    data += event(2, 4, 1, b"", annotation(b"end", b=True), extra=correlated)
    assert all(text is not None for text in prepare(data)[1:])
    model = check(tmp_path, data)
    assert len(model) == 3


def test_prepared_text_is_bounded(tmp_path: Path) -> None:
    """Control characters are escaped six bytes for one: past GROWTH times the run's bytes
    the rest of the run is left to the reading thread."""
    wide = annotation(b"ctl", s=b"\x01" * 40_000)
    data = pb.thread_track(1, 10, 11) + b"".join(event(3, t, 1, b"e", wide) for t in range(8))
    module = rules.native_module()
    assert module is not None
    _, prepared = module.prepare_packets(data, 7)
    texts = prepared_args(prepared)
    assert texts[1] is not None and len(texts[1]) > 6 * 40_000
    assert None in texts[2:]
    assert len(prepared) <= 4 + 4 * len(texts) + GROWTH * len(data) + SLACK
    check(tmp_path, data)


class _Cut:
    """The compiled module with its prepared bytes cut short: the reader must read past
    the end of none of them."""

    def __init__(self, module: Any, keep: int) -> None:
        self.module, self.keep = module, keep

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)

    def prepare_packets(self, run: bytes, seed: int) -> tuple[bytes, bytes]:
        checks, prepared = self.module.prepare_packets(run, seed)
        return checks, prepared[: self.keep]


@pytest.mark.parametrize("keep", [0, 3, 4, 9, 30, 60, 100])
def test_prepared_bytes_cut_short_are_not_read_past(
    keep: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = pb.thread_track(1, 10, 11)
    data += b"".join(event(3, t, 1, b"e", annotation(b"n", i=t)) for t in range(6))
    monkeypatch.setattr(rules, "_native", _Cut(rules.native_module(), keep))
    check(tmp_path, data)


def test_runs_with_and_without_args_encoded_ahead_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merging thread encodes a run's args ahead only where it waited for the reading
    one since the run before (`native._Pipeline`): runs of both kinds, in any order, read
    as the protobuf runtime reads them."""
    decided: list[bool] = []
    kinds = itertools.cycle([True, False, False, True, True, False])

    class Deciding(native._Cut):
        @property
        def waited(self) -> bool:
            decided.append(next(kinds))
            return decided[-1]

        @waited.setter
        def waited(self, value: bool) -> None:
            pass

    monkeypatch.setattr(native, "_Cut", Deciding)
    monkeypatch.setattr(stream, "RUN_BYTES", 2048)
    monkeypatch.setattr(text_blocks, "READ_BLOCK", 1024)  # else one block: one run
    data = pb.thread_track(1, 10, 11) + interned(1, 3, 6, b"arg")
    for i in range(300):
        args = annotation(b"n", i=i), annotation(b"s", s=b"v%d" % i)
        data += event(1, 10 * i, 1, b"slice", *args, annotation(name_iid=6, i=i))
        data += event(3, 10 * i + 1, 1, b"point", *args) + event(2, 10 * i + 5, 1)
    model = check(tmp_path, data)  # read in one thread, then in two with the pipeline
    assert len(model) == 600
    assert decided.count(True) > 3 and decided.count(False) > 3


def test_repeated_composite_annotations_are_checked_as_when_alone() -> None:
    """A run's composite annotations checked once per distinct bytes (_pf_check_cache.h):
    each packet's check byte and prepared args as when it is checked in a run of its own,
    also where the same bytes carry a legacy value Python reads, an interned string, or
    come again with one byte damaged."""
    module = rules.native_module()
    assert module is not None
    shapes = [
        annotation(b"Input Dims", array=[annotation(array=[annotation(i=2)]), annotation(i=3)]),
        annotation(b"j", array=[annotation(legacy=b'{"a": 1.50}'), annotation(i=1)]),
        annotation(name_iid=6, dict=[annotation(b"k", siid=7)]),
        annotation(b"n", nested=pb.number(1, 2) + pb.field(4, pb.field(8, b"x"))),
    ]
    damaged = bytearray(shapes[0])
    damaged[-2] = 0x80  # a varint that runs past its annotation
    packets = [event(3, k, 1, b"op", shapes[k % 4], annotation(b"x", i=k)) for k in range(12)]
    packets.insert(5, event(3, 99, 1, b"op", bytes(damaged)))
    packets.append(event(3, 100, 1, b"op", shapes[0]))
    run = pb.thread_track(1, 10, 11) + b"".join(packets)
    alone = b"".join(module.check_packets(p) for p in [pb.thread_track(1, 10, 11), *packets])
    assert module.check_packets(run, 5) == alone
    assert module.prepare_packets(run, 5)[0] == alone
    assert sorted(set(alone)) == [0, 1, 4]  # passed, damaged, a legacy value Python reads
    expected = [prepared_args(module.prepare_packets(p, 5)[1])[0] for p in packets]
    assert prepare(run)[1:] == expected
