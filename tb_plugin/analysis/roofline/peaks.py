"""What a device can do at best: dense peak TFLOP/s per data type and memory GB/s, from
data/device_peaks.json (vendor datasheets), matched from the trace's `deviceProperties`.

A device no entry matches has no peaks: its rows say unknown ("—"), never a guess from a
similar device. `KINETOSCOPE_DEVICE_PEAKS` names a JSON file of the same shape whose
entries come first (they override or extend ours); it is read once per process, like the
data file, through the storage layer (a regular file of at most 4 MiB, a local path or a
URL), and its content keys the cached views (`peaks_key`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...ingest import storage
from ...model.trace_model import TraceModel
from ..devices import device_identity
from ..rules import load

DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
ENV = "KINETOSCOPE_DEVICE_PEAKS"
MAX_USER_FILE = 4 << 20  # bytes; a peaks file is a few KiB
_GIB = float(1 << 30)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Peaks:
    """One device's roofs: TFLOP/s per dtype (None: not given) and memory GB/s."""

    device: str  # the entry's id
    tflops: dict[str, float | None]
    memory_gbps: float | None
    source: str


@dataclass(frozen=True)
class _Entry:
    peaks: Peaks
    names: tuple[re.Pattern[str], ...]
    memory_gib: tuple[float, float] | None
    sms: int | None
    match_unnamed: bool


@cache
def _user_file() -> tuple[str, list[dict[str, Any]]]:
    """The user's entries and a digest of them ("" and none without the setting)."""
    path = os.environ.get(ENV, "").strip()
    if not path:
        return "", []
    try:
        # Through the storage layer, bounded: a FIFO is not waited on, a huge file not read.
        raw = storage.read_small(path, MAX_USER_FILE)
        devices = json.loads(raw).get("devices", [])
        if not isinstance(devices, list):
            raise ValueError("`devices` must be a list")
    except (OSError, ValueError, AttributeError) as exc:
        log.warning("%s=%s is not read: %s", ENV, path, exc)
        return "", []
    return hashlib.sha1(raw).hexdigest()[:12], devices


def peaks_key() -> str:
    """What keys views that read peaks: the data's version, and the user file's digest."""
    digest, _ = _user_file()
    version = str(load("device_peaks")["version"])
    return f"{version}.{digest}" if digest else version


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _entry(raw: dict[str, Any]) -> _Entry:
    tflops = raw.get("peaks_tflops") or {}
    memory = raw.get("memory_gib")
    return _Entry(
        peaks=Peaks(
            device=str(raw.get("id", "")),
            tflops={d: _number(tflops.get(d)) for d in DTYPES},
            memory_gbps=_number(raw.get("memory_gbps")),
            source=str(raw.get("source", "")),
        ),
        names=tuple(re.compile(p, re.IGNORECASE) for p in raw.get("names", ())),
        memory_gib=(float(memory[0]), float(memory[1])) if memory else None,
        sms=int(raw["sms"]) if raw.get("sms") else None,
        match_unnamed=bool(raw.get("match_unnamed", False)),
    )


@cache
def entries() -> tuple[_Entry, ...]:
    _, user = _user_file()
    out = []
    for raw in [*user, *load("device_peaks")["devices"]]:
        try:
            out.append(_entry(raw))
        except (TypeError, ValueError, KeyError, IndexError, re.error) as exc:
            log.warning("a device peaks entry is skipped (%s): %r", exc, raw.get("id"))
    return tuple(out)


def match_peaks(name: str | None, memory_bytes: int | None, sms: int | None) -> Peaks | None:
    """The first entry this device matches: by name (and memory and SM count where the
    entry gives them), or, for an unnamed device, by memory and SM count where the entry
    allows it. None: no entry matches."""
    gib = memory_bytes / _GIB if memory_bytes else None
    for e in entries():
        if name:
            if not any(p.fullmatch(name.strip()) for p in e.names):
                continue
        elif not (e.match_unnamed and e.memory_gib and e.sms):
            continue
        if e.memory_gib and (gib is None or not e.memory_gib[0] <= gib <= e.memory_gib[1]):
            continue
        if e.sms and sms is not None and sms != e.sms:
            continue
        if e.sms and sms is None and not name:
            continue
        return e.peaks
    return None


def device_peaks(model: TraceModel, device_id: int) -> Peaks | None:
    """The peaks of one GPU of the trace (by the id its events carry), or None."""
    if device_id < 0:
        return None
    ident = device_identity(model, device_id)
    sms = None
    for position, props in enumerate(model.device_properties()):
        if props.get("id", position) == device_id and isinstance(props.get("numSms"), int):
            sms = int(props["numSms"])
    return match_peaks(ident.name, ident.memory_bytes, sms)
