"""The compiled Perfetto reader's args text where it reuses what it wrote before: an
interned arg name or string is escaped once per entry, and a composite value (a dict, an
array, a nested value) met again with the same bytes is written once per sequence and
state of its interned names and strings. Each event's args are compared with their text
computed by hand, and the whole model with the protobuf runtime's reader (`check`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import perfetto_bombs as pb
import pytest
from kinetoscope.ingest.perfetto import native
from test_perfetto_native import annotation, check, interned

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled reader is not built")


def instant(ts: int, seq: int, *annotations: bytes) -> bytes:
    body = pb.number(9, 3) + pb.number(11, 1) + pb.field(23, b"op")
    body += b"".join(pb.field(4, a) for a in annotations)
    return pb.packet(pb.number(8, ts) + pb.number(10, seq) + pb.field(11, body))


def args_of(model: Any) -> list[str]:
    """Each event's args text, in time order."""
    ends = model.events["args_end"].tolist()
    blob = bytes(model.args_blob) if len(model.args_blob) else b""
    texts = [blob[s:e].decode() for s, e in zip([0, *ends[:-1]], ends)]
    order = model.events["ts"].argsort(kind="stable")
    return [texts[i] for i in order]


def test_a_repeated_composite_value_reads_its_interned_strings_as_they_are_now(
    tmp_path: Path,
) -> None:
    dims = annotation(
        name_iid=1,
        array=[
            annotation(i=1),
            annotation(siid=7),
            annotation(dict=[annotation(name_iid=2, siid=8)]),
        ],
    )
    data = pb.thread_track(1, 10, 11)
    data += interned(1, 3, 1, b"Input Dims") + interned(1, 3, 2, b"key")
    data += interned(1, 29, 7, b"float") + interned(1, 29, 8, b'say "hi"\n')
    data += instant(1000, 1, dims)
    data += instant(2000, 1, dims)  # the same bytes, the same strings
    data += interned(1, 29, 7, b"half")  # a string given another text
    data += instant(3000, 1, dims)
    data += instant(4000, 2, dims)  # another sequence: none of its strings
    data += interned(1, 3, 2, b"other key", cleared=True)  # cleared: only the new name
    data += instant(5000, 1, dims)
    model = check(tmp_path, data)
    assert args_of(model) == [
        '{"Input Dims":[1,"float",{"key":"say \\"hi\\"\\n"}]}',
        '{"Input Dims":[1,"float",{"key":"say \\"hi\\"\\n"}]}',
        '{"Input Dims":[1,"half",{"key":"say \\"hi\\"\\n"}]}',
        '{"":[1,"",{"":""}]}',
        '{"":[1,"",{"other key":""}]}',
    ]


def test_a_repeated_composite_value_with_a_legacy_value_python_reads(tmp_path: Path) -> None:
    """A legacy JSON value that Python reads, inside a repeated array: each event's args
    are as Python writes that value (2.50 is 2.5), and a near twin is not taken for it."""
    good = annotation(b"shapes", array=[annotation(legacy=b"[1, 2.50]"), annotation(i=3)])
    data = pb.thread_track(1, 10, 11)
    data += instant(1000, 1, good) + instant(2000, 1, good)
    data += instant(3000, 1, annotation(b"shapes", array=[annotation(legacy=b"[1, 2.5]")]))
    model = check(tmp_path, data)
    assert args_of(model) == [
        '{"shapes":[[1,2.5],3]}',
        '{"shapes":[[1,2.5],3]}',
        '{"shapes":[[1,2.5]]}',
    ]


def test_core_args_from_interned_names_and_repeated_values(tmp_path: Path) -> None:
    """Core args named by interned names (read once per name) fill their columns on
    every event, also where a repeated value sits beside them."""
    shape = annotation(b"Input Dims", array=[annotation(i=2), annotation(i=3)])
    data = pb.thread_track(1, 10, 11)
    data += interned(1, 3, 1, b"External id") + interned(1, 3, 2, b"device")
    for k in range(3):
        data += instant(1000 * (k + 1), 1, annotation(name_iid=1, i=40 + k), shape)
    data += instant(4000, 1, annotation(name_iid=2, i=5), shape)
    model = check(tmp_path, data)
    order = model.events["ts"].argsort(kind="stable")
    assert model.column_at("external_id", order).tolist() == [40, 41, 42, -1]
    assert model.column_at("device", order).tolist() == [-1, -1, -1, 5]
    assert args_of(model)[3] == '{"device":5,"Input Dims":[2,3]}'


def test_repeated_keys_and_many_keys_without_legacy_values(tmp_path: Path) -> None:
    """Args of keys all different are written in one pass; a repeated key (by its name or
    its interned name) keeps its first place and its last value, its composite values
    written before the repeat met as they were, core columns from the last value; more
    than 32 keys are planned as a dict. The same args as the protobuf runtime's reader."""
    shape = annotation(b"Input Dims", array=[annotation(i=2), annotation(siid=7)])
    data = pb.thread_track(1, 10, 11)
    data += interned(1, 3, 1, b"External id") + interned(1, 29, 7, b"float")
    data += instant(1000, 1, annotation(name_iid=1, i=4), shape, annotation(b"External id", i=5))
    data += instant(2000, 1, shape, annotation(b"device", i=1), shape, annotation(b"x", d=0.5))
    data += instant(3000, 1, *(annotation(b"k%d" % k, i=k) for k in range(40)))
    data += instant(4000, 1, annotation(b"correlation", u=9), annotation(b"correlation", u=10))
    model = check(tmp_path, data)
    order = model.events["ts"].argsort(kind="stable")
    assert model.column_at("external_id", order).tolist()[:2] == [5, -1]
    assert model.column_at("correlation", order).tolist()[3] == 10
    texts = args_of(model)
    assert texts[0] == '{"External id":5,"Input Dims":[2,"float"]}'
    assert texts[1] == '{"Input Dims":[2,"float"],"device":1,"x":0.5}'
    assert texts[2].startswith('{"k0":0,"k1":1,') and texts[2].endswith('"k39":39}')
    assert texts[3] == '{"correlation":10}'


def test_names_met_again_are_the_same_keys(tmp_path: Path) -> None:
    """Annotation names written as keys before are written again from what was kept
    (Enc.key_tokens): a plain name, one to escape, one not UTF-8 whose text is as long
    as its bytes, a core key's name at the top (its column) and inside a dict (none)."""
    names = [b"External id", b'say "hi"', b"\xf0\x9f\x98", b"x" * 30, b"x" * 31]
    data = pb.thread_track(1, 10, 11)
    for k in range(3):
        values = [annotation(name, i=k) for name in names]
        inner = annotation(b"d", dict=[annotation(b"External id", i=100 + k)])
        data += instant(1000 * (k + 1), 1, *values, inner)
    model = check(tmp_path, data)
    order = model.events["ts"].argsort(kind="stable")
    assert model.column_at("external_id", order).tolist() == [0, 1, 2]
    texts = args_of(model)
    assert texts[2].startswith('{"External id":2,"say \\"hi\\"":2,"\ufffd":2,')
    assert texts[2].endswith('"d":{"External id":102}}')
