"""Bounds on what one trace load may cost, read from the environment at each load.

A hostile or broken file (a gzip bomb, a value gigabytes long, a FIFO) must end in a
clear per-file error or a partial load, never in a loader that runs forever.

Every numeric `KINETOSCOPE_*` setting is read by `env_number`: unset or empty means the
default; a value that is not a positive number is logged once as a warning and the
default is used (a typo in a setting never stops TensorBoard).
"""

from __future__ import annotations

import logging
import math
import os

log = logging.getLogger(__name__)
_warned: set[tuple[str, str]] = set()


def env_number(name: str, default: float) -> float:
    """The positive number in environment variable `name`, else `default`."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and value > 0:
        return value
    if (name, text) not in _warned:
        _warned.add((name, text))
        log.warning("kinetoscope: %s=%r is not a positive number; using %g", name, text, default)
    return default


def max_text_bytes() -> int:
    """Decompressed text read per file (KINETOSCOPE_MAX_TEXT_GB, default 64)."""
    return int(env_number("KINETOSCOPE_MAX_TEXT_GB", 64) * (1 << 30))


def max_event_bytes() -> int:
    """Text without an event boundary held at once (KINETOSCOPE_MAX_EVENT_MB, default 256):
    bounds the memory of one load whatever the file holds."""
    return int(env_number("KINETOSCOPE_MAX_EVENT_MB", 256) * (1 << 20))


def load_timeout_s() -> float:
    """Seconds one load may take before the file is marked failed
    (KINETOSCOPE_LOAD_TIMEOUT_S, default 900)."""
    return env_number("KINETOSCOPE_LOAD_TIMEOUT_S", 900)


def slow_load_s() -> float:
    """Seconds after which a load stops holding a loader slot, so that the next trace
    starts (KINETOSCOPE_SLOW_LOAD_S, default 20)."""
    return env_number("KINETOSCOPE_SLOW_LOAD_S", 20)


def max_snapshot_bytes() -> int:
    """Size of a memory snapshot file read at all (KINETOSCOPE_MAX_SNAPSHOT_MB, default
    512): a pickle decodes to about 11-12 times its size in Python objects (measured:
    94 MB took 1.1 GB of peak RSS to read and summarise), so the default bounds one read
    near 6 GB. The H100 test snapshot holds ~160 bytes per history entry, so torch's
    default history (100,000 entries) is some 16 MB."""
    return int(env_number("KINETOSCOPE_MAX_SNAPSHOT_MB", 512) * (1 << 20))


def snapshot_timeout_s() -> float:
    """Seconds one memory snapshot may take to read and summarise before its entry is an
    error of kind `timeout` (KINETOSCOPE_SNAPSHOT_TIMEOUT_S, default 600)."""
    return env_number("KINETOSCOPE_SNAPSHOT_TIMEOUT_S", 600)


def snapshot_work_per_byte() -> float:
    """Items (blocks, history entries, OOM frames) a snapshot may make its summary walk
    per byte of its file, beyond a floor of 100,000 (KINETOSCOPE_SNAPSHOT_WORK_PER_BYTE,
    default 2): an honest item takes a dozen bytes or more of the file; one list shared
    among many places multiplies the walk without growing the file."""
    return env_number("KINETOSCOPE_SNAPSHOT_WORK_PER_BYTE", 2)


def machine_memory_mb() -> float:
    """The machine's RAM in MiB (16 GiB where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 20)
    except (OSError, ValueError, AttributeError):  # not POSIX
        return 16384.0


# KINETOSCOPE_SERVER_MEMORY_MB, one number for the whole server, shared out: the models
# kept, the views computed at once, and each of the two loads that run at once. A part's
# own setting, where set, wins over its share.
SERVER_MEMORY = "KINETOSCOPE_SERVER_MEMORY_MB"
SERVER_SHARES = {"models": 0.4, "views": 0.3, "load": 0.15}


def server_share_mb(part: str, default_mb: float) -> float:
    """MiB of `part` (`SERVER_SHARES`) under KINETOSCOPE_SERVER_MEMORY_MB; `default_mb`
    when that is not set."""
    total = env_number(SERVER_MEMORY, 0.0)
    return total * SERVER_SHARES[part] if total > 0 else default_mb


def load_memory_bytes() -> int:
    """Memory one load may build up (its columns and its spilled args) before it stops
    with a `too_large` error (KINETOSCOPE_LOAD_MEMORY_MB; else its share of
    KINETOSCOPE_SERVER_MEMORY_MB; else a quarter of the machine's RAM: two loads run at
    once, and the models and views they make need room too)."""
    default = server_share_mb("load", machine_memory_mb() / 4)
    return int(env_number("KINETOSCOPE_LOAD_MEMORY_MB", default) * (1 << 20))


def max_open_slices() -> int:
    """Slices a Perfetto trace may hold begun and not yet ended at once
    (KINETOSCOPE_MAX_OPEN_SLICES, default 250,000): one per level of each thread's call
    stack, a few hundred deep at most, over thousands of threads. A file past it (a small
    gzip of millions of begins that never end) stops with `too_large` as it passes, not
    after gigabytes and minutes; each open slice also counts against the load memory cap."""
    return int(env_number("KINETOSCOPE_MAX_OPEN_SLICES", 250_000))


def max_args_bytes() -> int:
    """Event args one load may spill to disk (KINETOSCOPE_MAX_ARGS_MB, default the load
    memory cap): the spill file is memory-mapped and read by the views, so it competes
    for the same memory (the builder also counts it with the columns against the load
    memory cap); past it the load stops with a `too_large` error."""
    default = load_memory_bytes() / (1 << 20)
    return int(env_number("KINETOSCOPE_MAX_ARGS_MB", default) * (1 << 20))


DISK_RESERVE = 256 << 20  # left free on the spill's disk
FREE_DISK = "free disk"  # the bound `args_cap` names when the disk is the lowest


def args_cap(file_bytes: int, spill_dir: str | None) -> tuple[int, str]:
    """The bytes of args a load of a file of `file_bytes` may spill, and the setting or
    fact that bounds it: KINETOSCOPE_MAX_ARGS_MB; the args a file can honestly hold,
    KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE (default 200) times its size (the args are part
    of its text; real gzipped traces inflate 10-45x, a file of repeated bytes about
    1000x); and the free space of the spill's disk (`spill_dir`, None: in memory) less
    256 MB, read before the first write."""
    caps = [(max_args_bytes(), "KINETOSCOPE_MAX_ARGS_MB")]
    per_byte = env_number("KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE", 200)
    caps.append((int(per_byte * max(file_bytes, 1)), "KINETOSCOPE_MAX_ARGS_PER_FILE_BYTE"))
    if spill_dir is not None:
        try:
            disk = os.statvfs(spill_dir)
            caps.append((max(0, disk.f_bavail * disk.f_frsize - DISK_RESERVE), FREE_DISK))
        except OSError:  # not POSIX, or gone: the other caps hold
            pass
    return min(caps)
