"""Reading a CUDA caching allocator snapshot (`torch.cuda.memory._dump_snapshot`) safely.

The file is a pickle, and Python's `pickle` runs whatever its opcodes name: a global
(`os.system`) called by REDUCE, a class built by NEWOBJ/INST/OBJ, an extension code, a
persistent id. Every one of those reaches a callable only through `find_class` or
`persistent_load`, so an unpickler whose `find_class` and `persistent_load` always refuse
can build nothing but the opcodes' own values. Those are checked after the load: only dict,
list, tuple, str, bytes, int, float, bool and None pass (a set or bytearray is refused, as
is a container holding itself). Anything else is a `SnapshotError` for that file; nothing
in it is ever called.
"""

from __future__ import annotations

import contextlib
import gc
import io
import pickle
import threading
from collections.abc import Iterator
from typing import Any

from . import storage
from .limits import max_snapshot_bytes

PLAIN_LEAVES = (str, bytes, int, float, bool, type(None))
PROTOCOLS = (2, 3, 4, 5)
_PROTO = 0x80


class SnapshotError(Exception):
    """A snapshot file that cannot be read as plain data; the message says why."""


class _PlainUnpickler(pickle.Unpickler):
    """Builds opcode values only: every way to a callable is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(
            f"refused: the pickle names {module}.{name} (only plain data is read; "
            "nothing in the file is run)"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise SnapshotError("refused: the pickle holds a persistent id (only plain data is read)")


def read_snapshot(path: str) -> dict[str, Any]:
    """The snapshot at `path` as plain data, or SnapshotError (too big, unreadable, not a
    pickle of protocol 2-5, damaged, holding anything but plain data, not a snapshot)."""
    limit = max_snapshot_bytes()
    try:
        size = storage.stat(path).size
        if size > limit:
            raise SnapshotError(
                f"{size} bytes is over the snapshot limit of {limit} (KINETOSCOPE_MAX_SNAPSHOT_MB)"
            )
        with storage.open_binary(path) as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise SnapshotError(f"cannot read it: {exc}") from None
    if len(data) > limit:  # grew since the stat
        raise SnapshotError(f"over the snapshot limit of {limit} bytes")
    return decode_snapshot(data)


def decode_snapshot(data: bytes) -> dict[str, Any]:
    """`read_snapshot` of bytes already read."""
    _check_protocol(data)
    try:
        with collector_paused():
            value = _PlainUnpickler(io.BytesIO(data)).load()
    except SnapshotError:
        raise
    except RecursionError:
        raise SnapshotError("damaged: nested too deeply") from None
    except MemoryError:
        raise SnapshotError("too large to decode in memory") from None
    except Exception as exc:  # noqa: BLE001 - any failure of the decoder is a damaged file
        raise SnapshotError(f"damaged or truncated pickle: {type(exc).__name__}: {exc}") from None
    check_plain(value)
    if not isinstance(value, dict) or not (
        isinstance(value.get("segments"), list) or isinstance(value.get("device_traces"), list)
    ):
        raise SnapshotError(
            "not a memory snapshot: no `segments` or `device_traces` "
            "(torch.cuda.memory._dump_snapshot writes both)"
        )
    return value


_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = True


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while millions of dicts are built: each of its passes
    walks every object made so far (a third of the load time on a 20 MB snapshot), and
    plain data without cycles leaves it nothing to find. Counted, so that two loads in
    two threads turn it back on only when both are done."""
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
        _pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()


def _check_protocol(data: bytes) -> None:
    if not data:
        raise SnapshotError("empty file")
    if data[0] != _PROTO or len(data) < 2:
        raise SnapshotError("not a pickle of protocol 2-5 (torch writes protocol 2 or newer)")
    if data[1] not in PROTOCOLS:
        raise SnapshotError(f"pickle protocol {data[1]}: only protocols 2-5 are read")


def check_plain(value: Any) -> None:
    """SnapshotError unless `value` is plain data without cycles. Iterative (a deep file
    cannot exhaust the stack); a container shared by many (torch's frames are) is checked
    once, and leaves are checked where they stand, without a stack entry each."""
    if type(value) in _LEAVES:
        return
    _refuse_kind(value)
    done: set[int] = set()
    open_now: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, leaving = stack.pop()
        ident = id(item)
        if leaving:
            open_now.discard(ident)
            done.add(ident)
            continue
        if ident in done:
            continue
        if ident in open_now:
            raise SnapshotError("refused: a container holds itself")
        open_now.add(ident)
        stack.append((item, True))
        for child in item.values() if type(item) is dict else item:
            if type(child) in _LEAVES:
                continue
            _refuse_kind(child)
            stack.append((child, False))
        if type(item) is dict:
            for key in item:  # keys are hashable: leaves or tuples
                if type(key) not in _LEAVES:
                    _refuse_kind(key)
                    stack.append((key, False))


_LEAVES = frozenset(PLAIN_LEAVES)
_CONTAINERS = frozenset((dict, list, tuple))


def _refuse_kind(item: Any) -> None:
    if type(item) not in _CONTAINERS:
        raise SnapshotError(f"refused: the pickle builds a {type(item).__name__} (only plain data)")
