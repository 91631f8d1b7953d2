"""The streaming decoder and model builder: every schema, every bad input, any chunking."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np
import pytest
from corpus import CORPUS, corpus_model, corpus_path, corpus_traces
from kinetoscope.ingest import build, decode, event_text, text_blocks
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.decode import TraceDecodeError
from kinetoscope.model.categories import Kind, Phase
from kinetoscope.model.trace_model import TraceModel
from kinetoscope.store.pools import WorkerPools
from kinetoscope.store.trace_store import TraceStore
from scan_compare import assert_work_sigs

EVENTS = [
    {
        "ph": "X",
        "cat": "cpu_op",
        "name": "aten::add",
        "pid": 1,
        "tid": 1,
        "ts": 10,
        "dur": 5,
        "args": {"External id": 3, "Input Dims": [[2, 3], [2, 3]]},
    },
    {
        "ph": "X",
        "cat": "kernel",
        "name": 'k},{"odd": [1]',
        "pid": 0,
        "tid": 7,
        "ts": 12.5,
        "dur": 1.25,
        "args": {
            "correlation": 9,
            "device": 0,
            "stream": 7,
            "blocks per SM": 0.5,
            "est. achieved occupancy %": 25,
        },
    },
    {
        "ph": "i",
        "cat": "cpu_instant_event",
        "s": "t",
        "name": "[memory]",
        "pid": 1,
        "tid": 1,
        "ts": 11,
        "args": {
            "Bytes": -64,
            "Addr": 4096,
            "Device Type": 1,
            "Device Id": 0,
            "Total Allocated": 128,
            "Total Reserved": 1024,
        },
    },
    {"ph": "s", "id": 9, "pid": 1, "tid": 1, "ts": 10, "cat": "ac2g", "name": "ac2g"},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
]


def write(path: Path, text: str | bytes, gz: bool = False) -> Path:
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def doc(events: list[dict[str, object]] = EVENTS, **extra: object) -> str:
    return json.dumps(
        {
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "G"}],
            "traceEvents": events,
            **extra,
        },
        indent=1,
    )


@pytest.mark.parametrize("gz", [False, True])
def test_object_form_columns(tmp_path: Path, gz: bool) -> None:
    model = build_model(
        str(write(tmp_path / "t.json", doc(traceName="x", baseTimeNanoseconds=5000), gz))
    )
    assert len(model) == 4  # metadata events are not rows
    ev = model.events
    assert model.names_of(np.arange(4)) == ["aten::add", 'k},{"odd": [1]', "[memory]", "ac2g"]
    assert ev["kind"].tolist() == [Kind.CPU_OP, Kind.KERNEL, Kind.MEMORY, Kind.FLOW]
    assert ev["ph"].tolist() == [Phase.COMPLETE, Phase.COMPLETE, Phase.INSTANT, Phase.FLOW_START]
    assert ev["ts"].tolist() == [10, 12.5, 11, 10]
    assert ev["dur"].tolist() == [5, 1.25, 0, 0]
    assert model.full_column("external_id").tolist() == [3, -1, -1, -1]
    assert model.full_column("correlation").tolist() == [-1, 9, -1, -1]
    assert model.full_column("flow_id").tolist() == [-1, -1, -1, 9]
    assert np.isnan(model.column_at("blocks_per_sm", np.array([3, 0]))).all()
    assert model.full_column("blocks_per_sm")[1] == 0.5 and model.full_column("occupancy")[1] == 25
    assert model.memory["bytes"].tolist() == [-64]
    assert model.memory["addr"].tolist() == [4096]
    assert model.memory["total_reserved"].tolist() == [1024]
    assert model.thread_names == {"1/1": "main"}
    assert model.header["traceName"] == "x"  # a key after the events array
    assert model.time_origin_us == 5.0
    assert json.loads(model.raw_args(0)) == EVENTS[0]["args"]
    assert not model.partial and model.warnings == []


def test_bare_array_and_multi_member_gzip(tmp_path: Path) -> None:
    text = json.dumps(EVENTS).encode()
    half = len(text) // 2
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    model = build_model(str(path))
    assert len(model) == 4 and not model.partial


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("chunk", [64, 300, 1 << 20])
def test_any_chunking_gives_the_same_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, threads: str
) -> None:
    # With scanning threads the text is cut into slices, and a slice cut inside the
    # name that looks like an event boundary gives its unused text back.
    many = [dict(EVENTS[0], ts=i, name=f"op{i % 7}") for i in range(500)] + EVENTS
    path = write(tmp_path / "t.json", doc(many))
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", threads)
    monkeypatch.setattr(decode, "CHUNK_TARGET", chunk)
    monkeypatch.setattr(text_blocks, "READ_BLOCK", 97)
    model = build_model(str(path))
    assert len(model) == 504
    assert model.events["ts"][:500].tolist() == list(range(500))
    assert not model.partial


def test_empty_events_array(tmp_path: Path) -> None:
    model = build_model(str(write(tmp_path / "t.json", '{"traceEvents": [ ]}')))
    assert len(model) == 0 and not model.partial


@pytest.mark.parametrize("scanner", ["python", ""])  # "": the compiled scanner where built
def test_a_second_events_array_after_an_empty_one_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanner: str
) -> None:
    # A header written back with its `"traceEvents": []` and the events after it, in two
    # gzip members: JSON's last key wins, so these are the trace's events, not damage.
    monkeypatch.setenv("KINETOSCOPE_SCANNER", scanner)
    head = '{"schemaVersion": 1, "distributedInfo": {"rank": 3}, "traceEvents": [], '
    body = '"traceEvents": [' + json.dumps(EVENTS)[1:] + "}"
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(head.encode()) + gzip.compress(body.encode()))
    model = build_model(str(path))
    assert len(model) == 4 and not model.partial and model.warnings == []
    assert model.header["distributedInfo"] == {"rank": 3}


def test_an_empty_events_array_before_the_key_holding_no_array_is_the_trace(
    tmp_path: Path,
) -> None:
    text = '{"traceEvents": [], "note": {"traceEvents": 1}}'
    model = build_model(str(write(tmp_path / "t.json", text)))
    assert len(model) == 0 and not model.partial


@pytest.mark.parametrize(
    ("text", "kind"),
    [("", "empty_file"), ("hello", "not_json"), ('{"a": 1}', "not_kineto"), ("   ", "empty_file")],
)
def test_unreadable_files_say_why(tmp_path: Path, text: str, kind: str) -> None:
    with pytest.raises(TraceDecodeError) as err:
        build_model(str(write(tmp_path / "t.json", text)))
    assert err.value.kind == kind
    assert err.value.message


def test_missing_closing_brackets_keeps_every_event(tmp_path: Path) -> None:
    text = doc().rstrip()
    cut = text[: text.rindex("]")].rstrip()
    model = build_model(str(write(tmp_path / "t.json", cut)))
    assert len(model) == 4
    assert model.partial and "not closed" in " ".join(model.warnings)


def test_cut_inside_an_event_keeps_the_events_before(tmp_path: Path) -> None:
    text = doc()
    cut = text[: text.index('"name": "[memory]"')]
    model = build_model(str(write(tmp_path / "t.json.gz", cut, gz=True)))
    assert model.names_of(np.arange(len(model))) == ["aten::add", 'k},{"odd": [1]']
    assert model.partial


def test_cut_gzip_stream(tmp_path: Path) -> None:
    data = gzip.compress(doc([dict(EVENTS[0], ts=i) for i in range(20000)]).encode())
    path = tmp_path / "t.json.gz"
    path.write_bytes(data[: len(data) * 6 // 10])
    model = build_model(str(path))
    assert 0 < len(model) < 20000
    assert model.partial and any("gzip" in w for w in model.warnings)


def test_repairs_are_reported(tmp_path: Path) -> None:
    text = doc().replace('"aten::add"', '"aten::\x01add"').replace('"Addr": 4096', '"Addr": N/A')
    model = build_model(str(write(tmp_path / "t.json", text.encode() + b"")))
    assert len(model) == 4
    assert model.names[model.events["name"][0]] == "aten:: add"
    assert model.memory["addr"].tolist() == [-1]
    assert len(model.warnings) == 2


def test_non_utf8_bytes_are_replaced(tmp_path: Path) -> None:
    raw = doc().encode().replace(b"aten::add", b"aten::\xe9add")
    model = build_model(str(write(tmp_path / "t.json", raw)))
    assert model.names[model.events["name"][0]] == "aten::\ufffdadd"


@pytest.mark.parametrize(
    "error",
    [
        UnicodeDecodeError("utf-8", b"\xe9add", 0, 1, "invalid continuation byte"),
        msgspec.DecodeError("Invalid UTF-8 encoded string"),
    ],
    ids=["before msgspec 0.23", "msgspec 0.23"],
)
def test_text_that_is_not_utf8_is_repaired_whichever_error_msgspec_raises(
    error: BaseException,
) -> None:
    # msgspec 0.23 stopped raising Python's UnicodeDecodeError for such text: its
    # DecodeError says no position, and the repair must still be tried.
    body = doc().encode().replace(b"aten::add", b"aten::\xe9add")
    assert event_text._repair_may_help(body, [error])


def test_odd_value_types_are_coerced(tmp_path: Path) -> None:
    odd = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": 5,
            "pid": "p",
            "tid": None,
            "ts": "7",
            "dur": [1],
            "args": {"External id": "0x10", "correlation": None},
        }
    ]
    model = build_model(str(write(tmp_path / "t.json", doc(odd))))
    assert model.names == ["5"]
    assert model.events["ts"].tolist() == [7.0]
    assert model.full_column("external_id").tolist() == [16]


# --- the real corpus ---------------------------------------------------------------


def _manifest() -> dict[str, dict[str, str]]:
    path = CORPUS / "MANIFEST.tsv"
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    head = lines[0].split("\t")
    return {row[0]: dict(zip(head, row)) for row in (line.split("\t") for line in lines[1:])}


@pytest.mark.parametrize("path", corpus_traces(), ids=lambda p: p.name)
def test_every_corpus_trace_loads_or_says_why(path: Path) -> None:
    rel = str(path.relative_to(CORPUS))
    facts = _manifest().get(rel, {})
    if facts.get("size_bytes") == "0":
        with pytest.raises(TraceDecodeError):
            build_model(str(path))
        return
    model = build_model(str(path))
    counts = dict(kv.split(":") for kv in facts.get("ph_counts", "-").split(";") if ":" in kv)
    if counts and facts.get("valid_json") == "y":
        # Every event but metadata is a row, nothing more, nothing less.
        assert len(model) == sum(int(v) for k, v in counts.items() if k != "M")
        assert not model.partial
    if "truncated" in rel:
        assert model.partial and len(model) > 0


def test_schema_variants_of_the_corpus() -> None:
    old = build_model(
        str(
            corpus_path(
                "pytorch-kineto/plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"
            )
        )
    )
    kinds = set(old.events["kind"].tolist())
    assert {Kind.CPU_OP, Kind.KERNEL, Kind.RUNTIME, Kind.MEMCPY, Kind.MEMSET} <= kinds
    modern = build_model(
        str(
            corpus_path("tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
        )
    )
    assert {Kind.PYTHON, Kind.DRIVER, Kind.GPU_USER_ANNOTATION, Kind.MEMORY} <= set(
        modern.events["kind"].tolist()
    )
    assert modern.time_origin_us == 1751410836000000000 / 1000
    compute = corpus_model("pytorch-kineto/tb_plugin/test/gpu_metrics_input.json")
    assert compute.device_properties()[0]["name"].startswith("Tesla V100")


def test_big_files_decode_in_this_process_unless_workers_are_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kinetoscope.ingest import build

    # Workers cost more CPU and memory than they save on the machines measured (see
    # PARALLEL_MIN_TEXT): they are opt-in, and only for big files.
    big, small = 4 << 30, build.PARALLEL_MIN_TEXT - 1
    monkeypatch.delenv("KINETOSCOPE_DECODE_PROCESSES", raising=False)
    assert build._parallel_workers(big) == 0
    monkeypatch.setenv("KINETOSCOPE_DECODE_PROCESSES", "2")
    assert build._parallel_workers(big) == 2
    assert build._parallel_workers(small) == 0


@dataclass
class SlicedInWorkers:
    """What the cutter of text slices for worker processes did."""

    cutters: int = 0  # files cut into slices (decoded in workers)
    sent: list[bytes] = field(default_factory=list)  # texts handed back to be cut again


@pytest.fixture
def sliced_in_workers(monkeypatch: pytest.MonkeyPatch) -> SlicedInWorkers:
    """Workers asked for, for files of any size, with small slices; counts the cutting."""
    from kinetoscope.ingest import build

    monkeypatch.setattr(decode, "CHUNK_TARGET", 700)
    monkeypatch.setattr(text_blocks, "INFLATE_BLOCK", 37)
    monkeypatch.setattr(build, "PARALLEL_MIN_TEXT", 0)
    monkeypatch.setenv("KINETOSCOPE_DECODE_PROCESSES", "2")
    # Without a pool, slice after slice in this thread (no scanning threads cutting).
    monkeypatch.setenv("KINETOSCOPE_SCAN_THREADS", "1")
    seen = SlicedInWorkers()
    real_pieces = build.iter_event_pieces

    class CountingPieces:
        def __init__(self, *args: object) -> None:
            seen.cutters += 1
            self.inner = real_pieces(*args)  # type: ignore[arg-type]

        def __next__(self) -> object:
            return next(self.inner)

        def send(self, text: bytes) -> object:
            seen.sent.append(text)
            return self.inner.send(text)

    monkeypatch.setattr(build, "iter_event_pieces", CountingPieces)
    return seen


def _tricky_trace(tmp_path: Path) -> Path:
    # Names that look like event boundaries make some cuts fall inside a string: those
    # slices hand their text back and it is cut again.
    tricky = [dict(EVENTS[1], name='k}, {"x', ts=i) for i in range(40)]
    many = [dict(EVENTS[0], ts=i, name=f"op{i % 7}") for i in range(400)] + tricky + EVENTS
    return write(tmp_path / "t.json.gz", doc(many), gz=True)


def _assert_same_model(parallel: TraceModel, sequential: TraceModel) -> None:
    assert len(parallel) == len(sequential) == 444
    for name in [*sequential.events, *sequential.sparse]:  # dense or sparse
        if name == "work_sig":  # a slice the scanner declined is read by msgspec: -1 there
            for model in (parallel, sequential):
                work_sig = model.full_column("work_sig")
                assert_work_sigs(work_sig, model.events["args_end"], model.args_blob)
            continue
        column = sequential.full_column(name)
        assert np.array_equal(
            column, parallel.full_column(name), equal_nan=column.dtype.kind == "f"
        )
    assert parallel.names == sequential.names
    assert parallel.header == sequential.header
    assert parallel.raw_args(441) == sequential.raw_args(441)
    assert not parallel.partial and parallel.warnings == []


def test_decoding_in_worker_processes_gives_the_same_model(
    tmp_path: Path, sliced_in_workers: SlicedInWorkers
) -> None:
    path = _tricky_trace(tmp_path)
    # No pool given (the owner of pools is the store's): in this process, whatever is set.
    sequential = build_model(str(path))
    assert sliced_in_workers.cutters == 0
    pools = WorkerPools(load_workers=0)
    try:
        parallel = build_model(str(path), decode_pool=pools.decode_processes)
    finally:
        pools.close(wait=True)
    assert sliced_in_workers.cutters == 1
    assert sliced_in_workers.sent, "no slice was cut inside a string: the test lost its point"
    _assert_same_model(parallel, sequential)


def test_the_store_decodes_in_the_processes_of_its_pools(
    tmp_path: Path, sliced_in_workers: SlicedInWorkers
) -> None:
    path = _tricky_trace(tmp_path)
    sequential = build_model(str(path))
    store = TraceStore(None)
    try:
        parallel = store.wait(str(path), timeout=120)
    finally:
        # Wait for the processes to stop: a process pool shut down without waiting can
        # leave the interpreter's exit hanging on its manager thread.
        store.pools.close(wait=True)
    assert sliced_in_workers.cutters == 1
    _assert_same_model(parallel, sequential)


def test_a_small_files_args_are_kept_in_memory_and_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "t.json", doc())
    in_memory = build_model(str(path))
    spilled = build_model(str(path), args_path=str(tmp_path / "args.bin"))
    monkeypatch.setattr(build, "ARGS_IN_MEMORY_MAX_FILE", path.stat().st_size - 1)
    mapped = build_model(str(path))
    assert isinstance(in_memory.args_blob, bytes)
    assert isinstance(spilled.args_blob, np.memmap) and isinstance(mapped.args_blob, np.memmap)
    rows = np.arange(len(in_memory))
    for other in (spilled, mapped):
        assert bytes(other.args_blob) == in_memory.args_blob
        assert [in_memory.raw_args(r) for r in rows] == [other.raw_args(r) for r in rows]
        assert [dict(a) for a in in_memory.args_of(rows, dict)] == [
            dict(a) for a in other.args_of(rows, dict)
        ]
    assert json.loads(in_memory.raw_args(0)) == EVENTS[0]["args"]


def _every_array_end(buf: bytes, body_start: int) -> list[tuple[int, int]]:
    """The candidates as one search of the last MB finds them, last first."""
    if buf[body_start : body_start + 1] == b"]":
        return [(body_start, body_start + 1)]
    tail = buf.rstrip()
    end = len(tail[:-1].rstrip()) if tail.endswith(b"}") else len(tail)
    base = max(body_start, end - (1 << 20))
    found = [(m.start() + 1, m.end()) for m in decode._ARRAY_END.finditer(buf, base, end)]
    return found[::-1][: decode.ARRAY_END_CANDIDATES]


def test_array_ends_are_found_from_the_end_as_asked() -> None:
    """The events array's closing candidates, searched in the last few KB first and then
    the last MB, are those one search of the last MB finds, in the same order, whether
    asked for one or all; a `}...]` cut by the first window's edge included."""
    window = decode.ARRAY_END_WINDOW
    head = b'{"traceEvents": ['
    event = b'{"ph": "X", "name": "a", "args": {"dims": [[1, 2], [3]]}}, '
    cases = [
        head + b"]}",  # an empty array
        head + event * 3 + b'{"ph": "i"}]}',  # a small file: one window
        head + event * 400 + b'{"ph": "i"}\n  ]\n}\n\n',  # blanks around the close
        # Candidates only before the first window: a `}` of the last event, then blanks
        # across the window's edge, then its `]`, then text with no candidate.
        head + event * 400 + b"{}" + b" " * window + b"]" + b"x" * 50 + b"}",
        # More than four candidates, some in the window and some before it.
        head + b"{}]" * 2000 + b"[{} ] " * 2 + b"}",
        # One candidate in the window, the next three before it.
        head + b"{}]" * 5 + b"x" * 2 * window + b"{}]}",
    ]
    for buf in cases:
        body_start = len(head)
        every = _every_array_end(buf, body_start)
        assert every, buf[-80:]
        assert list(decode._array_ends(buf, body_start)) == every
        assert next(decode._array_ends(buf, body_start)) == every[0]
    straddled = cases[3]
    ((last, close),) = _every_array_end(straddled, len(head))
    end = len(straddled[:-1].rstrip())
    assert last < end - window < close  # the `}` before the window, its `]` inside
