"""Damaged traces keep what decodes: flipped gzip bytes, a UTF-8 BOM, deep nesting,
NaN and huge numbers; and a fuzz pass over real traces through the plugin's routes."""

from __future__ import annotations

import gzip
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from corpus import corpus_path
from kinetoscope.api.endpoints import VIEWS
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.decode import TraceDecodeError

pytestmark = pytest.mark.timed  # a wall-clock bound: run alone (tests/run.sh)

SMALL_TRACES = (
    "hta/tests/data/trace_filter/sampled_rank-0.json.gz",
    "pytorch-kineto/tb_plugin/test/gpu_metrics_input.json",
)


def steps_trace(count: int = 400) -> TraceBuilder:
    t = TraceBuilder()
    for i in range(count):
        t.op(f"aten::op{i % 9}", i * 10, 5, **{"Input Dims": [[i, 3]]})
    return t


def test_a_flipped_byte_in_gzip_keeps_the_events_before(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(json.dumps({"traceEvents": steps_trace().events}).encode()))
    data[len(data) * 3 // 4] ^= 0x5A
    path = tmp_path / "t.json.gz"
    path.write_bytes(bytes(data))
    model = build_model(str(path))
    assert 0 < len(model) <= 400
    assert model.partial and any("gzip data is damaged" in w for w in model.warnings)


def test_a_damaged_checksum_keeps_every_event(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(json.dumps({"traceEvents": steps_trace().events}).encode()))
    data[-6] ^= 1  # inside the CRC-32 of the gzip trailer: the text itself is whole
    path = tmp_path / "t.json.gz"
    path.write_bytes(bytes(data))
    model = build_model(str(path))
    # At most the last 256 bytes of text (an event or two) go with the failing step.
    assert len(model) >= 396
    assert model.partial


def test_gzip_damaged_at_its_start_is_a_clear_error(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(json.dumps({"traceEvents": steps_trace().events}).encode()))
    data[12:40] = b"\xff" * 28
    path = tmp_path / "t.json.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(TraceDecodeError) as info:
        build_model(str(path))
    assert info.value.kind == "bad_gzip"


def test_utf8_bom(tmp_path: Path) -> None:
    text = json.dumps({"schemaVersion": 1, "traceEvents": steps_trace(5).events})
    path = tmp_path / "t.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    model = build_model(str(path))
    assert len(model) == 5 and not model.partial and model.header["schemaVersion"] == 1


def test_deeply_nested_arg_skips_only_its_event(tmp_path: Path) -> None:
    events = steps_trace(5).events
    text = json.dumps({"traceEvents": events})
    deep = '"deep": ' + "[" * 100_000 + "]" * 100_000 + ", "
    cut = text.index('"args"', text.index("aten::op2"))
    path = tmp_path / "t.json"
    path.write_text(text[:cut] + deep + text[cut:])
    model = build_model(str(path))
    assert len(model) == 4
    assert model.partial and any("unreadable" in w for w in model.warnings)


def test_nan_infinity_and_huge_numbers_are_read_as_missing(tmp_path: Path) -> None:
    text = json.dumps({"traceEvents": steps_trace(4).events})
    text = text.replace('"dur": 5', '"dur": NaN', 1).replace('"dur": 5', '"dur": 1e400', 1)
    text = text.replace('"dur": 5', '"dur": -Infinity', 1)
    path = tmp_path / "t.json"
    path.write_text(text)
    model = build_model(str(path))
    assert len(model) == 4 and not model.partial
    assert np.isfinite(model.events["dur"]).all()
    assert model.events["dur"][3] == 5
    assert any("NaN" in w for w in model.warnings)
    assert any("float range" in w for w in model.warnings)


def test_gpu_work_without_runtime_events(tmp_path: Path) -> None:
    """A trace cut before its runtime events: kernels have no launcher."""
    t = TraceBuilder()
    op = t.op("aten::mm", 0, 50)
    t.launch(10, 5, op, gpu_ts=20, gpu_dur=10)
    t.events = [e for e in t.events if e["cat"] != "cuda_runtime"]
    rows = VIEWS["operators"].compute(t.model(tmp_path), {})["rows"]
    assert [r["name"] for r in rows] == ["aten::mm"]
    assert rows[0]["device_self_us"] == 0


# --- fuzz: damaged variants of real traces, through the plugin ---------------------------


def damaged_variants(text: bytes, packed: bytes, seed: int) -> dict[str, bytes]:
    """Name → file bytes (".gz" names are gzip) derived from one real trace."""
    rnd = random.Random(seed)
    out: dict[str, bytes] = {}
    for k in range(3):
        flipped = bytearray(packed)
        flipped[rnd.randrange(20, len(flipped) - 10)] ^= 1 << rnd.randrange(8)
        out[f"gzflip{k}.json.gz"] = bytes(flipped)
        broken = bytearray(text)
        broken[rnd.randrange(100, len(broken) - 10)] = ord(rnd.choice('{}[],:"x0\\'))
        out[f"jsonflip{k}.json"] = bytes(broken)
    for frac in (0.1, 0.5, 0.97):
        out[f"cut{int(frac * 100)}.json"] = text[: int(len(text) * frac)]
        out[f"gzcut{int(frac * 100)}.json.gz"] = packed[: int(len(packed) * frac)]
    first_args = text.index(b'"args"')
    out["deep.json"] = (
        text[:first_args] + b'"d": ' + b"[" * 50000 + b"]" * 50000 + b"," + text[first_args:]
    )
    out["blanks.json.gz"] = gzip.compress(text.replace(b"},", b"}," + b" " * (1 << 22), 3), 1)
    out["hugestring.json"] = (
        text[:first_args] + b'"s": "' + b"x" * (20 << 20) + b'", ' + text[first_args:]
    )
    out["numbers.json"] = text.replace(b'"dur": ', b'"dur": NaN, "d2": 1e999, "d3": ', 5)
    out["bom.json"] = b"\xef\xbb\xbf" + text
    return out


@pytest.mark.parametrize("rel", SMALL_TRACES)
def test_fuzzed_corpus_traces_never_break_the_plugin(
    tmp_path: Path, plugin_client: Callable[[Path], PluginClient], rel: str
) -> None:
    source = corpus_path(rel)
    raw = source.read_bytes()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    packed = raw if raw[:2] == b"\x1f\x8b" else gzip.compress(raw, 6)
    run = tmp_path / "logs" / "fuzz"
    run.mkdir(parents=True)
    variants = damaged_variants(text, packed, seed=len(raw))
    for name, data in variants.items():  # torch-style names: listed without a sniff
        (run / name.replace(".json", ".pt.trace.json")).write_bytes(data)
    (run / "good.pt.trace.json").write_bytes(text)
    client = plugin_client(tmp_path / "logs")
    workers = {w["name"] for w in client.json("workers", run="fuzz")["workers"]}
    assert workers == {name.split(".")[0] for name in variants} | {"good"}
    outcomes: dict[str, str] = {}
    for worker in sorted(workers - {"good"}):
        started = time.monotonic()
        status = client.wait_ready("fuzz", worker, timeout=120)
        assert time.monotonic() - started < 60, (worker, "took too long")
        if status["state"] == "error":
            assert status["error"]["kind"] != "internal", status["error"]
            outcomes[worker] = f"error {status['error']['kind']}"
            continue
        assert status["state"] == "ready", status
        assert not status["partial"] or status["warnings"], (worker, status)
        for view in status["views"]:
            if view != "trace":
                response = client.get(view, run="fuzz", worker=worker)
                assert response.status_code == 200, (view, response.get_data(as_text=True))
        outcomes[worker] = "partial" if status["partial"] else "whole"
    # The neighbour of every damaged file still loads whole.
    good = client.wait_ready("fuzz", "good")
    assert good["state"] == "ready" and not good["partial"]
    # The forgiving cases keep events: nothing that decodes is thrown away.
    assert outcomes["bom"] == "whole" and outcomes["numbers"] == "whole"
    assert outcomes["deep"] == "partial" and outcomes["hugestring"] == "whole"
    assert outcomes["blanks"] == "whole"
    assert outcomes["cut50"] == "partial" and outcomes["gzcut50"] == "partial"
