"""Discovery of TORCH_TRACE compile logs: in a run folder or its `torch_trace/` subfolder,
plain or gzipped, rank-suffixed for multi-rank runs, local or in an object store (a real
S3 API: moto's server, as tests/test_cloud_logdir.py), and a symbolic link out of the
logdir never listed."""

from __future__ import annotations

import shutil
from pathlib import Path

from builders import TraceBuilder
from corpus import corpus_path
from kinetoscope.api.endpoints import run_pages
from kinetoscope.ingest.compile_log_files import compile_log_rank, is_compile_log
from kinetoscope.ingest.discovery import scan_logdir, target_runs
from test_cloud_logdir import bucket, s3_endpoint, upload  # noqa: F401 - fixtures

DATA = Path(__file__).parent / "data" / "compile_logs"


def _trace(path: Path) -> None:
    t = TraceBuilder()
    t.step(0, 0, 100)
    t.op("aten::mm", 10, 50)
    path.parent.mkdir(parents=True, exist_ok=True)
    t.write(path)


def _log(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _listing(root: Path) -> dict[str, tuple[list[str], list[tuple[str, int | None]]]]:
    return {
        r.name: ([w.name for w in r.workers], [(c.file, c.rank) for c in r.compile_logs])
        for r in scan_logdir(str(root))
    }


def test_names_torch_writes_and_their_ranks() -> None:
    assert is_compile_log("dedicated_log_torch_trace_8r8aevoe.log")
    assert is_compile_log("dedicated_log_torch_trace_rank_1_9x8fdf9q.log.gz")
    assert is_compile_log("dedicated_log_torch_trace_rank_2.log")  # tlparse's multi-rank input
    assert not is_compile_log("dedicated_log_torch_trace_x.txt")
    assert not is_compile_log("torch_trace.log")
    assert compile_log_rank("dedicated_log_torch_trace_rank_12_ab.log") == 12
    assert compile_log_rank("dedicated_log_torch_trace_rank_2.log") == 2
    assert compile_log_rank("dedicated_log_torch_trace_rankx_ab.log") is None
    assert compile_log_rank("dedicated_log_torch_trace_ab.log.gz") is None


def test_logs_beside_the_trace_or_in_its_torch_trace_folder(tmp_path: Path) -> None:
    _trace(tmp_path / "a" / "worker0.1.pt.trace.json")
    _log(tmp_path / "a" / "torch_trace" / "dedicated_log_torch_trace_rank_0_x.log")
    _log(tmp_path / "a" / "torch_trace" / "dedicated_log_torch_trace_rank_1_y.log.gz")
    _log(tmp_path / "a" / "torch_trace" / "notes.log")
    _trace(tmp_path / "b" / "worker0.1.pt.trace.json")
    _log(tmp_path / "b" / "dedicated_log_torch_trace_z.log")
    _trace(tmp_path / "c" / "worker0.1.pt.trace.json")
    listed = _listing(tmp_path)
    assert listed == {
        "a": (
            ["worker0"],
            [
                ("torch_trace/dedicated_log_torch_trace_rank_0_x.log", 0),
                ("torch_trace/dedicated_log_torch_trace_rank_1_y.log.gz", 1),
            ],
        ),
        "b": (["worker0"], [("dedicated_log_torch_trace_z.log", None)]),
        "c": (["worker0"], []),
    }
    runs = {r.name: r for r in scan_logdir(str(tmp_path))}
    assert "compile" in run_pages(runs["a"]) and "compile" not in run_pages(runs["c"])


def test_a_folder_of_logs_alone_is_a_run_and_torch_trace_is_no_run_of_its_own(
    tmp_path: Path,
) -> None:
    _log(tmp_path / "cold" / "torch_trace" / "dedicated_log_torch_trace_a.log")
    _log(tmp_path / "logs_only" / "dedicated_log_torch_trace_b.log")
    # a torch_trace folder with traces of its own keeps its logs
    _trace(tmp_path / "odd" / "torch_trace" / "worker0.1.pt.trace.json")
    _log(tmp_path / "odd" / "torch_trace" / "dedicated_log_torch_trace_c.log")
    listed = _listing(tmp_path)
    assert listed == {
        "cold": ([], [("torch_trace/dedicated_log_torch_trace_a.log", None)]),
        "logs_only": ([], [("dedicated_log_torch_trace_b.log", None)]),
        "odd/torch_trace": (["worker0"], [("dedicated_log_torch_trace_c.log", None)]),
    }


def test_the_recorded_cases_and_tlparse_multi_rank_inputs() -> None:
    listed = _listing(DATA)
    assert listed["two_ranks"][0] == ["worker0", "worker1"]
    assert [rank for _, rank in listed["two_ranks"][1]] == [0, 1]
    assert listed["cache_hit/cold"][0] == []  # the cold run's log, without its trace
    assert all(len(logs) == 1 for name, (_, logs) in listed.items() if name != "two_ranks")
    tlparse = corpus_path("tlparse/tests/inputs")
    runs = scan_logdir(str(tlparse))
    assert [(r.name, [c.rank for c in r.compile_logs]) for r in runs] == [
        ("multi_rank_schedule", [0, 1, 2])
    ]


def test_one_trace_named_keeps_the_logs_beside_it(tmp_path: Path) -> None:
    shutil.copytree(DATA / "graph_break", tmp_path / "graph_break")
    trace = next((tmp_path / "graph_break").glob("worker0*"))
    (run,) = target_runs(str(trace))
    assert [w.name for w in run.workers] == ["worker0"]
    assert len(run.compile_logs) == 1


def test_a_log_linked_in_from_outside_the_logdir_is_not_listed(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "dedicated_log_torch_trace_secret.log"
    _log(outside, "V1123 18:53:21.040000 1 a.py:1] {}\n")
    logdir = tmp_path / "logdir"
    _trace(logdir / "run" / "worker0.1.pt.trace.json")
    (logdir / "run" / "torch_trace").mkdir()
    (logdir / "run" / "torch_trace" / "dedicated_log_torch_trace_x.log").symlink_to(outside)
    (run,) = scan_logdir(str(logdir))
    assert run.compile_logs == ()


def test_an_object_store_lists_them_as_a_disk_does(tmp_path: Path, bucket: str) -> None:  # noqa: F811
    local = tmp_path / "logs"
    shutil.copytree(DATA / "two_ranks", local / "two_ranks")
    shutil.copytree(DATA / "cache_hit", local / "cache_hit")
    upload(local, f"{bucket}/logs")
    remote = {
        r.name: [(c.file, c.rank, c.size) for c in r.compile_logs]
        for r in scan_logdir(f"{bucket}/logs")
    }
    here = {
        r.name: [(c.file, c.rank, c.size) for c in r.compile_logs] for r in scan_logdir(str(local))
    }
    assert remote == here
    assert set(remote) == {"two_ranks", "cache_hit", "cache_hit/cold"}


def test_the_compile_view_of_an_object_store_run_is_the_local_one(
    tmp_path: Path,
    bucket: str,  # noqa: F811
) -> None:
    from test_compile_view import compile_json

    local = tmp_path / "logs"
    shutil.copytree(DATA / "recompile_value", local / "value")
    upload(local, f"{bucket}/logs")
    remote = compile_json(scan_logdir(f"{bucket}/logs"), "value")
    here = compile_json(scan_logdir(str(local)), "value")
    assert remote == here
    assert remote["alignments"][0]["checked"] > 0  # its trace read from the store too
