"""One identity per GPU of a trace: vendor, id, name, memory, capability, and what its matrix
units are called. Resolved once per model; the Overview, Memory and Kernel views, the trace
counters and the text report all label devices through it, so one GPU has one name.

Where the properties come from: the `deviceProperties` entry whose `id` is the device's
(the old plugin indexed the list by position: a defect). AMD traces number kernels' devices
by HSA agent (CPU agents first: device 2 or 9 for the first GPU) while `deviceProperties`
counts GPUs from 0, so an id may match no entry; then, when the list has one entry or all
its entries describe the same model, that model is the device's (all GPUs of the box are
alike), and `properties_source` says so. Otherwise the name is unknown, never guessed.

What kind of device it is (CUDA or ROCm GPU, XPU, MTIA, HPU, Neuron, a PrivateUse1
backend, or unknown) comes from `device_kinds.py`; the label says it: "GPU 0" only for a
CUDA or ROCm GPU, "XPU 0", "MTIA 17", "NPU 0", "accelerator 0" when the kind is unknown.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from ...model.categories import ACCELERATOR_TYPE_KINDS, GPU_TYPES, Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, distinct, gpu_device_ids
from .device_kinds import (
    KIND_VENDORS,
    KIND_WORDS,
    device_kind,
    kinds_in_trace,
    properties_by_id,
    vendor_of_name,
)

MATRIX_CORE_NAMES = {"nvidia": "Tensor Cores", "amd": "Matrix cores (MFMA)"}


class DeviceIdentity(msgspec.Struct, frozen=True):
    id: int
    vendor: str  # "nvidia", "amd", "intel", "mtia", "aws" or "unknown"
    name: str | None
    memory_bytes: int | None
    compute_capability: str | None  # "major.minor" as the trace reports it (HIP's on AMD)
    properties_source: str  # "id", "only_entry", "identical_entries" or "none"
    kind: str = "unknown"  # device_kinds.KIND_WORDS: "cuda", "rocm", "xpu", ..., "unknown"
    kind_word: str = "accelerator"  # "GPU", "XPU", "MTIA", "HPU", "Neuron", "NPU", ...

    @property
    def short_label(self) -> str:
        """`GPU 0`, `XPU 0`, `accelerator 3`: the device without its model name."""
        return f"{self.kind_word} {self.id}" if self.id >= 0 else self.kind_word

    @property
    def label(self) -> str:
        """`GPU 0 · NVIDIA H100 80GB HBM3`; the same text wherever the device is named."""
        return f"{self.short_label} · {self.name}" if self.name else self.short_label

    @property
    def matrix_core_name(self) -> str:
        return matrix_core_name(self.vendor)


def matrix_core_name(vendor: str) -> str:
    """What a vendor calls its matrix units ("Tensor Cores", "Matrix cores (MFMA)")."""
    return MATRIX_CORE_NAMES.get(vendor, "Matrix cores")


def trace_vendor(model: TraceModel) -> str:
    """The accelerator vendor of a trace, from what its writer recorded."""
    return model.derived("_trace_vendor", _trace_vendor)


def keep_vendor(model: TraceModel, vendor: str) -> None:
    """Keeps `vendor` as the model's: a batch of ranks (`model.rank_batch`) has no header
    of its own, so it takes its ranks' vendor, where they all agree."""
    model.derived("_trace_vendor", lambda _: vendor)


def _trace_vendor(model: TraceModel) -> str:
    stated = stated_vendor(model)
    if stated is not None:
        return stated
    kinds = kinds_in_trace(model)
    return KIND_VENDORS.get(next(iter(kinds)), "unknown") if len(kinds) == 1 else "unknown"


def stated_vendor(model: TraceModel) -> str | None:
    """The vendor a trace's header, device properties or categories name; None where
    only its devices' work can tell (`trace_vendor` then reads it). Kept with the model:
    a batch of ranks asks it before `trace_vendor` does."""
    return model.derived("_stated_vendor", _stated_or_empty) or None


def _stated_or_empty(model: TraceModel) -> str:
    # "" where nothing states it: a kept structure is never None.
    return _stated_vendor(model) or ""


def _stated_vendor(model: TraceModel) -> str | None:
    header = model.header
    if "roctracer_version" in header or "hip_runtime_version" in header:
        return "amd"
    if any(k in header for k in ("cupti_version", "cuda_runtime_version", "cuda_driver_version")):
        return "nvidia"
    for props in model.device_properties():
        vendor = vendor_of_name(props.get("name"))
        if vendor != "unknown":
            return vendor
    if any(c.lower().startswith("mtia") for c in model.categories):
        return "mtia"
    return None


def device_identity(model: TraceModel, device_id: int) -> DeviceIdentity:
    """The identity of one GPU of the trace (by the id its events carry)."""
    known: dict[int, DeviceIdentity] = model.derived("_device_identities", _gpu_identities)
    if device_id in known:
        return known[device_id]
    return _resolve(model, device_id, properties_by_id(model))


def device_identities(model: TraceModel) -> dict[int, DeviceIdentity]:
    """Every GPU that ran work or is listed in `deviceProperties`, by id."""
    return dict(model.derived("_device_identities", _gpu_identities))


def _gpu_identities(model: TraceModel) -> dict[int, DeviceIdentity]:
    rows = complete_rows(model, Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)
    ids = {d for d in distinct(gpu_device_ids(model, rows)).tolist() if d >= 0}
    by_id = properties_by_id(model)
    ids |= set(by_id)
    return {i: _resolve(model, i, by_id) for i in sorted(ids)}


def _resolve(model: TraceModel, device_id: int, by_id: dict[int, dict[str, Any]]) -> DeviceIdentity:
    props: dict[str, Any] = {}
    source = "none"
    if device_id in by_id:
        props, source = by_id[device_id], "id"
    elif len(by_id) == 1:
        props, source = next(iter(by_id.values())), "only_entry"
    elif by_id and len({_model_key(p) for p in by_id.values()}) == 1:
        props, source = next(iter(by_id.values())), "identical_entries"
    kind = device_kind(model, device_id)
    vendor = vendor_of_name(props.get("name"))
    if vendor == "unknown":
        vendor = KIND_VENDORS.get(kind.kind) or trace_vendor(model)
    major, minor = props.get("computeMajor"), props.get("computeMinor")
    memory = props.get("totalGlobalMem")
    return DeviceIdentity(
        id=device_id,
        vendor=vendor,
        name=str(props["name"]) if props.get("name") else None,
        memory_bytes=int(memory) if isinstance(memory, (int, float)) and memory > 0 else None,
        compute_capability=f"{major}.{minor}" if major is not None else None,
        properties_source=source,
        kind=kind.kind,
        kind_word=kind.word,
    )


def device_word(model: TraceModel) -> str:
    """What the trace's devices are called, for labels about them all ("2 GPUs", "MTIA
    summary", "Why is the XPU idle?"): the one word of their kinds ("GPU" only for CUDA
    and ROCm GPUs), "accelerator" when they differ or none is known."""
    words = {ident.kind_word for ident in device_identities(model).values()}
    return next(iter(words)) if len(words) == 1 else KIND_WORDS["unknown"]


def plural_word(word: str, count: int) -> str:
    """`GPU`/`GPUs`, `MTIA`/`MTIAs`, `accelerator`/`accelerators`."""
    return word if count == 1 else f"{word}s"


def _model_key(props: dict[str, Any]) -> tuple[Any, ...]:
    return (
        props.get("name"),
        props.get("totalGlobalMem"),
        props.get("computeMajor"),
        props.get("computeMinor"),
    )


def gpu_of_memory_device(model: TraceModel, device_type: int, device_id: int) -> int | None:
    """The GPU id (as kernels carry it) of a memory events' device, or None if not a GPU.

    Memory events number AMD GPUs by HIP ordinal, kernels by HSA agent: when the trace's
    kernels ran on one GPU and its memory events name one GPU, they are the same device."""
    if device_type not in GPU_TYPES:
        return None
    mapping: dict[int, int] = model.derived("_memory_gpu_ids", _memory_gpu_ids)
    return mapping.get(device_id, device_id)


def memory_device_label(model: TraceModel, device_type: int, device_id: int, name: str) -> str:
    """A memory device's display name: a GPU (CUDA or HIP) by its one identity
    (`GPU 0 · NVIDIA A100-SXM4-80GB`), an XPU, HPU, MTIA or PrivateUse1 device by its
    identity when the trace's device of that id is of that kind, any other device by its
    memory series `name`."""
    gpu = gpu_of_memory_device(model, device_type, device_id)
    if gpu is not None:
        return device_identity(model, gpu).label
    other = device_identities(model).get(device_id)
    if other is not None and ACCELERATOR_TYPE_KINDS.get(device_type) == other.kind:
        return other.label  # an XPU's memory named as its kernels' device: "XPU 0 · ..."
    return name


def _memory_gpu_ids(model: TraceModel) -> dict[int, int]:
    mem = model.memory
    is_gpu = np.isin(mem["device_type"], np.array(GPU_TYPES))
    memory_ids = {int(d) for d in distinct(mem["device_id"][is_gpu]).tolist() if d >= 0}
    rows = complete_rows(model, Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)
    kernel_ids = {int(d) for d in distinct(gpu_device_ids(model, rows)).tolist() if d >= 0}
    if len(memory_ids) == 1 and len(kernel_ids) == 1:
        return {next(iter(memory_ids)): next(iter(kernel_ids))}
    return {}
