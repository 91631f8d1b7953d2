"""Files named by a trace's content, or by a setting, are read through the storage layer,
bounded (issue 44): an Inductor wrapper named in a trace's Python frames is read only
inside the trace's logdir or a folder of KINETOSCOPE_SOURCE_ROOTS, else the Kernels row
says why it was not (`wrapper_unread`) and its fused ops come from the kernel name, the
same through every door; a FIFO or an oversized file is never waited on or read whole."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kinetoscope
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.analysis.core.roofline import peaks as peaks_module
from kinetoscope.cli.main import main

HASH = "c" + "w" * 51  # a wrapper's stem, as Inductor names it
KERNEL = "triton_poi_fused_gelu_mul_0"
WRAPPER = (
    f"# kernel path: /tmp/torchinductor/ww/{HASH}.py\n"
    "# Topologically Sorted Source Nodes: [s, m], Original ATen: [aten.sigmoid, aten.mul]\n"
    f"{KERNEL} = async_compile.triton('x')\n"
)


def _logdir(tmp_path: Path, wrapper: Path) -> Path:
    """One trace whose Python frames name `wrapper` as the generated code that launched
    the kernel (its `kernel_hash` is the wrapper's kernel)."""
    t = TraceBuilder()
    t.python("model.py(40): forward", 1, 98)
    t.op("CompiledFunction", 3, 94)
    t.python(f"{wrapper}(300): call", 5, 90)
    ext = t.op(KERNEL, 10, 20, kernel_name=KERNEL, kernel_hash=HASH)
    t.launch(12, 2, ext, gpu_ts=30, gpu_dur=8, name=KERNEL)
    logdir = tmp_path / "logs"
    (logdir / "run").mkdir(parents=True)
    t.write(logdir / "run" / "w.1.pt.trace.json")
    return logdir


def _row(view: dict[str, Any]) -> dict[str, Any]:
    (row,) = [r for r in view["rows"] if r["name"] == KERNEL]
    return row


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in ("KINETOSCOPE_SOURCE_ROOTS", "KINETOSCOPE_MAX_SOURCE_MB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    monkeypatch.setenv("KINETOSCOPE_NO_CACHE", "1")
    yield monkeypatch


def _doors(logdir: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The Kernels row through the routes, the CLI and the notebook."""
    client = PluginClient(logdir)
    try:
        client.wait_ready("run", "w")
        http = _row(client.get("kernels", run="run", worker="w").get_json())
    finally:
        client.close()
    capsys.readouterr()
    assert main(["report", str(logdir), "--run", "run", "--format", "json", "--no-cache"]) == 0
    cli = _row(json.loads(capsys.readouterr().out)["kernels"])  # one worker: its views
    with kinetoscope.open(logdir, run="run", cache=False) as run:
        notebook = _row(run.trace("w").view("kernels"))
        frame = run.trace("w").kernels()
        cells = frame[frame["name"] == KERNEL].iloc[0]
        assert (cells["fused_ops_from"], cells["wrapper_unread"]) == (
            notebook["fused_ops_from"],
            notebook["wrapper_unread"],
        )
    return [http, cli, notebook]


def test_a_wrapper_outside_the_logdir_is_not_read(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    wrapper = outside / f"{HASH}.py"
    wrapper.write_text(WRAPPER)
    logdir = _logdir(tmp_path, wrapper)
    for row in _doors(logdir, capsys):
        assert row["fused_ops"] == ["aten::gelu", "aten::mul"]  # the kernel's name
        assert row["fused_ops_from"] == "kernel_name"
        assert "outside the logdir" in row["wrapper_unread"]
        assert "KINETOSCOPE_SOURCE_ROOTS" in row["wrapper_unread"]
    # The folder named on purpose: read, the ops of Inductor's own comment.
    clean_env.setenv("KINETOSCOPE_SOURCE_ROOTS", str(outside))
    for row in _doors(logdir, capsys):
        assert row["fused_ops"] == ["aten::sigmoid", "aten::mul"]
        assert (row["fused_ops_from"], row["wrapper_unread"]) == ("wrapper", None)


def test_a_wrapper_inside_the_logdir_is_read_bounded(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    inside = tmp_path / "logs" / "code"
    inside.mkdir(parents=True)
    wrapper = inside / f"{HASH}.py"
    wrapper.write_text(WRAPPER)
    logdir = _logdir(tmp_path, wrapper)
    with kinetoscope.open(logdir, run="run", cache=False) as run:
        row = _row(run.trace("w").view("kernels"))
    assert row["fused_ops"] == ["aten::sigmoid", "aten::mul"]
    clean_env.setenv("KINETOSCOPE_MAX_SOURCE_MB", "0.0001")  # 104 bytes: the wrapper is more
    with kinetoscope.open(logdir, run="run", cache=False) as run:
        row = _row(run.trace("w").view("kernels"))
    assert row["fused_ops_from"] == "kernel_name"
    assert "larger than" in row["wrapper_unread"]


def test_a_fifo_named_as_a_wrapper_is_not_waited_on(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    inside = tmp_path / "logs" / "code"
    inside.mkdir(parents=True)
    fifo = inside / f"{HASH}.py"
    os.mkfifo(fifo)
    logdir = _logdir(tmp_path, fifo)
    done: list[dict[str, Any]] = []

    def read() -> None:
        with kinetoscope.open(logdir, run="run", cache=False) as run:
            done.append(_row(run.trace("w").view("kernels")))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(60)
    assert done, "reading the wrapper waited on a FIFO"
    assert "not a regular file" in done[0]["wrapper_unread"]


def test_the_peaks_setting_is_read_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    huge = tmp_path / "peaks.json"
    huge.write_text(json.dumps({"devices": [], "pad": "x" * (peaks_module.MAX_USER_FILE)}))
    fifo = tmp_path / "peaks.fifo"
    os.mkfifo(fifo)
    caplog.set_level(logging.WARNING, logger=peaks_module.log.name)
    for path, said in ((huge, "larger than 4 MiB"), (fifo, "not a regular file")):
        monkeypatch.setenv(peaks_module.ENV, str(path))
        peaks_module._user_file.cache_clear()
        try:
            caplog.clear()
            assert peaks_module.peaks_key() == str(peaks_module.load("device_peaks")["version"])
            assert said in caplog.text
        finally:
            monkeypatch.delenv(peaks_module.ENV)
            peaks_module._user_file.cache_clear()
