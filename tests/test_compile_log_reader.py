"""The TORCH_TRACE log reader (`ingest/compile_log`): real logs read whole, and damage
(a corrupted payload line, lines that are no records, a cut gzip stream, a line or a
payload over its bound, an empty file, a file that is no log, the text limit) skipped and
said, never raised beyond the two whole-file errors."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
from corpus import corpus_path
from kinetoscope.ingest import compile_log
from kinetoscope.ingest.compile_log import (
    CompileLogError,
    LogReading,
    LogRecord,
    read_compile_log,
)

DATA = Path(__file__).parent / "data" / "compile_logs"
ALL = frozenset({"compilation_metrics", "chromium_event", "artifact", "str", "dynamo_start"})


def _read(path: Path, kinds: frozenset[str] = ALL) -> tuple[list[LogRecord], LogReading]:
    records: list[LogRecord] = []
    reading = read_compile_log(str(path), kinds, lambda kind, meta: True, records.append)
    return records, reading


def _line(meta: str, pid: int = 7) -> str:
    return f"V1123 18:53:21.040000 {pid} torch/_dynamo/utils.py:2350] {meta}\n"


def _with_payload(kind: str, payload: str, md5: str | None = None) -> str:
    digest = md5 or hashlib.md5(payload.encode()).hexdigest()
    body = "".join(f"\t{line}\n" for line in payload.split("\n"))
    return (
        _line(
            f'{{"{kind}": {{}}, "frame_id": 0, "frame_compile_id": 0, "has_payload": "{digest}"}}'
        )
        + body
    )


def test_a_recorded_log_read_whole_with_its_payloads() -> None:
    (log,) = (DATA / "graph_break" / "torch_trace").glob("*.log.gz")
    records, reading = _read(log, frozenset({"compilation_metrics", "chromium_event"}))
    metrics = [r for r in records if r.kind == "compilation_metrics"]
    assert [m.meta["compilation_metrics"]["compile_id"] for m in metrics] == ["0/0", "1/0"]
    assert all(r.pid == 24212 for r in records)
    events = [r for r in records if r.kind == "chromium_event"]
    assert events and all(r.payload and r.payload.startswith("{") for r in events)
    assert reading.records == len(records) and not reading.partial
    # The recorded logs' paths were rewritten after torch wrote them: the payloads that
    # held a path no longer match their md5, are counted, and still read.
    assert reading.skipped == 0 and reading.md5_mismatches > 0


def test_tlparse_corrupted_json_line_is_counted_not_fatal() -> None:
    good, _ = _read(corpus_path("tlparse/tests/inputs/simple.log"))
    bad, reading = _read(corpus_path("tlparse/tests/inputs/simple_corrupted_json.log"))
    assert len(bad) == len(good)  # the record is handed over; its payload no longer parses
    assert reading.md5_mismatches == 1
    assert any("md5" in w for w in reading.warnings)


def test_lines_that_are_no_records_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_text(
        "\n"
        + _line('{"str": ["/a.py", 0]}')
        + "garbage that is not a record\n"
        + _line('{"compilation_metrics": {"co_name": "f"}, "frame_id": 0, "frame_compile_id": 0}')
        + _line('{"compilation_metrics": {"co_name": ')  # cut JSON
        + "\n"
    )
    records, reading = _read(path)
    assert [r.kind for r in records] == ["str", "compilation_metrics"]
    assert records[1].line == 4
    assert reading.skipped == 2
    assert reading.warnings == [
        "line 3: not a TORCH_TRACE record, skipped",
        "line 5: its compilation_metrics record is not JSON (or not UTF-8), skipped",
    ]


def test_payload_lines_joined_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "log"
    payload = '{\n"name": "dynamo",\n"ts": 1.5,\n\n"ph": "B"\n}'
    path.write_text(
        _with_payload("chromium_event", payload) + _with_payload("chromium_event", "x", "0" * 32)
    )
    records, reading = _read(path)
    assert [r.payload for r in records] == [payload, "x"]
    assert reading.md5_mismatches == 1


def test_a_cut_gzip_stream_keeps_what_was_read(tmp_path: Path) -> None:
    text = "".join(_line(f'{{"str": ["/f{i}.py", {i}]}}') for i in range(5000))
    whole = gzip.compress(text.encode())
    path = tmp_path / "dedicated_log_torch_trace_x.log.gz"
    path.write_bytes(whole[: len(whole) // 2])
    records, reading = _read(path)
    assert 0 < len(records) < 5000
    assert reading.partial
    assert "ends early or is damaged" in reading.warnings[-1]


def test_a_line_over_its_bound_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_log, "MAX_LINE", 100)
    path = tmp_path / "log"
    path.write_text(_line('{"str": ["' + "x" * 500 + '", 0]}') + _line('{"str": ["/a.py", 1]}'))
    records, reading = _read(path)
    assert [r.meta["str"][1] for r in records] == [1]
    assert reading.skipped == 1 and "longer than" in reading.warnings[0]


def test_a_payload_over_its_bound_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compile_log, "MAX_PAYLOAD", 100)
    path = tmp_path / "log"
    path.write_text(_with_payload("artifact", "y\n" * 200) + _with_payload("artifact", "small"))
    records, reading = _read(path)
    assert [r.payload for r in records] == ["small"]
    assert reading.skipped == 1 and "payload over" in reading.warnings[0]


def test_the_text_limit_stops_the_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINETOSCOPE_MAX_COMPILE_LOG_MB", "0.001")  # ~1 KB
    path = tmp_path / "log"
    path.write_text("".join(_line(f'{{"str": ["/f{i}.py", {i}]}}') for i in range(100)))
    records, reading = _read(path)
    assert reading.partial and len(records) < 100
    assert "KINETOSCOPE_MAX_COMPILE_LOG_MB" in reading.warnings[-1]


def test_an_empty_file_and_a_file_that_is_no_log(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    with pytest.raises(CompileLogError) as raised:
        _read(empty)
    assert raised.value.kind == "empty_file"
    other = tmp_path / "other.log"
    other.write_text("INFO: training started\nloss 0.3\n")
    with pytest.raises(CompileLogError) as raised:
        _read(other)
    assert raised.value.kind == "not_a_log"


def test_only_the_kinds_asked_are_decoded(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_text(_line('{"describe_tensor": {"id": 1}}') + _line('{"str": ["/a.py", 0]}'))
    records, reading = _read(path, frozenset({"str"}))
    assert [r.kind for r in records] == ["str"]
    assert reading.records_seen == 2


def test_a_byte_that_is_not_utf8_skips_its_record_only(tmp_path: Path) -> None:
    """One record's metadata holding an invalid byte: that record is skipped and counted;
    the records after it are read (the whole log was lost, `UnicodeDecodeError`)."""
    good = '{"compilation_metrics": {"co_name": "f"}, "frame_id": 0, "frame_compile_id": 0}'
    bad = '{"compilation_metrics": {"co_name": "\\udcff"}, "frame_id": 1}'
    text = (_line(good) + _line(bad) + _line(good.replace('"f"', '"g"'))).encode(
        "utf-8", "surrogateescape"
    )
    path = tmp_path / "log.log"
    path.write_bytes(text.replace(b"\\udcff", b"\xff"))
    records, reading = _read(path)
    assert [r.meta["compilation_metrics"]["co_name"] for r in records] == ["f", "g"]
    assert reading.skipped == 1 and "not UTF-8" in reading.warnings[0]


def test_a_log_of_payload_lines_alone_stops_at_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text cap counts every line: a log that is one record then many payload lines
    (a 6 GiB inflated log ran past 180 s) stops at KINETOSCOPE_MAX_COMPILE_LOG_MB."""
    monkeypatch.setenv("KINETOSCOPE_MAX_COMPILE_LOG_MB", "1")
    path = tmp_path / "big.log.gz"
    with gzip.open(path, "wt") as f:
        f.write(_line('{"str": ["x"], "has_payload": "0" }'))
        f.write(("\t" + "y" * 1000 + "\n") * 20_000)  # 20 MB of payload lines
    _, reading = _read(path)
    assert reading.partial and reading.text_bytes < 2 << 20
    assert any("KINETOSCOPE_MAX_COMPILE_LOG_MB" in w for w in reading.warnings)
