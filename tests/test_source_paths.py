"""The `source_paths` route: relative stack-frame files of real traces resolved where the
answer is knowable (the recording interpreter's prefixes, the trace's own library folders,
the run's folder, KINETOSCOPE_SOURCE_ROOTS), and nothing probed outside `.py` files."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from corpus import corpus_path
from kinetoscope.handlers import add_python_path_prefixes, python_path_prefixes
from kinetoscope.ingest.build import build_model
from kinetoscope.trace_view.source_paths import source_paths
from kinetoscope.trace_view.workers import WorkerTrace

QWEN = "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
V100 = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)
torch = pytest.importorskip("torch")
# torch's own folder here: the corpus traces' relative `torch/...` frames exist under it.
TORCH_HOME = Path(torch.__file__).parent.parent


def _paths(path: Path) -> dict:
    return source_paths([WorkerTrace(None, build_model(str(path)))], {})


def test_a_real_trace_recorded_elsewhere_resolves_nothing_and_says_so(tmp_path: Path) -> None:
    run = tmp_path / "qwen"
    run.mkdir()
    shutil.copy(corpus_path(QWEN), run / "qwen.pt.trace.json.gz")
    view = _paths(run / "qwen.pt.trace.json.gz")
    assert view["resolved"] == {}
    assert "torch/nn/modules/linear.py" in view["unresolved"]
    assert "transformers/models/qwen2/modeling_qwen2.py" in view["unresolved"]
    assert view["unresolved_count"] >= len(view["unresolved"])
    assert view["roots"] == [{"path": str(run) + os.sep, "why": "run_folder"}]


def test_source_roots_resolve_the_frames_they_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINETOSCOPE_SOURCE_ROOTS", f"{tmp_path / 'absent'}{os.pathsep}{TORCH_HOME}")
    view = _paths(corpus_path(QWEN))
    linear = "torch/nn/modules/linear.py"
    assert view["resolved"][linear] == str(TORCH_HOME / "torch" / "nn" / "modules" / "linear.py")
    assert all(Path(p).is_file() for p in view["resolved"].values())
    # transformers is not installed here: it stays unresolved, as an absent root is unlisted.
    assert any(f.startswith("transformers/") for f in view["unresolved"])
    assert {"path": str(TORCH_HOME) + os.sep, "why": "source_roots"} in view["roots"]
    assert all(r["path"] != str(tmp_path / "absent") + os.sep for r in view["roots"])


def test_the_call_stack_arg_s_script_is_found_in_the_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "resnet"
    run.mkdir()
    shutil.copy(corpus_path(V100), run / "worker0.pt.trace.json.gz")
    (run / "resnet50_profiler_api.py").write_text("# the script\n")
    view = _paths(run / "worker0.pt.trace.json.gz")
    assert view["resolved"] == {"resnet50_profiler_api.py": str(run / "resnet50_profiler_api.py")}
    assert view["unresolved_count"] == 0


def test_library_folders_of_the_trace_s_absolute_frames(tmp_path: Path) -> None:
    site = tmp_path / "env" / "lib" / "python3.9" / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "mod.py").write_text("x = 1\n")
    (site / "pkg" / "data.txt").write_text("not source\n")
    (tmp_path / "secret.py").write_text("")

    def frame(ts: int, name: str) -> dict:
        return {
            "ph": "X",
            "cat": "python_function",
            "name": name,
            "pid": 1,
            "tid": 1,
            "ts": ts,
            "dur": 10,
        }

    events = [
        frame(0, f"{site}/pkg/__init__.py(1): <module>"),
        frame(20, "pkg/mod.py(3): f"),
        frame(40, "pkg/data.txt(1): g"),
        frame(60, "pkg/../../../../../../secret.py(1): h"),
    ]
    path = tmp_path / "run" / "w.pt.trace.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"traceEvents": events}))
    view = _paths(path)
    assert view["resolved"] == {"pkg/mod.py": str(site / "pkg" / "mod.py")}
    assert sorted(view["unresolved"]) == ["pkg/../../../../../../secret.py", "pkg/data.txt"]
    assert view["roots"][0] == {"path": str(site) + os.sep, "why": "trace_frames"}


def test_the_handler_appends_the_prefixes_as_a_last_key(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [], "traceName": "x"\n}\n')
    assert add_python_path_prefixes(str(trace))
    doc = json.loads(trace.read_text())
    assert doc["python_path_prefixes"] == python_path_prefixes()
    assert doc["traceName"] == "x"
    assert all(p.endswith(os.sep) for p in doc["python_path_prefixes"])
    broken = tmp_path / "cut.json"
    broken.write_text('{"traceEvents": [{"ph": "X"')
    assert not add_python_path_prefixes(str(broken))
    assert broken.read_text() == '{"traceEvents": [{"ph": "X"'


def test_a_trace_recorded_with_the_handler_resolves_torch_frames(tmp_path: Path) -> None:
    script = tmp_path / "record.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, torch
            from kinetoscope.handlers import tensorboard_trace_handler
            model = torch.nn.Linear(4, 4)
            with torch.profiler.profile(
                schedule=torch.profiler.schedule(wait=0, warmup=0, active=1),
                on_trace_ready=tensorboard_trace_handler(sys.argv[1], worker_name="w"),
                with_stack=True,
            ) as prof:
                for _ in range(2):
                    model(torch.ones(2, 4))
                    prof.step()
            """
        )
    )
    logdir = tmp_path / "logdir" / "run"
    subprocess.run([sys.executable, str(script), str(logdir)], check=True, capture_output=True)
    trace = sorted(logdir.glob("w.*.pt.trace.json.gz"))[0]
    with gzip.open(trace, "rt") as f:
        assert json.load(f)["python_path_prefixes"]
    view = _paths(trace)
    linear = "torch/nn/modules/linear.py"
    assert view["resolved"][linear] == str(TORCH_HOME / "torch" / "nn" / "modules" / "linear.py")
    assert view["resolved"]["record.py"] == str(script)
    assert view["roots"][0]["why"] == "recorded"
