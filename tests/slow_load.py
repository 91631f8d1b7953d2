"""`python tests/slow_load.py GATE kinetoscope-args...`: the kinetoscope CLI in which the
load of every trace file whose path holds `/slow/` reads the first half of its bytes
(said through the store's progress) and then stalls until the file GATE exists: a cold
load as slow as a test wants, in a real server process. Everything else is the product."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from kinetoscope.__main__ import main
from kinetoscope.store import trace_store

_real_build = trace_store.build_model


def _gated_build(path: str, *args: Any, progress: Any = None, **kwargs: Any) -> Any:
    if "/slow/" in path.replace(os.sep, "/"):
        size = os.path.getsize(path)
        if progress is not None:
            progress(size // 2, size)
        while not os.path.exists(GATE):
            time.sleep(0.02)
    return _real_build(path, *args, progress=progress, **kwargs)


if __name__ == "__main__":
    GATE = sys.argv[1]
    trace_store.build_model = _gated_build  # type: ignore[assignment]
    sys.exit(main(sys.argv[2:]))
