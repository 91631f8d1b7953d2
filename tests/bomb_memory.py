"""Run by tests/test_perfetto_bombs.py in a process of its own: loads each bomb file given
(its path on the command line) one after another and prints, as JSON, how each ended and
the process's memory (/proc/self/status: VmRSS now, VmHWM the peak) before, at its end
and at the end of all. Standalone (`python tests/bomb_memory.py FILE...`) to measure by
hand under any KINETOSCOPE_* setting."""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def status_mb() -> dict[str, int]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(line.split()[1]) // 1024
    return out


def main(paths: list[str]) -> None:
    from kinetoscope.ingest.build import build_model
    from kinetoscope.ingest.text_blocks import TraceDecodeError

    def load(path: str) -> dict[str, object]:
        began = time.monotonic()
        outcome: dict[str, object]
        try:
            model = build_model(path)
            outcome = {"kind": "ready", "events": len(model), "partial": model.partial}
            outcome["warnings"] = model.warnings[:4]
            del model
        except TraceDecodeError as err:
            outcome = {"kind": err.kind, "message": err.message}
        outcome["seconds"] = round(time.monotonic() - began, 2)
        return outcome

    results: dict[str, object] = {"before": status_mb()}
    loads = []
    # In loader threads, as the store loads (each thread's malloc arena is its own).
    with ThreadPoolExecutor(2, thread_name_prefix="kinetoscope-load") as pool:
        for path in paths:
            outcome = pool.submit(load, path).result()
            outcome["memory"] = status_mb()
            loads.append(outcome)
    results["loads"] = loads
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
