"""The atomic trace handler, driven by a real torch profiler."""

from __future__ import annotations

import errno
import gzip
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kinetoscope.handlers import TraceWriteError, tensorboard_trace_handler
from kinetoscope.ingest.naming import parse_trace_name

# torch warns once per process that repeat>1 clears events between cycles; that is intended.
pytestmark = pytest.mark.filterwarnings("ignore:.*Profiler clears events:UserWarning")


def profile_steps(handler: Any, steps: int = 5) -> None:
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16)
    # wait=0, warmup=1, active=1, repeat=2: a trace after steps 2 and 4, none after.
    sched = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched, on_trace_ready=handler
    ) as prof:
        for _ in range(steps):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
            prof.step()


def profile_once(handler: Any) -> None:
    """Profile a few steps with no schedule: the one trace is written when the block exits.

    Error tests use this path. When on_trace_ready raises inside ``prof.step()``, torch
    2.x skips ``prepare_trace`` and then stops the old profiler twice on ``__exit__``,
    which segfaults (torch's own handler crashes the same way); an error raised from
    ``__exit__`` propagates cleanly.
    """
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(8, 8)
    x = torch.randn(4, 8)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], on_trace_ready=handler
    ) as prof:
        for _ in range(3):
            model(x).sum().backward()
            prof.step()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_gzip_traces(tmp_path: Path) -> None:
    out = tmp_path / "logdir" / "run"  # created by the handler
    before = int(time.time() * 1000)
    profile_steps(tensorboard_trace_handler(str(out), worker_name="worker0"))
    after = int(time.time() * 1000)
    files = sorted(os.listdir(out))
    assert len(files) == 2, files
    assert leftovers(out) == []
    stamps = []
    for name in files:
        parsed = parse_trace_name(name)
        assert parsed is not None
        assert parsed.worker == "worker0" and parsed.gzip and parsed.torch_style
        assert parsed.timestamp is not None and before <= parsed.timestamp <= after + 10
        assert name == f"worker0.{parsed.timestamp}.pt.trace.json.gz"
        stamps.append(parsed.timestamp)
        with gzip.open(out / name, "rb") as f:
            trace = json.load(f)
        names = {e.get("name", "") for e in trace["traceEvents"]}
        assert any(n.startswith("ProfilerStep#") for n in names)
    assert stamps[0] != stamps[1]


def test_plain_json_and_default_worker(tmp_path: Path) -> None:
    profile_steps(tensorboard_trace_handler(str(tmp_path), use_gzip=False))
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2, files
    for name in files:
        parsed = parse_trace_name(name)
        assert parsed is not None and not parsed.gzip
        assert parsed.worker.endswith(f"_{os.getpid()}")
        assert name.endswith(".pt.trace.json")
        with open(tmp_path / name, "rb") as f:
            assert "traceEvents" in json.load(f)


def test_creating_handler_does_not_import_torch() -> None:
    code = (
        "import sys; from kinetoscope.handlers import tensorboard_trace_handler as t; "
        "t('unused-dir'); assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dir_is_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "run"
    with pytest.raises(TraceWriteError) as info:
        profile_once(tensorboard_trace_handler(str(target), worker_name="w", strict=True))
    assert isinstance(info.value, OSError)
    assert str(target) in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["afile"]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores permissions"
)
def test_read_only_dir(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(TraceWriteError) as info:
            profile_once(tensorboard_trace_handler(str(ro), worker_name="w", strict=True))
        assert str(ro) in str(info.value)
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


def test_export_failure_leaves_nothing(tmp_path: Path) -> None:
    class HalfWriter:
        """Writes part of a trace, then fails like a full disk would."""

        def export_chrome_trace(self, path: str) -> None:
            with open(path, "w") as f:
                f.write('{"traceEvents": [')
            raise OSError(28, "No space left on device")

    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w", strict=True)
    with pytest.raises(TraceWriteError, match="No space left") as info:
        handler(HalfWriter())
    assert info.value.errno == errno.ENOSPC
    assert "errno ENOSPC, 17 bytes written" in str(info.value)
    assert os.listdir(tmp_path) == []


def test_failure_is_logged_not_raised_by_default(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class FullDisk:
        def export_chrome_trace(self, path: str) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w")
    with caplog.at_level(logging.ERROR, logger="kinetoscope.handlers"):
        assert handler(FullDisk()) is None
    assert "errno ENOSPC" in caplog.text and str(tmp_path) in caplog.text
    assert os.listdir(tmp_path) == []


def test_interrupted_rename_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError("simulated crash during rename")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(TraceWriteError, match="simulated crash"):
        profile_once(tensorboard_trace_handler(str(tmp_path), worker_name="w", strict=True))
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_same_millisecond_does_not_overwrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Writer:
        def export_chrome_trace(self, path: str) -> None:
            Path(path).write_text('{"traceEvents": []}')

    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w", use_gzip=False)
    first, second = handler(Writer()), handler(Writer())
    assert first != second
    assert sorted(os.listdir(tmp_path)) == [
        "w.1700000000000.pt.trace.json",
        "w.1700000000001.pt.trace.json",
    ]


def test_bad_worker_name_rejected_early(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        tensorboard_trace_handler(str(tmp_path), worker_name="a/b")
