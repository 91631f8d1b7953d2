"""Reading a CUDA caching allocator snapshot (`torch.cuda.memory._dump_snapshot`) safely.

The file is a pickle, and Python's `pickle` runs whatever its opcodes name: a global
(`os.system`) called by REDUCE, a class built by NEWOBJ/INST/OBJ, an extension code, a
persistent id. Every one of those reaches a callable only through `find_class` or
`persistent_load`, so an unpickler whose `find_class` and `persistent_load` always refuse
can build nothing but the opcodes' own values. Those are checked after the load: only dict,
list, tuple, str, bytes, int, float, bool and None pass (a set or bytearray is refused, as
is a container holding itself). Anything else is a `SnapshotError` for that file; nothing
in it is ever called.

The unpickler gets the file's bytes only once `snapshot_guard` has walked their opcodes:
a memo index beyond the file, a dict keyed by values that can be made to collide, a set
and every opcode that reaches code are refused before the unpickler runs them, and a read
past its deadline stops at the next chunk (`SnapshotError.kind` says which way it failed).
"""

from __future__ import annotations

import contextlib
import gc
import io
import pickle
import sys
import threading
from collections.abc import Iterator
from typing import Any

from . import storage
from .limits import max_snapshot_bytes
from .snapshot_guard import CHUNK, OpcodeGuard, SnapshotError

__all__ = [
    "SnapshotError",
    "check_plain",
    "collector_paused",
    "decode_plain",
    "decode_snapshot",
    "read_snapshot",
]

PLAIN_LEAVES = (str, bytes, int, float, bool, type(None))
PROTOCOLS = (2, 3, 4, 5)
_PROTO = 0x80


class _PlainUnpickler(pickle.Unpickler):
    """Builds opcode values only: every way to a callable is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(
            f"refused: the pickle names {module}.{name} (only plain data is read; "
            "nothing in the file is run)",
            "refused",
        )

    def persistent_load(self, pid: Any) -> Any:
        raise SnapshotError(
            "refused: the pickle holds a persistent id (only plain data is read)", "refused"
        )


def read_snapshot(path: str, deadline: float | None = None) -> dict[str, Any]:
    """The snapshot at `path` as plain data, or SnapshotError (too big, unreadable, not a
    pickle of protocol 2-5, damaged, holding anything but plain data or keys that can
    collide, not a snapshot, or still reading at `deadline`, a `time.monotonic()`)."""
    limit = max_snapshot_bytes()
    try:
        size = storage.stat(path).size
        if size > limit:
            raise SnapshotError(
                f"{size} bytes is over the snapshot limit of {limit} (KINETOSCOPE_MAX_SNAPSHOT_MB)",
                "too_large",
            )
        with storage.open_binary(path) as f:
            # Unpickled as it is read: the file's bytes are never all held beside what
            # they decode to (a tenth of the peak memory of a big snapshot).
            raw = io.BufferedReader(_Raw(f), buffer_size=1 << 20)
            _check_protocol(raw.peek(2)[:2])
            return _decode(GuardedStream(raw, size, OpcodeGuard(deadline, size)))
    except OSError as exc:
        raise SnapshotError(f"cannot read it: {exc}", "unreadable") from None


class _Raw(io.RawIOBase):
    """Any binary file (a remote one has `read` only) as a raw stream to buffer."""

    def __init__(self, f: Any) -> None:
        self._f = f

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = self._f.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


class GuardedStream:
    """The first `size` bytes of a binary stream, each checked by an `OpcodeGuard`
    before it is returned. `peek` gives the unpickler only bytes already checked (it
    reads ahead from them and skips them with `read` later); no read goes past `size`,
    so a damaged length in the pickle asks for what is there, not for gigabytes."""

    def __init__(self, stream: Any, size: int, guard: OpcodeGuard) -> None:
        self._stream, self._left, self.guard = stream, size, guard
        self._buf = b""
        self._at = 0

    def _fill(self, wanted: int) -> None:
        """At least `wanted` checked bytes buffered, or all that is left."""
        have = len(self._buf) - self._at
        while have < wanted and self._left > 0:
            chunk = self._stream.read(min(max(wanted - have, CHUNK), self._left))
            if not chunk:
                self._left = 0
                break
            self._left -= len(chunk)
            self.guard.feed(chunk)
            self._buf = self._buf[self._at :] + chunk
            self._at = 0
            have = len(self._buf)

    def _take(self, n: int) -> bytes:
        out = self._buf[self._at : self._at + n]
        self._at += len(out)
        return out

    def read(self, n: int = -1) -> bytes:
        self._fill(n if n >= 0 else 1 << 62)
        return self._take(n if n >= 0 else len(self._buf))

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        while True:
            end = self._buf.find(b"\n", self._at)
            if end >= 0:
                return self._take(end + 1 - self._at)
            before = len(self._buf) - self._at
            self._fill(before + 1)
            if len(self._buf) - self._at == before:
                return self._take(before)

    def peek(self, n: int = 0) -> bytes:
        self._fill(1)
        return self._buf[self._at :]


def decode_snapshot(data: bytes, deadline: float | None = None) -> dict[str, Any]:
    """`read_snapshot` of bytes already read."""
    _check_protocol(data[:2])
    guard = OpcodeGuard(deadline, len(data))
    return _decode(GuardedStream(io.BytesIO(data), len(data), guard))


def decode_plain(data: bytes, deadline: float | None = None) -> Any:
    """Plain data (dicts, lists, tuples, sets, text, bytes, numbers) from a pickle's bytes,
    read as a snapshot is (nothing in it run, its opcodes guarded), whatever it holds; or
    SnapshotError. For small side files: torch's CUDA-graph kernel annotations."""
    _check_protocol(data[:2])
    guard = OpcodeGuard(deadline, len(data))
    return _plain(GuardedStream(io.BytesIO(data), len(data), guard))


def _plain(stream: Any) -> Any:
    try:
        with collector_paused():
            value = _PlainUnpickler(stream).load()
    except (SnapshotError, OSError):
        raise
    except RecursionError:
        raise SnapshotError("damaged: nested too deeply", "damaged") from None
    except MemoryError:
        raise SnapshotError("too large to decode in memory", "too_large") from None
    except Exception as exc:  # noqa: BLE001 - any failure of the decoder is a damaged file
        raise SnapshotError(
            f"damaged or truncated pickle: {type(exc).__name__}: {exc}", "damaged"
        ) from None
    check_plain(value)
    return value


def _decode(stream: Any) -> dict[str, Any]:
    value = _plain(stream)
    if not isinstance(value, dict) or not (
        isinstance(value.get("segments"), list) or isinstance(value.get("device_traces"), list)
    ):
        raise SnapshotError(
            "not a memory snapshot: no `segments` or `device_traces` "
            "(torch.cuda.memory._dump_snapshot writes both)",
            "not_snapshot",
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
        raise SnapshotError("empty file", "not_pickle")
    if data[0] != _PROTO or len(data) < 2:
        raise SnapshotError(
            "not a pickle of protocol 2-5 (torch writes protocol 2 or newer)", "not_pickle"
        )
    if data[1] not in PROTOCOLS:
        raise SnapshotError(f"pickle protocol {data[1]}: only protocols 2-5 are read", "not_pickle")


def check_plain(value: Any) -> None:
    """SnapshotError unless `value` is plain data without cycles. Iterative (a deep file
    cannot exhaust the stack); a container shared by many (torch's frames are) is checked
    once, and leaves are checked where they stand, without a stack entry each.

    Only a container with more than one reference can be met twice or close a cycle
    (a cycle's first container is referenced from outside it and from inside it), so
    one whose only reference is its parent's (the millions of history entries) is
    checked without being remembered: no entry in `done` or `open_now` for it, which is
    most of this walk's time and memory on a big snapshot."""
    if type(value) in _LEAVES:
        return
    _refuse_kind(value)
    done: set[int] = set()
    open_now: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, leaving, refs = _popped(stack)
        if refs <= _ONE_PARENT:
            _push_children(item, stack)
            continue
        ident = id(item)
        if leaving:
            open_now.discard(ident)
            done.add(ident)
            continue
        if ident in done:
            continue
        if ident in open_now:
            raise SnapshotError("refused: a container holds itself", "refused")
        open_now.add(ident)
        stack.append((item, True))
        _push_children(item, stack)


def _push_children(item: Any, stack: list[tuple[Any, bool]]) -> None:
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


def _popped(stack: list[tuple[Any, bool]]) -> tuple[Any, bool, int]:
    """The top of the stack and its reference count, as seen from here."""
    item, leaving = stack.pop()
    return item, leaving, sys.getrefcount(item)


# The count `_popped` sees for a container with one parent, measured (not assumed: what
# the interpreter's own references add differs between versions). Any other reference
# to a container only makes it look shared: the safe side.
def _one_parent_refs() -> int:
    parent: list[Any] = [[]]
    return _popped([(parent[0], False)])[2]


_ONE_PARENT = _one_parent_refs()


_LEAVES = frozenset(PLAIN_LEAVES)
_CONTAINERS = frozenset((dict, list, tuple))


def _refuse_kind(item: Any) -> None:
    if type(item) not in _CONTAINERS:
        raise SnapshotError(
            f"refused: the pickle builds a {type(item).__name__} (only plain data)", "refused"
        )
