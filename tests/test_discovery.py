"""Logdir scanning: runs, workers, spans, sniffing plain JSON, the watcher."""

from __future__ import annotations

import gzip
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from corpus import CORPUS
from kinetoscope.ingest.discovery import (
    Run,
    capture_files,
    find_span,
    scan_logdir,
    target_runs,
)
from kinetoscope.ingest.local_scan import Listed, LocalScan
from kinetoscope.ingest.sniff import looks_like_kineto_trace
from kinetoscope.ingest.watcher import LogdirWatcher

KINETO_BODY = b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]}'


def write(path: Path, data: bytes = KINETO_BODY, mtime_s: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    if mtime_s is not None:
        os.utime(path, (mtime_s, mtime_s))
    return path


def listing(runs: tuple[Run, ...]) -> list[tuple[str, list[tuple[str, list[tuple[str, str]]]]]]:
    return [
        (r.name, [(w.name, [(s.name, s.file) for s in w.spans]) for w in r.workers]) for r in runs
    ]


def test_scan_exact_listing(tmp_path: Path) -> None:
    write(tmp_path / "top.1.pt.trace.json")
    # Nested run, spans out of name order and a worker that sorts naturally.
    run_a = tmp_path / "exp" / "a"
    write(run_a / "worker0.200.pt.trace.json.gz")
    write(run_a / "worker0.1000.pt.trace.json.gz")  # numerically later than 200
    write(run_a / "worker0.pt.trace.json.gz")  # no timestamp: last
    write(run_a / "worker10.5.pt.trace.json.gz")
    write(run_a / "worker2.5.pt.trace.json.gz")
    write(run_a / "config.json", b'{"lr": 0.1}')  # not a trace
    write(run_a / "notes.txt", b"hello")
    write(run_a / ".worker0.300.pt.trace.json.gz.x-gz.tmp")  # being written
    # Plain rank files accepted only by content.
    ranks = tmp_path / "ranks"
    write(ranks / "rank-1.json.gz")
    write(ranks / "rank-0.json")
    write(ranks / "bare.json", b' [{"ph": "X", "name": "a"}]')
    write(ranks / "metrics.json.gz", b'{"acc": [1, 2]}')
    write(ranks / "empty.json", b"")
    # A 0-byte torch-style trace stays visible (as a broken worker).
    write(tmp_path / "broken" / "worker0.pt.trace.json", b"")
    # Folders without traces are not runs; hidden folders are skipped.
    write(tmp_path / "only_config" / "config.json", b"{}")
    write(tmp_path / ".git" / "worker0.1.pt.trace.json")

    runs = scan_logdir(str(tmp_path))
    assert listing(runs) == [
        (".", [("top", [("1", "top.1.pt.trace.json")])]),
        ("broken", [("worker0", [("1", "worker0.pt.trace.json")])]),
        (
            "exp/a",
            [
                (
                    "worker0",
                    [
                        ("1", "worker0.200.pt.trace.json.gz"),
                        ("2", "worker0.1000.pt.trace.json.gz"),
                        ("3", "worker0.pt.trace.json.gz"),
                    ],
                ),
                ("worker2", [("1", "worker2.5.pt.trace.json.gz")]),
                ("worker10", [("1", "worker10.5.pt.trace.json.gz")]),
            ],
        ),
        (
            "ranks",
            [
                ("bare", [("1", "bare.json")]),
                ("rank-0", [("1", "rank-0.json")]),
                ("rank-1", [("1", "rank-1.json.gz")]),
            ],
        ),
    ]
    span = runs[2].workers[0].spans[1]
    assert span.path == str(run_a / "worker0.1000.pt.trace.json.gz")
    assert os.path.isabs(span.path)
    assert span.timestamp == 1000
    assert span.size == (run_a / span.file).stat().st_size
    assert span.mtime_ns == (run_a / span.file).stat().st_mtime_ns
    assert runs[0].path == str(tmp_path)
    assert runs[1].workers[0].spans[0].size == 0


def test_spans_without_timestamps_ordered_by_mtime(tmp_path: Path) -> None:
    write(tmp_path / "w.pt.trace.json", mtime_s=2_000_000_000)
    write(tmp_path / "w.pt.trace.json.gz", mtime_s=1_000_000_000)
    (run,) = scan_logdir(str(tmp_path))
    assert [(s.name, s.file) for s in run.workers[0].spans] == [
        ("1", "w.pt.trace.json.gz"),
        ("2", "w.pt.trace.json"),
    ]


def test_find_span(tmp_path: Path) -> None:
    write(tmp_path / "r" / "worker0.1.pt.trace.json")
    write(tmp_path / "r" / "worker0.2.pt.trace.json")
    runs = scan_logdir(str(tmp_path))
    found = find_span(runs, "r", "worker0", "2")
    assert found is not None and found.file == "worker0.2.pt.trace.json"
    assert find_span(runs, "r", "worker0", "3") is None
    assert find_span(runs, "r", "worker1", "1") is None
    assert find_span(runs, "../r", "worker0", "1") is None


def test_sniff(tmp_path: Path) -> None:
    assert looks_like_kineto_trace(str(write(tmp_path / "a.json")))
    assert looks_like_kineto_trace(str(write(tmp_path / "b.json.gz")))
    assert not looks_like_kineto_trace(str(write(tmp_path / "c.json", b'{"a": 1}')))
    assert not looks_like_kineto_trace(str(write(tmp_path / "d.json", b"[1, 2, 3]")))
    assert not looks_like_kineto_trace(str(write(tmp_path / "e.json", b"")))
    assert looks_like_kineto_trace(str(write(tmp_path / "e.pt.trace.json", b"")))
    assert not looks_like_kineto_trace(str(write(tmp_path / "f.txt")))
    assert not looks_like_kineto_trace(str(tmp_path / "missing.json"))
    # "traceEvents" after 64 KiB of metadata is not looked for: the sniff stays cheap.
    late = b'{"meta": "' + b"x" * (70 * 1024) + b'", "traceEvents": []}'
    assert not looks_like_kineto_trace(str(write(tmp_path / "late.json", late)))


def test_sniff_tolerates_cut_gzip(tmp_path: Path) -> None:
    body = b'{"traceEvents": [' + b'{"ph": "X", "name": "op", "ts": 1},' * 5000
    cut = gzip.compress(body)[:2000]
    path = tmp_path / "cut.json.gz"
    path.write_bytes(cut)
    assert looks_like_kineto_trace(str(path))
    (tmp_path / "garbage.json.gz").write_bytes(b"not gzip at all")
    assert not looks_like_kineto_trace(str(tmp_path / "garbage.json.gz"))


def test_symlink_loop_and_unreadable_dir(tmp_path: Path) -> None:
    write(tmp_path / "run" / "worker0.1.pt.trace.json")
    (tmp_path / "run" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "dangling.pt.trace.json").symlink_to(tmp_path / "nowhere")
    locked = tmp_path / "locked"
    write(locked / "worker0.1.pt.trace.json")
    locked.chmod(0)
    try:
        runs = scan_logdir(str(tmp_path))
    finally:
        locked.chmod(0o755)
    names = [r.name for r in runs]
    assert "run" in names
    assert not any("loop" in n for n in names)
    if os.geteuid() != 0:  # root reads anything
        assert "locked" not in names


def test_missing_logdir(tmp_path: Path) -> None:
    assert scan_logdir(str(tmp_path / "nope")) == ()


def test_watcher_sees_new_span_and_run(tmp_path: Path) -> None:
    write(tmp_path / "r" / "worker0.1.pt.trace.json")
    watcher = LogdirWatcher(str(tmp_path), interval_s=0.05)
    first = watcher.runs()
    assert listing(first) == [("r", [("worker0", [("1", "worker0.1.pt.trace.json")])])]
    write(tmp_path / "r" / "worker0.2.pt.trace.json")
    write(tmp_path / "r2" / "worker0.1.pt.trace.json")
    assert watcher.runs() is first  # no rescan until asked or the thread runs
    runs = watcher.rescan()
    assert watcher.runs() is runs
    assert [(r.name, len(r.workers[0].spans)) for r in runs] == [("r", 2), ("r2", 1)]


def test_watcher_thread_rescans(tmp_path: Path) -> None:
    watcher = LogdirWatcher(str(tmp_path), interval_s=0.02)
    assert watcher.runs() == ()
    watcher.start()
    try:
        write(tmp_path / "late" / "worker0.1.pt.trace.json")
        for _ in range(250):
            if watcher.runs():
                break
            time.sleep(0.02)
        assert [r.name for r in watcher.runs()] == ["late"]
    finally:
        watcher.stop()


@pytest.mark.corpus
def test_scan_corpus_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    samples = CORPUS / "pytorch-kineto" / "tb_plugin" / "samples"
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    # Symlinked run folders (how users often assemble a logdir) and a copied one.
    (logdir / "resnet50_num_workers_0").symlink_to(samples / "resnet50_num_workers_0")
    (logdir / "cpu_rank").symlink_to(CORPUS / "hta" / "tests" / "data" / "cpu_only")
    (logdir / "sampled").symlink_to(CORPUS / "hta" / "tests" / "data" / "trace_filter")
    shutil.copytree(CORPUS / "derived" / "empty", logdir / "empty")
    shutil.copytree(CORPUS / "goldens", logdir / "goldens")  # answers, not traces
    # Folders linked in from outside are listed only with the opt-in (issue 44).
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    assert [r.name for r in scan_logdir(str(logdir))] == ["empty"]
    monkeypatch.setenv("KINETOSCOPE_FOLLOW_SYMLINKS", "1")
    assert listing(scan_logdir(str(logdir))) == [
        (
            "cpu_rank",
            [("rank-34.Jul_15_10_52_41", [("1", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")])],
        ),
        ("empty", [("empty", [("1", "empty.pt.trace.json")])]),
        (
            "resnet50_num_workers_0",
            [
                (
                    "worker0",
                    [
                        ("1", "worker0.1623143089861.pt.trace.json.gz"),
                        ("2", "worker0.1623143566756.pt.trace.json.gz"),
                    ],
                )
            ],
        ),
        (
            "sampled",
            [
                ("sampled_rank-0", [("1", "sampled_rank-0.json.gz")]),
                ("sampled_rank-1", [("1", "sampled_rank-1.json.gz")]),
            ],
        ),
    ]


@pytest.mark.corpus
def test_scan_whole_corpus_finds_every_trace(tmp_path: Path) -> None:
    runs = scan_logdir(str(CORPUS))
    listed = {os.path.relpath(s.path, CORPUS) for r in runs for w in r.workers for s in w.spans}
    manifest = (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]
    expected = {line.split("\t", 1)[0] for line in manifest if line.strip()}
    # A capture_traces/ folder beside a run's traces is no run: its traces are that run's
    # graph captures (capture_files); alone (sglang_decode) it is a run of its own.
    beside = {p for p in expected if "vllm_prefilldecode_piecewise/capture_traces/" in p}
    assert len(beside) == 1
    for path in beside:
        run_trace = CORPUS / path.split("/capture_traces/")[0] / "graph_execution.json.gz"
        assert [os.path.relpath(f, CORPUS) for f in capture_files(str(run_trace))] == [path]
    assert listed == expected - beside
    assert not any(r.name.startswith("goldens") for r in runs)


# rocprofv3's `--output-format json` file: one object under "rocprofiler-sdk-tool".
ROCPROF_BODY = (
    b'{"rocprofiler-sdk-tool": [{"metadata": {"pid": 4242, "command": ["python", "t.py"]},'
    b' "agents": [], "buffer_records": {"kernel_dispatch": []}}]}'
)


def test_rocprof_json_in_a_run_folder_and_passed_directly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rocprof JSON under its own name is not listed as a trace (it is not one), and
    both the CLI and the notebook say what it is instead of a bare "no trace files"."""
    import kinetoscope as ks
    from kinetoscope.cli.main import main

    folder = tmp_path / "rocprof_run"
    rocprof = write(folder / "4242_results.json", ROCPROF_BODY)
    write(folder / "config.json", b'{"lr": 0.1}')
    assert scan_logdir(str(folder)) == ()
    assert main(["report", str(folder)]) != 0
    assert capsys.readouterr().err.strip() == (
        f"kinetoscope: {folder}: no trace files found (4242_results.json: JSON but not a"
        " Kineto trace (rocprof output?); config.json: JSON but not a Kineto trace)"
    )
    assert main(["report", str(rocprof)]) != 0
    assert f"{rocprof}: JSON but not a Kineto trace (rocprof output?)" in capsys.readouterr().err
    with pytest.raises(
        FileNotFoundError, match=r"JSON but not a Kineto trace \(rocprof output\?\)"
    ):
        ks.open(rocprof)
    with pytest.raises(FileNotFoundError, match=r"4242_results.json: JSON but not a Kineto"):
        ks.open(folder)


def test_rocprof_json_under_a_torch_trace_name_says_so_when_loaded(tmp_path: Path) -> None:
    from kinetoscope.ingest.build import build_model
    from kinetoscope.ingest.text_blocks import TraceDecodeError

    path = write(tmp_path / "w.1.pt.trace.json", ROCPROF_BODY)
    with pytest.raises(TraceDecodeError, match=r"not a Kineto trace \(rocprof output\?\)"):
        build_model(str(path))


def test_watcher_stopped_does_not_start_again(tmp_path: Path) -> None:
    """A stop is final: a listing asked for in the background after the server stopped
    its watcher leaves no rescanning thread behind."""
    before = set(threading.enumerate())
    watcher = LogdirWatcher(str(tmp_path), interval_s=0.02)
    watcher.start()
    watcher.stop()
    watcher.start()
    left = [t for t in threading.enumerate() if t not in before and t.name.endswith("watcher")]
    assert not left


def named_file_folder(root: Path) -> Path:
    """A trace with its compile log (in `torch_trace/`), beside another trace and a
    capture folder, in a folder holding other runs' folders; the named trace's path."""
    trace = write(root / "worker0.1.pt.trace.json")
    write(root / "worker1.1.pt.trace.json")
    (root / "torch_trace").mkdir()
    (root / "torch_trace" / "dedicated_log_torch_trace_rank_0_x.log").write_text("")
    write(root / "capture_traces" / "graph_1.pt.trace.json")
    for i in range(3):
        write(root / f"other{i}" / "deeper" / "worker0.1.pt.trace.json")
    return trace


def test_a_trace_named_alone_lists_its_own_folder_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report FILE` (and the notebook's open) need the file's run, not every run beside
    it: a file in a folder of thousands of runs took seconds to list them all."""
    trace = named_file_folder(tmp_path / "logdir")
    listed: list[str] = []
    list_folder = LocalScan.folder

    def recorded(scan: LocalScan, folder: str) -> Listed:
        listed.append(os.path.relpath(folder, tmp_path / "logdir"))
        return list_folder(scan, folder)

    monkeypatch.setattr(LocalScan, "folder", recorded)
    (run,) = target_runs(str(trace))
    assert listed == [".", "torch_trace"]
    assert listing((run,)) == [(".", [("worker0", [("1", "worker0.1.pt.trace.json")])])]
    (log,) = run.compile_logs
    assert log.file == "torch_trace/dedicated_log_torch_trace_rank_0_x.log"
    assert len(capture_files(str(trace))) == 1
    # The logdir itself is still listed whole.
    assert [r.name for r in scan_logdir(str(tmp_path / "logdir"))][:2] == [".", "other0/deeper"]
