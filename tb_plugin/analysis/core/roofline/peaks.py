"""What a device can do at best: dense peak TFLOP/s per data type and memory GB/s, from
data/device_peaks.json (vendor datasheets), matched from the trace's `deviceProperties`.

A device no entry matches has no peaks: its rows say unknown ("—"), never a guess from a
similar device. `KINETOSCOPE_DEVICE_PEAKS` names a JSON file of the same shape whose
entries come first (they override or extend ours); it is read once per process, like the
data file, through the storage layer (a regular file of at most 4 MiB, a local path or a
URL), and its content keys the cached views (`peaks_key`).
"""

from __future__ import annotations

import json
import logging
import os
import re
from functools import cache
from typing import Any

import msgspec
from msgspec.structs import replace

from ....ingest import storage
from ....model.trace_model import TraceModel
from ..devices import device_identity
from ..rules import load

DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
ENV = "KINETOSCOPE_DEVICE_PEAKS"
MAX_USER_FILE = 4 << 20  # bytes; a peaks file is a few KiB
_GIB = float(1 << 30)
log = logging.getLogger(__name__)


class Peaks(msgspec.Struct, frozen=True):
    """One device's roofs: TFLOP/s per dtype (None: not given) and memory GB/s."""

    device: str  # the entry's id
    tflops: dict[str, float | None]
    memory_gbps: float | None
    source: str
    match: str = "exact"  # how the device matched it: "exact", "family" or "unnamed"


class _Entry(msgspec.Struct, frozen=True):
    peaks: Peaks
    names: tuple[re.Pattern[str], ...]
    memory_gib: tuple[float, float] | None
    sms: int | None
    match_unnamed: bool
    family: str  # the model's token ("H100", "MI300X"); "": no family match
    form: str  # "SXM", "PCIe", "NVL"; "": the family's only form


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
    import hashlib  # here: OpenSSL's load (~3 ms) only where the setting is used

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
        family=str(raw.get("family", "")).upper(),
        form=str(raw.get("form", "")).upper(),
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
    """The entry this device matches, or None: first the first entry whose `names` match
    the whole name (and memory and SM count where the entry gives them); else the one
    entry of the name's model family (`family_of`) its form, memory and SM count allow;
    else, for an unnamed device, the first entry allowing it by memory and SM count."""
    gib = memory_bytes / _GIB if memory_bytes else None
    name = (name or "").strip()
    for e in entries():
        if name and any(p.fullmatch(name) for p in e.names) and _fits(e, gib, sms, name):
            return e.peaks
    if name:
        return _family_match(name, gib, sms)
    for e in entries():
        if e.match_unnamed and e.memory_gib and e.sms and _fits(e, gib, sms, name):
            return replace(e.peaks, match="unnamed")
    return None


def _fits(e: _Entry, gib: float | None, sms: int | None, name: str) -> bool:
    """Whether memory and SM count allow the entry (an unnamed device must report both)."""
    if e.memory_gib and (gib is None or not e.memory_gib[0] <= gib <= e.memory_gib[1]):
        return False
    if e.sms and sms is not None and sms != e.sms:
        return False
    return not (e.sms and sms is None and not name)


# Words of a device name that say nothing of the model: the vendor, the product line, a
# virtual function (SR-IOV), the OAM module, memory size and type.
_NOISE = re.compile(r"NVIDIA|AMD|INSTINCT|TESLA|VF|OAM|\d+GB|HBM\d*E?|\(TM\)|\(R\)")
_FORMS = (
    (re.compile(r"SXM\d*"), "SXM"),
    (re.compile(r"PCIE"), "PCIE"),
    (re.compile(r"NVL"), "NVL"),
)


def family_of(name: str) -> tuple[str, str] | None:
    """(model, form) of a device name: "NVIDIA A100-SXM4-40GB" → ("A100", "SXM"), "AMD
    Instinct MI300X VF" → ("MI300X", ""). None: the name holds no single model token once
    vendor, form and decorations are set aside ("NVIDIA A100-PG509-200": two left)."""
    model, form = [], ""
    for token in re.split(r"[\s\-_/,]+", name.upper()):
        if not token or _NOISE.fullmatch(token):
            continue
        found = next((f for pattern, f in _FORMS if pattern.fullmatch(token)), None)
        if found is None:
            model.append(token)
        elif form and found != form:
            return None
        else:
            form = found
    return (model[0], form) if len(model) == 1 else None


def _family_match(name: str, gib: float | None, sms: int | None) -> Peaks | None:
    """The one entry of the name's family that fits; a name without its form (SXM, PCIe,
    NVL) fits a family of several forms only by memory size, which it must report; a size
    in the name ("40GB") must fit too. Memory or SM count a device does not report rule
    nothing out in a family of one form. Two entries left, or none: unknown."""
    found = family_of(name)
    if found is None:
        return None
    model, form = found
    sizes = [int(gb) * 1e9 / _GIB for gb in re.findall(r"(\d+)GB\b", name.upper())]
    family = [e for e in entries() if e.family and e.family == model]
    several_forms = len({e.form for e in family}) > 1
    fitting = []
    for e in family:
        if form and e.form != form:
            continue
        if not form and several_forms and not (e.memory_gib and gib is not None):
            continue
        if e.memory_gib and gib is not None and not e.memory_gib[0] <= gib <= e.memory_gib[1]:
            continue
        if e.sms and sms is not None and sms != e.sms:
            continue
        if e.memory_gib and any(not e.memory_gib[0] <= s <= e.memory_gib[1] for s in sizes):
            continue  # the size the name says ("A100-SXM4-40GB") is another entry's
        fitting.append(e)
    return replace(fitting[0].peaks, match="family") if len(fitting) == 1 else None


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
