"""One way in for every door: the TensorBoard routes, `kinetoscope report` / `diff` and the
notebook find runs, workers and spans through `api/resolve`, so the same bad names give the
same errors, word for word, and the same defaults."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kinetoscope
import pytest
from builders import TraceBuilder
from kinetoscope.api.resolve import NotFound, known
from kinetoscope.cli.main import EXIT_LOAD, main

BAD_NAMES = [
    # (run, worker, span) → the message every door gives
    (("nope", None, None), "no run named 'nope' (known: job/a, job/b)"),
    (("job/a", "nope", None), "no worker 'nope' in run 'job/a' (known: worker0, worker1)"),
    (("job/a", "worker1", "9"), "no span '9' for worker 'worker1' in run 'job/a' (known: 1, 2)"),
]


def make_logdir(root: Path) -> Path:
    for run, workers in (("job/a", ("worker0", "worker1")), ("job/b", ("worker0",))):
        for worker in workers:
            for span, stamp in (("1", 100), ("2", 200)):
                t = TraceBuilder()
                t.step(int(span), 0, 100)
                op = t.op("aten::mm", 10, 50)
                t.launch(20, 5, op, gpu_ts=30, gpu_dur=40)
                folder = root / run
                folder.mkdir(parents=True, exist_ok=True)
                t.write(folder / f"{worker}.{stamp}.pt.trace.json.gz", gz=True)
    return root


def route_error(client: Any, run: str, worker: str | None, span: str | None) -> tuple[int, str]:
    params = {k: v for k, v in (("run", run), ("worker", worker), ("span", span)) if v}
    response = client.get("overview", **params)
    text = response.get_data(as_text=True)
    message = json.loads(text)["error"]["message"]
    # The route names the HTTP status first, as TensorBoard does ("Not found: ...").
    return response.status_code, message.removeprefix("Not found: ")


def cli_error(logdir: Path, run: str, worker: str | None, span: str | None, capsys: Any) -> str:
    argv = ["report", str(logdir), "--run", run, "--format", "json", "--no-cache"]
    argv += ["--worker", worker] if worker else []
    argv += ["--span", span] if span else []
    assert main(argv) == EXIT_LOAD
    return str(capsys.readouterr().err)


def notebook_error(logdir: Path, run: str, worker: str | None, span: str | None) -> str:
    with pytest.raises(NotFound) as raised:
        opened = kinetoscope.open(logdir, run=run, cache=False)
        with opened:
            opened.trace(worker, span)
    return str(raised.value)


@pytest.mark.parametrize(("names", "message"), BAD_NAMES)
def test_every_door_gives_the_same_error(
    tmp_path: Path,
    plugin_client: Callable[[Path], Any],
    capsys: pytest.CaptureFixture[str],
    names: tuple[str, str | None, str | None],
    message: str,
) -> None:
    logdir = make_logdir(tmp_path / "logs")
    client = plugin_client(logdir)
    assert route_error(client, *names) == (404, message)
    assert message in cli_error(logdir, *names, capsys)
    assert notebook_error(logdir, *names) == message


def test_every_door_defaults_to_the_first_worker_and_span(
    tmp_path: Path, plugin_client: Callable[[Path], Any], capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = make_logdir(tmp_path / "logs")
    client = plugin_client(logdir)
    status = client.wait_ready("job/a", "worker0")
    assert (status["worker"], status["span"]) == ("worker0", "1")
    by_route = client.json("overview", run="job/a")  # no worker, no span named
    assert main(["report", str(logdir), "--run", "job/a", "--format", "json", "--no-cache"]) == 0
    by_cli = json.loads(capsys.readouterr().out)["overview"]
    with kinetoscope.open(logdir, run="job/a", cache=False) as run:
        trace = run.trace()
        assert (trace.worker, trace.span) == ("worker0", "1")
    assert by_route == by_cli


def test_a_missing_run_parameter_is_a_bad_request(
    tmp_path: Path, plugin_client: Callable[[Path], Any]
) -> None:
    client = plugin_client(make_logdir(tmp_path / "logs"))
    response = client.get("overview")
    assert response.status_code == 400
    assert "missing parameter: run" in response.get_data(as_text=True)


def test_known_names_are_capped() -> None:
    assert known([]) == "none"
    assert known(str(i) for i in range(25)).endswith("19 and 5 more")
