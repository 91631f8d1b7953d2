"""Symbolic links out of the logdir: a file link is listed and refused with a per-file error
by every door (routes, `kinetoscope report`, `kinetoscope.open`), a folder link is not
listed at all; both read only with KINETOSCOPE_FOLLOW_SYMLINKS=1 (issues 27, 44)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import kinetoscope
import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.api.resolve import NotFound
from kinetoscope.cli.main import EXIT_LOAD, main
from kinetoscope.ingest.discovery import scan_logdir
from kinetoscope.store.errors import LoadFailed

Make = Callable[[Path], PluginClient]


def _trace(path: Path) -> Path:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    path.parent.mkdir(parents=True, exist_ok=True)
    return t.write(path)


@pytest.fixture
def linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A logdir with a good run, a file link and a folder link leading outside it, and a
    link that stays inside (always followed)."""
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    monkeypatch.setenv("KINETOSCOPE_NO_CACHE", "1")
    outside = tmp_path / "outside"
    secret = outside / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("password=hunter2\n")
    _trace(outside / "theirs" / "worker0.1.pt.trace.json")
    logdir = tmp_path / "logdir"
    _trace(logdir / "run" / "good.1.pt.trace.json")
    (logdir / "run" / "passwd.1.pt.trace.json").symlink_to(secret)
    (logdir / "run" / "inside.1.pt.trace.json").symlink_to(logdir / "run" / "good.1.pt.trace.json")
    (logdir / "linked").symlink_to(outside / "theirs", target_is_directory=True)
    return logdir


def test_discovery_lists_file_links_out_and_no_folder_out(linked: Path) -> None:
    runs = {r.name: r for r in scan_logdir(str(linked))}
    assert sorted(runs) == ["run"]  # nothing of the folder outside: names nor sizes
    assert [w.name for w in runs["run"].workers] == ["good", "inside", "passwd"]
    passwd = runs["run"].workers[2].spans[0]
    assert passwd.size == len(str(linked.parent / "outside" / "secret.txt"))  # the link's


def test_routes_refuse_links_out(linked: Path, plugin_client: Make) -> None:
    client = plugin_client(linked)
    status = client.wait_ready("run", "passwd")
    assert "hunter2" not in json.dumps(status)
    assert (status["state"], status["error"]["kind"]) == ("error", "outside_logdir")
    assert "KINETOSCOPE_FOLLOW_SYMLINKS" in status["error"]["message"]
    download = client.get("download", run="run", worker="passwd", span="1")
    assert download.status_code == 422
    assert b"hunter2" not in download.get_data()
    assert client.get("overview", run="run", worker="passwd").status_code == 422
    assert client.get("status", run="linked", worker="worker0").status_code == 404
    # A neighbour and a link that stays inside the logdir load and download.
    assert client.wait_ready("run", "good")["state"] == "ready"
    assert client.wait_ready("run", "inside")["state"] == "ready"
    assert client.get("download", run="run", worker="inside", span="1").status_code == 200


def test_cli_refuses_links_out(linked: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["report", str(linked), "--run", "run", "--worker", "passwd", "--format", "json"])
    assert code == EXIT_LOAD
    captured = capsys.readouterr()
    assert "outside the logdir" in captured.err + captured.out
    assert "hunter2" not in captured.err + captured.out
    assert main(["report", str(linked), "--run", "linked", "--format", "json"]) != 0
    assert "worker0" not in capsys.readouterr().out


def test_notebook_refuses_links_out(linked: Path) -> None:
    with kinetoscope.open(linked, run="run", cache=False) as run:
        trace = run.trace("passwd")
        assert trace.status()["error"]["kind"] == "outside_logdir"
        with pytest.raises(LoadFailed, match="outside the logdir"):
            _ = trace.model
        assert len(run.trace("good").model) > 0
    with pytest.raises(NotFound, match="no run named 'linked'"):
        kinetoscope.open(linked, run="linked", cache=False)


def test_opt_in_follows_links(
    linked: Path, plugin_client: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINETOSCOPE_FOLLOW_SYMLINKS", "1")
    client = plugin_client(linked)
    assert client.wait_ready("linked", "worker0")["state"] == "ready"
    download = client.get("download", run="linked", worker="worker0", span="1")
    assert download.status_code == 200
    assert json.loads(download.get_data())["traceEvents"]
    # The link to a non-trace is read as what it is: not a trace, and never downloaded.
    assert client.wait_ready("run", "passwd")["state"] == "error"
    assert client.get("download", run="run", worker="passwd", span="1").status_code == 422
    with kinetoscope.open(linked, run="linked", cache=False) as run:
        assert len(run.trace("worker0").model) > 0
    assert main(["report", str(linked), "--run", "linked", "--format", "json"]) == 0
