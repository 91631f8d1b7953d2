"""Bounds on what one trace load may cost, read from the environment at each load.

A hostile or broken file (a gzip bomb, a value gigabytes long, a FIFO) must end in a
clear per-file error or a partial load, never in a loader that runs forever.
"""

from __future__ import annotations

import os


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def max_text_bytes() -> int:
    """Decompressed text read per file (KINETOSCOPE_MAX_TEXT_GB, default 64)."""
    return int(_env_float("KINETOSCOPE_MAX_TEXT_GB", 64) * (1 << 30))


def max_event_bytes() -> int:
    """Text without an event boundary held at once (KINETOSCOPE_MAX_EVENT_MB, default 256):
    bounds the memory of one load whatever the file holds."""
    return int(_env_float("KINETOSCOPE_MAX_EVENT_MB", 256) * (1 << 20))


def load_timeout_s() -> float:
    """Seconds one load may take before the file is marked failed
    (KINETOSCOPE_LOAD_TIMEOUT_S, default 900)."""
    return _env_float("KINETOSCOPE_LOAD_TIMEOUT_S", 900)


def slow_load_s() -> float:
    """Seconds after which a load stops holding a loader slot, so that the next trace
    starts (KINETOSCOPE_SLOW_LOAD_S, default 20)."""
    return _env_float("KINETOSCOPE_SLOW_LOAD_S", 20)
