"""The memory snapshot reader: plain data only, every hostile pickle refused with nothing
run (a canary file a payload would create never appears), damaged files a clear error."""

from __future__ import annotations

import copyreg
import os
import pickle
import pickletools
from pathlib import Path
from typing import Any

import pytest
from kinetoscope.ingest.discovery import SpanFile
from kinetoscope.ingest.snapshot import SnapshotError, decode_snapshot, read_snapshot
from snapshot_builders import known_snapshot

H100_SNAPSHOT = Path(__file__).parent / "data" / "h100" / "memory_snapshot" / "snapshot.pickle"


class _Call:
    """Pickles as a call of `func(*args)` (what a hostile file holds)."""

    def __init__(self, func: Any, *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> Any:
        return self.func, self.args


def _touch(canary: Path) -> str:
    return f"touch {canary}"


def _snapshot_around(value: Any) -> dict[str, Any]:
    return {"segments": [value], "device_traces": []}


def hostile(canary: Path) -> dict[str, bytes]:
    touch = _touch(canary)
    nested = _Call(os.system, _Call(str, touch))  # REDUCE whose argument is a REDUCE
    return {
        "os.system": pickle.dumps(_snapshot_around(_Call(os.system, touch)), protocol=2),
        "builtins.eval": pickle.dumps(
            _snapshot_around(_Call(eval, f"__import__('os').system({touch!r})")), protocol=4
        ),
        "builtins.exec, protocol 5": pickle.dumps(
            _Call(exec, f"open({str(canary)!r}, 'w')"), protocol=5
        ),
        "a class of kinetoscope": pickle.dumps(
            _snapshot_around(SpanFile("1", str(canary), "f", None, 0, 0)), protocol=5
        ),
        "nested REDUCE": pickle.dumps(_snapshot_around(nested), protocol=3),
        # GLOBAL + INST by hand (protocol 2 header, protocol 0 opcodes).
        "INST": b"\x80\x02(V" + touch.encode() + b"\nios\nsystem\n.",
        "OBJ": b"\x80\x02(cos\nsystem\nV" + touch.encode() + b"\no.",
    }


class _PersistentPickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        return "a-handle" if obj == "secret" else None


def _persistent() -> bytes:
    import io

    out = io.BytesIO()
    _PersistentPickler(out, protocol=4).dump(_snapshot_around("secret"))
    return out.getvalue()


def test_the_payloads_are_live(tmp_path: Path) -> None:
    # What the refusals below guard against: Python's pickle runs this one.
    canary = tmp_path / "canary"
    pickle.loads(hostile(canary)["os.system"])  # noqa: S301 - proving the payload works
    assert canary.exists()


@pytest.mark.parametrize("name", sorted(hostile(Path("x"))))
def test_hostile_pickles_are_refused_and_nothing_runs(tmp_path: Path, name: str) -> None:
    canary = tmp_path / "canary"
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(hostile(canary)[name])
    with pytest.raises(SnapshotError, match="refused"):
        read_snapshot(str(path))
    assert not canary.exists()


def test_persistent_ids_are_refused() -> None:
    with pytest.raises(SnapshotError, match="persistent id"):
        decode_snapshot(_persistent())


def test_extension_codes_are_refused(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    copyreg.add_extension("os", "system", 0x7FF0)
    try:
        # EXT2 0x7ff0 names os.system in copyreg's registry; then a 1-tuple and REDUCE.
        data = b"\x80\x02\x83\xf0\x7fV" + _touch(canary).encode() + b"\n\x85R."
        with pytest.raises(SnapshotError, match="refused"):
            decode_snapshot(data)
    finally:
        copyreg.remove_extension("os", "system", 0x7FF0)
    assert not canary.exists()


@pytest.mark.parametrize(
    "value, what",
    [
        ({1, 2}, "set"),
        (frozenset({1}), "frozenset"),
        (bytearray(b"x"), "bytearray"),
    ],
)
def test_only_plain_data_is_kept(value: Any, what: str) -> None:
    data = pickle.dumps(_snapshot_around(value), protocol=5)
    assert any(
        op.name in ("EMPTY_SET", "FROZENSET", "BYTEARRAY8") for op, _, _ in pickletools.genops(data)
    )
    with pytest.raises(SnapshotError, match=f"builds a {what}"):
        decode_snapshot(data)


def test_a_container_holding_itself_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(SnapshotError, match="holds itself"):
        decode_snapshot(pickle.dumps(_snapshot_around(loop), protocol=4))


def test_shared_containers_are_fine() -> None:
    frames = [{"filename": "a.py", "line": 1, "name": "f"}]
    snap = {"segments": [], "device_traces": [[{"frames": frames}, {"frames": frames}]]}
    assert decode_snapshot(pickle.dumps(snap, protocol=4)) == snap


def test_out_of_band_buffers_are_an_error() -> None:
    data = pickle.dumps(
        _snapshot_around(pickle.PickleBuffer(b"abc")), protocol=5, buffer_callback=lambda b: False
    )
    with pytest.raises(SnapshotError, match="damaged"):
        decode_snapshot(data)


DAMAGED = {
    "empty": (b"", "empty file"),
    "text": (b"hello", "not a pickle"),
    "protocol 1": (pickle.dumps({"segments": []}, protocol=1), "not a pickle"),
    "protocol 9": (b"\x80\x09}.", "protocol 9"),
    "not a snapshot": (pickle.dumps([1, 2, 3], protocol=4), "not a memory snapshot"),
    "no stop": (pickle.dumps({"segments": []}, protocol=4)[:-1], "damaged or truncated"),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_files_say_why(tmp_path: Path, name: str) -> None:
    data, message = DAMAGED[name]
    path = tmp_path / "s.pickle"
    path.write_bytes(data)
    with pytest.raises(SnapshotError, match=message):
        read_snapshot(str(path))


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.99])
def test_a_cut_real_snapshot_says_so(tmp_path: Path, fraction: float) -> None:
    data = H100_SNAPSHOT.read_bytes()
    path = tmp_path / "s.pickle"
    path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(SnapshotError, match="damaged or truncated"):
        read_snapshot(str(path))


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = known_snapshot().write(tmp_path / "s.pickle")
    monkeypatch.setenv("KINETOSCOPE_MAX_SNAPSHOT_MB", str(path.stat().st_size / 2 / (1 << 20)))
    with pytest.raises(SnapshotError, match="KINETOSCOPE_MAX_SNAPSHOT_MB"):
        read_snapshot(str(path))


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="cannot read it"):
        read_snapshot(str(tmp_path / "gone.pickle"))


def test_the_collector_is_back_as_it_was(tmp_path: Path) -> None:
    import gc

    path = known_snapshot().write(tmp_path / "s.pickle")
    assert gc.isenabled()
    read_snapshot(str(path))
    assert gc.isenabled()
    gc.disable()
    try:
        read_snapshot(str(path))
        assert not gc.isenabled()  # a program that turned it off keeps it off
    finally:
        gc.enable()
