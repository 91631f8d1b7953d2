"""What kind of device each device id of a trace is: a CUDA or ROCm GPU, an Intel XPU, an
MTIA, a Gaudi HPU, an AWS Neuron device, a PrivateUse1 backend (Ascend's NPU, ...), or
unknown. One decision per device, kept with the model; `devices.py` names devices by it.

The evidence, strongest first (docs/metrics.md, "Device kinds", says why, and what was
assumed per backend):

1. the device's own `deviceProperties` entry: its `vendor`, its `name`, the keys its
   writer fills (XPU's `maxWorkGroupSize`, MTIA's `maxGridHeight`);
2. the `process_labels` of the device's process when they name a kind ("MTIA 17",
   "XPU 0", "NPU 0"); libkineto writes "GPU 0".."GPU 15" for every backend that gives no
   device info (XPU gives none), so "GPU N" proves nothing;
3. the header's runtime versions (`cupti_version`, `roctracer_version`, ...);
4. the runtime calls linked (by correlation) to the device's kernels: `xpu_runtime`,
   `mtia_runtime`, `privateuse1_runtime`, `cuda_runtime` (written by CUDA and ROCm alike);
5. the c10 device type of the memory events of the device's id (1 CUDA, also written by
   ROCm builds, 6 HIP; 12 XPU, 15 HPU, 19 MTIA, 20 PrivateUse1);
6. a backend's own device category on the device's work (`mtia_ccp_events`);
7. the runtime categories of the whole trace, when they name one backend only.

Never a shared category alone: `kernel` or `gpu_user_annotation` (XPU's annotations were
tagged CUDA until mid-2026) say nothing of the vendor.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np

from ...model.categories import ACCELERATOR_TYPE_KINDS, GPU_ACTIVITY_KINDS, GPU_TYPES
from ...model.trace_model import TraceModel
from .common import complete_rows, distinct, gpu_device_ids, launches_of

# kind code → the word devices of that kind are named by ("XPU 0"); "GPU" only for
# CUDA and ROCm GPUs, "accelerator" when the kind is not known.
KIND_WORDS = {
    "cuda": "GPU",
    "rocm": "GPU",
    "xpu": "XPU",
    "mtia": "MTIA",
    "hpu": "HPU",
    "neuron": "Neuron",
    "privateuse1": "PrivateUse1",
    "unknown": "accelerator",
}
GPU_KINDS = ("cuda", "rocm")
# The vendor a kind implies (None: the vendor is decided as before, from names).
KIND_VENDORS = {"xpu": "intel", "hpu": "intel", "neuron": "aws", "mtia": "mtia"}

# Launch categories (lower case) → kind; "gpu": CUDA or ROCm, the header or names decide.
RUNTIME_CATEGORY_KINDS = {
    "cuda_runtime": "gpu",
    "cuda_driver": "gpu",
    "runtime": "gpu",  # 2021 traces' `Runtime`
    "xpu_runtime": "xpu",
    "xpu_driver": "xpu",
    "mtia_runtime": "mtia",
    "privateuse1_runtime": "privateuse1",
    "privateuse1_driver": "privateuse1",
}
# A backend's own device-side categories (no other backend writes them).
DEVICE_CATEGORY_KINDS = {"mtia_ccp_events": "mtia"}
# Words of a process label ("NPU 0") → kind; a PrivateUse1 backend keeps its own word.
LABEL_WORDS = {
    "xpu": "xpu",
    "mtia": "mtia",
    "hpu": "hpu",
    "gaudi": "hpu",
    "neuron": "neuron",
    "neuroncore": "neuron",
    "trainium": "neuron",
    "inferentia": "neuron",
    "npu": "privateuse1",
}
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(\d+)\s*$")
_ROCM_HEADER = ("roctracer_version", "hip_runtime_version")
_CUDA_HEADER = ("cupti_version", "cuda_runtime_version", "cuda_driver_version")
NVIDIA_NAME_PREFIXES = ("nvidia", "tesla", "geforce", "quadro", "titan")
AMD_NAME_PREFIXES = ("amd", "radeon", "instinct")


class DeviceKind(msgspec.Struct, frozen=True):
    kind: str  # a key of KIND_WORDS
    word: str  # what the device is called: "GPU", "XPU", "NPU", "accelerator", ...
    source: str  # "properties", "process_label", "header", "launches",
    # "memory_device_type", "device_category", "runtime_categories" or "none"


UNKNOWN = DeviceKind("unknown", KIND_WORDS["unknown"], "none")


def vendor_of_name(name: Any) -> str:
    """ "nvidia" or "amd" from a device model name, else "unknown"."""
    low = str(name or "").strip().lower()
    if low.startswith(NVIDIA_NAME_PREFIXES):
        return "nvidia"
    if low.startswith(AMD_NAME_PREFIXES) or " mi" in f" {low}":
        return "amd"
    return "unknown"


def kind_of_properties(props: dict[str, Any]) -> str | None:
    """The kind a `deviceProperties` entry names, or None."""
    vendor = str(props.get("vendor") or "").lower()
    name = str(props.get("name") or "").lower()
    by_name = vendor_of_name(name)
    if by_name != "unknown" or "nvidia" in vendor or "advanced micro" in vendor:
        return "cuda" if by_name == "nvidia" or "nvidia" in vendor else "rocm"
    if "habana" in vendor or "gaudi" in name or name.startswith("hl-"):
        return "hpu"
    if "intel" in vendor or ("maxWorkGroupSize" in props and "computeMajor" not in props):
        return "xpu"
    if any(w in name for w in ("trainium", "inferentia", "neuron")) or "amazon" in vendor:
        return "neuron"
    if "ascend" in name or "huawei" in vendor:
        return "privateuse1"
    if "mtia" in name or "maxGridHeight" in props:
        return "mtia"
    return None


def device_kinds(model: TraceModel, device_ids: list[int]) -> dict[int, DeviceKind]:
    """The kind of each of `device_ids` (those of `devices.py`), kept with the model."""
    known: dict[int, DeviceKind] = model.derived("_device_kinds", _all_kinds)
    return {d: known.get(d) or _decide(model, d, _Evidence.of(model)) for d in device_ids}


def device_kind(model: TraceModel, device_id: int) -> DeviceKind:
    return device_kinds(model, [device_id])[device_id]


def kinds_in_trace(model: TraceModel) -> set[str]:
    """The kinds of the devices that ran work or are listed in `deviceProperties`."""
    known: dict[int, DeviceKind] = model.derived("_device_kinds", _all_kinds)
    return {k.kind for k in known.values()}


class _Evidence(msgspec.Struct):
    properties: dict[int, dict[str, Any]]
    header_kind: str | None
    trace_runtime_kind: str | None  # the one backend the trace's launch categories name
    launch_kinds: dict[int, set[str]]  # device → kinds of the launches of its work
    device_categories: dict[int, set[str]]  # device → kinds of its own categories
    memory_kinds: dict[int, set[str]]  # device id → kinds its memory events' types name

    @classmethod
    def of(cls, model: TraceModel) -> _Evidence:
        return model.derived("_device_kind_evidence", _gather)  # type: ignore[no-any-return]


def _all_kinds(model: TraceModel) -> dict[int, DeviceKind]:
    evidence = _Evidence.of(model)
    ids = set(evidence.properties) | set(evidence.launch_kinds) | set(evidence.device_categories)
    return {d: _decide(model, d, evidence) for d in sorted(ids)}


def _gather(model: TraceModel) -> _Evidence:
    header = model.header
    header_kind = (
        "rocm"
        if any(k in header for k in _ROCM_HEADER)
        else ("cuda" if any(k in header for k in _CUDA_HEADER) else None)
    )
    trace_kinds = {RUNTIME_CATEGORY_KINDS.get(str(c).lower()) for c in model.categories} - {None}
    work = complete_rows(model, *GPU_ACTIVITY_KINDS)
    devices = gpu_device_ids(model, work)
    launch_kinds: dict[int, set[str]] = {}
    device_categories: dict[int, set[str]] = {}
    if work.size:
        cats = model.events["cat"]
        launches = launches_of(model, work)
        linked = launches >= 0
        _group(launch_kinds, devices[linked], cats[launches[linked]], model, RUNTIME_CATEGORY_KINDS)
        _group(device_categories, devices, cats[work], model, DEVICE_CATEGORY_KINDS)
    return _Evidence(
        properties=properties_by_id(model),
        header_kind=header_kind,
        trace_runtime_kind=next(iter(trace_kinds)) if len(trace_kinds) == 1 else None,  # type: ignore[arg-type]
        launch_kinds=launch_kinds,
        device_categories=device_categories,
        memory_kinds=_memory_kinds(model, {int(d) for d in distinct(devices).tolist() if d >= 0}),
    )


def _memory_kinds(model: TraceModel, kernel_ids: set[int]) -> dict[int, set[str]]:
    """Device id → the kinds its memory events' c10 device types name. A GPU's memory
    events of a one-GPU process name the GPU the kernels ran on (AMD numbers kernels' devices
    by HSA agent, memory by HIP ordinal)."""
    mem = model.memory
    out: dict[int, set[str]] = {}
    if mem["device_type"].size == 0:
        return out
    # distinct (type, id) pairs, by type then id: both are small codes, so `distinct`
    # marks them in a table (np.unique of a packed key would hash it and import numpy.ma,
    # ~10 ms of a small report); a trace has a few types.
    types, ids = mem["device_type"], mem["device_id"]
    pairs = [
        (device_type, device_id)
        for device_type in distinct(types).tolist()
        for device_id in distinct(ids[types == device_type]).tolist()
    ]
    gpu_ids = {i for t, i in pairs if t in GPU_TYPES and i >= 0}
    for device_type, device_id in pairs:
        kind = "gpu" if device_type in GPU_TYPES else ACCELERATOR_TYPE_KINDS.get(device_type)
        if kind is not None and device_id >= 0:
            out.setdefault(device_id, set()).add(kind)
    if len(gpu_ids) == 1 and len(kernel_ids) == 1:
        out.setdefault(next(iter(kernel_ids)), set()).add("gpu")
    return out


def _group(
    out: dict[int, set[str]],
    devices: np.ndarray,
    cat_codes: np.ndarray,
    model: TraceModel,
    table: dict[str, str],
) -> None:
    """out[device] |= the kinds `table` gives the categories seen on it (distinct pairs)."""
    if devices.size == 0:
        return
    n_cats = max(len(model.categories), 1)
    keys = distinct(devices.astype(np.int64) * n_cats + cat_codes.astype(np.int64))
    for device, code in zip((keys // n_cats).tolist(), (keys % n_cats).tolist()):
        kind = table.get(str(model.categories[code]).lower())
        if kind is not None and device >= 0:
            out.setdefault(int(device), set()).add(kind)


def properties_by_id(model: TraceModel) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for position, props in enumerate(model.device_properties()):
        ident = props.get("id", position)
        if isinstance(ident, int):
            out[ident] = props
    return out


def _label_kind(model: TraceModel, device_id: int) -> tuple[str, str] | None:
    """(kind, word) from the device process's label when it names a kind ("NPU 0")."""
    for text in (
        model.process_labels.get(str(device_id), ""),
        model.process_names.get(str(device_id), ""),
    ):
        match = _LABEL.match(str(text))
        if match is None or int(match.group(2)) != device_id:
            continue
        word = match.group(1)
        kind = LABEL_WORDS.get(word.lower())
        if kind is not None:
            return kind, word if kind == "privateuse1" else KIND_WORDS[kind]
    return None


def _decide(model: TraceModel, device_id: int, ev: _Evidence) -> DeviceKind:
    from_label = _label_kind(model, device_id)
    props = ev.properties.get(device_id)
    if props is None and len({kind_of_properties(p) for p in ev.properties.values()}) == 1:
        props = next(iter(ev.properties.values()))  # one model of device in the box
    from_props = kind_of_properties(props) if props else None
    if from_props is not None:
        return _named(from_props, "properties", from_label, props)
    if from_label is not None:
        return DeviceKind(from_label[0], from_label[1], "process_label")
    if ev.header_kind is not None:
        return _named(ev.header_kind, "header", None, None)
    for source, kinds in (
        ("launches", ev.launch_kinds.get(device_id, set())),
        ("memory_device_type", ev.memory_kinds.get(device_id, set())),
        ("device_category", ev.device_categories.get(device_id, set())),
        ("runtime_categories", {ev.trace_runtime_kind} - {None}),
    ):
        if len(kinds) == 1:
            kind = next(iter(kinds))
            return _named("cuda" if kind == "gpu" else kind, source, None, None)  # type: ignore[arg-type]
    return UNKNOWN


def _named(
    kind: str, source: str, from_label: tuple[str, str] | None, props: dict[str, Any] | None
) -> DeviceKind:
    """A kind with its word: a PrivateUse1 backend by its own name when the trace says it
    (the label's word, "NPU" for an Ascend device)."""
    word = KIND_WORDS[kind]
    if kind == "privateuse1":
        if from_label is not None and from_label[0] == "privateuse1":
            word = from_label[1]
        elif props and "ascend" in str(props.get("name") or "").lower():
            word = "NPU"
    return DeviceKind(kind, word, source)
