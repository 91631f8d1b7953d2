"""Performance recommendations: structured, each naming its evidence; no HTML.

Thresholds are the old plugin's, which users know: DataLoader > 5 % of step time,
communication > 10 %, GPU utilization < 50 %, DataParallel over several GPUs, DDP over
gloo with GPUs, no tensor-core time while eligible ops ran (compute capability >= 7),
peak allocated memory > 90 % of the device.

Advice fits the hardware and the cause: TF32 only on NVIDIA from compute capability 8.0 (there is
none before Ampere; a V100 is 7.0). Overlapping communication with computation helps
transfer time only: when at least half of the communication time is waiting for other
ranks (the Distributed view's sync wait), the straggler is the lead instead. One trace
alone cannot tell waiting from transfer when other ranks take part; the Overview's advice
then says so and names both remedies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows, distinct, in_sorted, launches_of, name_flags
from .devices import plural_word
from .kernel_classes import kernel_classes
from .overview_types import OverviewView, Recommendation
from .replay_ops import replayed_eligible
from .rules import is_tensor_core_eligible_op
from .steps import Steps
from .taxonomy import MATRIX_NO, MATRIX_YES

if TYPE_CHECKING:
    from .gpu import DeviceView

DATALOADER_PCT = 5.0
COMMUNICATION_PCT = 10.0
LOW_UTILIZATION_PCT = 50.0
MEMORY_PEAK_PCT = 90.0
ELIGIBLE_SHARE_PCT = 10.0
TF32_MIN_CAPABILITY = 8.0
WAIT_SHARE_PCT = 50.0  # of communication time: waiting for other ranks leads


def with_caveat(advice: list[Recommendation], caveat: str | None) -> list[Recommendation]:
    """Each recommendation with `caveat` (what in the trace may distort it) at the end of
    its message and in its evidence; unchanged without one."""
    if caveat is None:
        return advice
    out: list[Recommendation] = []
    for r in advice:
        evidence = {**r["evidence"], "caveat": caveat}
        out.append({**r, "message": f"{r['message']} {caveat}", "evidence": evidence})
    return out


def _steps_above(view: OverviewView, part: str, pct: float) -> list[str]:
    return [
        s["name"]
        for s in view["steps"]
        if s["duration_us"] > 0 and 100.0 * s["breakdown_us"][part] / s["duration_us"] > pct
    ]


def recommend(
    model: TraceModel, view: OverviewView, steps: Steps, devices_used: int
) -> list[Recommendation]:
    out: list[Recommendation] = []
    total = sum(view["breakdown_us"].values())
    if total > 0:
        loader = 100.0 * view["breakdown_us"]["dataloader"] / total
        if loader > DATALOADER_PCT:
            out.append(_dataloader_advice(view, loader))
        comm = 100.0 * view["breakdown_us"]["communication"] / total
        if comm > COMMUNICATION_PCT:
            alone = _world_size(model) == 1  # no other rank to wait for
            out.append(
                communication_advice(
                    comm,
                    view["breakdown_us"]["communication"],
                    _steps_above(view, "communication", COMMUNICATION_PCT),
                    0.0 if alone else None,
                    training=is_training(model),
                )
            )
    for dev in view["devices"]:
        util = dev["utilization_pct"]
        if util is not None and util < LOW_UTILIZATION_PCT:
            out.append(_utilization_advice(view, dev, util))
    word = view["device_word"]  # what the devices are called: "GPU", "MTIA", ...
    if devices_used > 1 and _uses_data_parallel(model):
        out.append(_data_parallel_advice(devices_used, word))
    if view["devices"] and _uses_gloo(model):
        out.append(_gloo_advice(word))
    out.extend(_tensor_core_advice(model, view))
    out.extend(_memory_advice(model, view))
    return out


def _utilization_advice(view: OverviewView, dev: DeviceView, util: float) -> Recommendation:
    return {
        "id": f"gpu_utilization_{dev['id']}",
        "severity": "warning",
        "title": f"{dev['short_label']} is busy only {util:.1f} % of the time",
        "message": f"Kernels ran on {dev['short_label']} during {util:.1f} % of the steps "
        f"(less than {LOW_UTILIZATION_PCT:g} %). Look for host-side gaps "
        "in the trace: input loading, synchronisation, small kernels; "
        "a larger batch size often helps.",
        "evidence": {
            "metric": "utilization_pct",
            "value": util,
            "threshold": LOW_UTILIZATION_PCT,
            "device": dev["id"],
            "steps": [s["name"] for s in view["steps"]],
            "time_us": dev["kernel_time_us"],
        },
        "link": {"view": "trace", "anchor": f"gpu{dev['id']}"},
        "docs_url": None,
    }


def _data_parallel_advice(devices_used: int, word: str) -> Recommendation:
    return {
        "id": "data_parallel",
        "severity": "info",
        "title": f"One process drives {devices_used} {plural_word(word, devices_used)} "
        "(nn.DataParallel)",
        "message": f"DistributedDataParallel, one process per {word}, is faster than DataParallel.",
        "evidence": {
            "metric": "devices_per_process",
            "value": devices_used,
            "threshold": 1,
            "steps": [],
            "time_us": None,
        },
        "link": {"view": "overview", "anchor": "gpu"},
        "docs_url": "https://pytorch.org/docs/stable/notes/cuda.html"
        "#use-nn-parallel-distributeddataparallel-instead-of-multiprocessing-or-nn-dataparallel",
    }


def _gloo_advice(word: str) -> Recommendation:
    # NCCL (RCCL on ROCm, under the same backend name) is the GPUs' backend; other
    # devices have their own (MTIA, XPU's xccl, HPU's hccl), named by their vendors' docs.
    backend = "the NCCL backend" if word == "GPU" else f"the {word}'s own collective backend"
    return {
        "id": "gloo_on_gpu",
        "severity": "warning",
        "title": f"Collectives run over gloo on {_article(word)} {word} job",
        "message": f"Use {backend} for {word} tensors: gloo copies them through host "
        "memory, much slower.",
        "evidence": {
            "metric": "backend",
            "value": "gloo",
            "threshold": None,
            "steps": [],
            "time_us": None,
        },
        "link": {"view": "overview", "anchor": "breakdown"},
        "docs_url": "https://pytorch.org/docs/stable/distributed.html#backends",
    }


def _article(word: str) -> str:
    """ "a GPU", "an MTIA", "an XPU", "an HPU", "an accelerator", "a Neuron"."""
    return "an" if word[:1].lower() in "aeiou" or word in ("MTIA", "XPU", "HPU", "NPU") else "a"


def _dataloader_advice(view: OverviewView, share: float) -> Recommendation:
    # A CPU-only trace's advice is about training on a GPU later.
    word = "GPU" if view["device_word"] == "CPU" else view["device_word"]
    return {
        "id": "dataloader",
        "severity": "warning",
        "title": f"Input loading takes {share:.1f} % of step time",
        "message": f"Input loading covers {share:.1f} % of the step time (more than "
        f"{DATALOADER_PCT:g} %). Set num_workers on the DataLoader to load data in worker "
        f"processes, and pin_memory=True when training on {_article(word)} {word}.",
        "evidence": {
            "metric": "dataloader_share_pct",
            "value": round(share, 2),
            "threshold": DATALOADER_PCT,
            "steps": _steps_above(view, "dataloader", DATALOADER_PCT),
            "time_us": view["breakdown_us"]["dataloader"],
        },
        "link": {"view": "overview", "anchor": "breakdown"},
        "docs_url": "https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading",
    }


def communication_advice(
    share: float,
    time_us: float,
    steps: list[str],
    sync_wait_pct: float | None,
    time_scope: str | None = None,
    training: bool = True,
) -> Recommendation:
    """Advice for communication above COMMUNICATION_PCT of the step time; `sync_wait_pct`
    is the share of it spent waiting for other ranks, None when unknown. `time_scope` says
    what `time_us` is over when not one trace (the Distributed view: "mean per rank").
    `training`: a training step's (gradients to exchange); else inference's (a
    tensor-parallel model's activations: no gradient to bucket or accumulate)."""
    head = (
        f"Communication covers {share:.1f} % of the step time (more than {COMMUNICATION_PCT:g} %)"
    )
    rec_id, link = "communication", {"view": "overview", "anchor": "breakdown"}
    url: str | None = "https://pytorch.org/docs/stable/notes/ddp.html"
    message = _communication_message(head, sync_wait_pct, training)
    if sync_wait_pct is not None and sync_wait_pct >= WAIT_SHARE_PCT:
        rec_id, link, url = (
            "communication_wait",
            {"view": "distributed", "anchor": "stragglers"},
            None,
        )
    return {
        "id": rec_id,
        "severity": "warning",
        "title": f"Communication takes {share:.1f} % of step time",
        "message": message,
        "evidence": {
            "metric": "communication_share_pct",
            "value": round(share, 2),
            "threshold": COMMUNICATION_PCT,
            "steps": steps,
            "time_us": time_us,
            **({"time_scope": time_scope} if time_scope else {}),
            "sync_wait_pct": None if sync_wait_pct is None else round(sync_wait_pct, 2),
        },
        "link": link,
        "docs_url": url,
    }


def _communication_message(head: str, sync_wait_pct: float | None, training: bool) -> str:
    overlap = (
        "overlap communication with computation (DDP bucket size, gradient accumulation "
        "with no_sync) or reduce what is exchanged"
        if training
        else "overlap the tensor-parallel collectives with computation (fused GEMM and "
        "collective kernels, asynchronous tensor parallelism), use fewer ranks for a small "
        "model, or exchange less (a lower-precision all-reduce)"
    )
    if sync_wait_pct is None:
        return (
            f"{head}. This trace alone cannot tell waiting for other ranks from transfer: "
            "a run of its ranks' traces together has a Distributed view that splits it. If "
            "most of it is waiting, the slowest rank is the lead (see its straggler cause); "
            f"if it is transfer, {overlap}."
        )
    if sync_wait_pct >= WAIT_SHARE_PCT:
        return (
            f"{head}, and {sync_wait_pct:.0f} % of it is waiting for other ranks to arrive. "
            "Overlapping communication would not help: find the straggler and its cause "
            "(data loading, computation, an uneven split of the work) and even out the ranks."
        )
    waiting = f"{sync_wait_pct:.0f} %" if sync_wait_pct > 0 else "none"
    return f"{head}; {waiting} of it is waiting for other ranks, the rest transfer: {overlap}."


def _world_size(model: TraceModel) -> int | None:
    info = model.header.get("distributedInfo")
    size = info.get("world_size") if isinstance(info, dict) else None
    return size if isinstance(size, int) else None


def is_training(model: TraceModel) -> bool:
    """Whether the trace ran backward (autograd functions): a training step, not
    inference or serving (whose advice leaves gradients out)."""
    return bool(name_flags(model, _is_backward).any())


def _is_backward(name: str) -> bool:
    return name.startswith("autograd::engine::evaluate_function") or name.endswith(
        ("Backward", "Backward0", "Backward1")
    )


def _uses_data_parallel(model: TraceModel) -> bool:
    flags = name_flags(model, lambda n: "DataParallel" in n or n.startswith("Broadcast"))
    return bool(flags.any())


def _uses_gloo(model: TraceModel) -> bool:
    return bool(name_flags(model, lambda n: n.startswith("gloo:")).any())


def _tensor_core_advice(model: TraceModel, view: OverviewView) -> list[Recommendation]:
    capable = [
        d
        for d in view["devices"]
        if d["compute_capability"] and float(d["compute_capability"]) >= 7.0
    ]
    if not capable:
        return []
    ev = model.events
    classes = kernel_classes(model)
    kernels = classes.rows
    if kernels.size == 0 or bool((classes.matrix == MATRIX_YES).any()):
        return []
    ext = _external_ids(model, kernels)
    ops = complete_rows(model, Kind.CPU_OP)
    eligible_ops = ops[name_flags(model, is_tensor_core_eligible_op)[ev["name"][ops]]]
    eligible_ext = distinct(model.column_at("external_id", eligible_ops))
    # Only kernels known not to use matrix cores: an unknown one may well use them.
    eligible = in_sorted(ext, eligible_ext[eligible_ext >= 0]) | replayed_eligible(model, kernels)
    eligible &= classes.matrix == MATRIX_NO
    dur = ev["dur"][kernels]
    total = float(dur.sum())
    if total <= 0:
        return []
    share = 100.0 * float(dur[eligible].sum()) / total
    if share < ELIGIBLE_SHARE_PCT:
        return []
    capability = min((d["compute_capability"] or "0" for d in capable), key=float)
    # TF32 is NVIDIA's (Ampere on); HIP's major.minor on AMD is another scale.
    nvidia = all(d["vendor"] == "nvidia" for d in capable)
    tf32 = nvidia and float(capability) >= TF32_MIN_CAPABILITY
    if tf32:
        how = "Automatic mixed precision (torch.autocast) or TF32 lets them."
    else:  # TF32 needs compute capability 8.0 (Ampere): float16 autocast only
        how = "Automatic mixed precision (torch.autocast with float16) lets them."
    return [
        {
            "id": "tensor_cores",
            "severity": "info",
            "title": f"{share:.0f} % of kernel time comes from ops that could use tensor cores",
            "message": f"Kernels taking {share:.1f} % of the {view['device_word']} time were "
            "launched by tensor-core eligible operators (convolutions, matrix multiplies), "
            f"but no kernel used tensor cores. {how}",
            "evidence": {
                "metric": "eligible_kernel_share_pct",
                "value": round(share, 2),
                "threshold": ELIGIBLE_SHARE_PCT,
                "steps": [],
                "time_us": float(dur[eligible].sum()),
                "compute_capability": capability,
                "tf32": tf32,
            },
            "link": {"view": "kernels", "anchor": "tensor-cores"},
            "docs_url": "https://pytorch.org/docs/stable/amp.html",
        }
    ]


def _external_ids(model: TraceModel, kernels: np.ndarray) -> np.ndarray:
    """Each kernel's External id, else its launch call's (-1 where neither has one)."""
    ext = model.column_at("external_id", kernels)
    missing = ext < 0
    if missing.any():
        launcher = launches_of(model, kernels[missing])
        launched = model.column_at("external_id", np.maximum(launcher, 0))
        ext[missing] = np.where(launcher >= 0, launched, -1)
    return ext


def _memory_advice(model: TraceModel, view: OverviewView) -> list[Recommendation]:
    mem = model.memory
    if mem["row"].size == 0:
        return []
    out: list[Recommendation] = []
    for dev in view["devices"]:
        capacity = dev["memory_bytes"]
        if not capacity:
            continue
        on_dev = (mem["device_type"] != 0) & (mem["device_id"] == dev["id"])
        alloc = mem["total_allocated"][on_dev]
        alloc = alloc[np.isfinite(alloc)]
        if alloc.size == 0:
            continue
        peak = float(alloc.max())
        pct = 100.0 * peak / capacity
        if pct > MEMORY_PEAK_PCT:
            out.append(
                {
                    "id": f"memory_peak_{dev['id']}",
                    "severity": "warning",
                    "title": f"{dev['short_label']} memory peaks at {pct:.0f} % of its capacity",
                    "message": f"Allocated memory reached {peak / 2**30:.2f} GiB of "
                    f"{capacity / 2**30:.2f} GiB. Reduce the batch size, use "
                    "activation checkpointing, or mixed precision.",
                    "evidence": {
                        "metric": "peak_allocated_pct",
                        "value": round(pct, 2),
                        "threshold": MEMORY_PEAK_PCT,
                        "device": dev["id"],
                        "steps": [],
                        "time_us": None,
                    },
                    "link": {"view": "memory", "anchor": f"device-{dev['id']}"},
                    "docs_url": None,
                }
            )
    return out
