"""TensorBoard with each request's server-side time and the GC's pauses kept, for
`load_tail.py`: run as TensorBoard's command (`python _tail_probe.py --logdir ...`); at
SIGTERM it writes them as JSON to the file TAIL_PROBE_OUT names, then exits.

Kept per request: werkzeug's `handle_one_request` (reading the request line to the last
byte written: what the server spends once the connection is accepted and its thread
runs), as (path, start, end, thread CPU s), `time.perf_counter` seconds (CLOCK_MONOTONIC:
the client's clock too). Per collection: (generation, start, end)."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import time
from typing import Any

from werkzeug import serving

REQUESTS: list[tuple[str, float, float, float]] = []
COLLECTIONS: list[tuple[int, float, float]] = []
_started: list[float] = [0.0]


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
    else:
        COLLECTIONS.append((int(info["generation"]), _started[0], time.perf_counter()))


_handle_one_request = serving.WSGIRequestHandler.handle_one_request


def _timed_handle(self: serving.WSGIRequestHandler) -> None:
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        _handle_one_request(self)
    finally:
        path = str(getattr(self, "path", ""))
        REQUESTS.append((path, start, time.perf_counter(), time.thread_time() - cpu))


def _dump(*_: Any) -> None:
    with open(os.environ["TAIL_PROBE_OUT"], "w", encoding="utf-8") as f:
        json.dump({"requests": REQUESTS, "collections": COLLECTIONS}, f)
    os._exit(0)


def main() -> None:
    gc.callbacks.append(_on_gc)
    serving.WSGIRequestHandler.handle_one_request = _timed_handle  # type: ignore[method-assign]
    signal.signal(signal.SIGTERM, _dump)
    from tensorboard.main import run_main

    sys.argv = ["tensorboard", *sys.argv[1:]]
    run_main()


if __name__ == "__main__":
    main()
