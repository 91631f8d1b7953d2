"""Count the walk of one request through the floors (issue 45: "down and back up once").

Traces, with `sys.setprofile` on the asking thread, one warm HTTP request (`/operators`
through TensorBoard's WSGI app and werkzeug's test client, as the tests drive the plugin)
and one warm `kinetoscope report --view operators --format json` (the disk cache and the
imports already made by a first run, so the walk is the doors' and not the analysis's).

The walk is the sequence of places the innermost product frame is in, each change one
step: a door's or api's file is a place of its own; every floor below api (store,
ingest, model, analysis, trace_view) is one place, as are code outside the product
(the standard library, msgspec, werkzeug) and a module's import, which are not counted.
Printed per walk:

- `steps`: changes of place;
- `re-entries`: steps into a place the walk was in before;
- `door re-entries`: steps from api or below back up into a door's file (one is the
  goal: the door calls down, and the answer comes back up once).

Run it from a checkout: `.venv/bin/python bench/walk.py` (needs the corpus beside it).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
TRACE = "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
DOORS = ("serve", "cli", "notebook", "mcp")
IMPORT = "<import>"


def place(filename: str) -> str | None:
    """A door's or api's file, a lower floor, or None outside the product."""
    marker = f"{os.sep}tb_plugin{os.sep}"
    if marker not in filename:
        return None
    rel = filename.split(marker, 1)[1]
    floor = rel.split(os.sep, 1)[0]
    if floor in DOORS or floor == "api":
        return rel
    return floor if os.sep in rel else None


def walk(fn: Callable[[], Any]) -> list[str]:
    """The places `fn`'s call walks through, in order (consecutive repeats merged)."""
    stack: list[str | None] = []
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            stack.append(IMPORT if code.co_name == "<module>" else place(code.co_filename))
        elif event == "return":
            if stack:
                stack.pop()
        else:
            return
        if IMPORT in stack:
            return
        here = next((p for p in reversed(stack) if p is not None), None)
        if here is not None and (not seen or seen[-1] != here):
            seen.append(here)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def counts(places: list[str]) -> dict[str, int]:
    reentries = sum(1 for i, p in enumerate(places) if p in places[:i])
    up = 0
    for before, after in zip(places, places[1:]):
        if after.split(os.sep, 1)[0] in DOORS and before.split(os.sep, 1)[0] not in DOORS:
            up += 1
    return {"steps": max(len(places) - 1, 0), "re-entries": reentries, "door re-entries": up}


def logdir(root: Path) -> Path:
    source = HERE.parent.parent / "shared" / "corpus" / TRACE
    if not source.exists():
        source = HERE.parent / ".." / "shared" / "corpus" / TRACE
    run = root / "logs" / "run"
    run.mkdir(parents=True)
    shutil.copy(source, run / "worker0.1.pt.trace.json.gz")
    return root / "logs"


def http_walk(logs: Path) -> list[str]:
    from kinetoscope.serve.plugin import KinetoscopePlugin
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test as werkzeug_test
    from werkzeug import wrappers

    plugin = KinetoscopePlugin(base_plugin.TBContext(logdir=str(logs)))
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    query = {"run": "run", "worker": "worker0"}

    def ask() -> int:
        url = "/data/plugin/kinetoscope/operators"
        return int(client.get(url, query_string=query).status_code)

    deadline = time.monotonic() + 120
    while ask() != 200:  # the listing, the load and the view made before the walk
        if time.monotonic() > deadline:
            raise SystemExit("operators never answered 200")
        time.sleep(0.05)
    try:
        return walk(ask)
    finally:
        plugin.watcher.stop()
        plugin.store.close()


def cli_walk(logs: Path) -> list[str]:
    from kinetoscope.cli.main import main

    argv = ["report", str(logs), "--view", "operators", "--format", "json"]

    def report() -> None:
        with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())):
            main(argv)

    report()  # the disk cache and the imports made before the walk
    return walk(report)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["KINETOSCOPE_CACHE_DIR"] = str(root / "cache")
        logs = logdir(root)
        for name, places in (("HTTP /operators", http_walk(logs)), ("CLI report", cli_walk(logs))):
            said = ", ".join(f"{k} {v}" for k, v in counts(places).items())
            print(f"{name}: {said}")
            if "-v" in sys.argv:
                print("  " + " > ".join(places))


if __name__ == "__main__":
    main()
