"""Performance recommendations: structured, each naming its evidence; no HTML.

Thresholds are the old plugin's, which users know: DataLoader > 5 % of step time,
communication > 10 %, GPU utilization < 50 %, DataParallel over several GPUs, DDP over
gloo with GPUs, no tensor-core time while eligible ops ran (compute capability >= 7),
peak allocated memory > 90 % of the device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from ..categories import Kind
from ..model import TraceModel
from .common import launch_rows, launches_of, name_flags
from .rules import is_tensor_core_eligible_op
from .steps import Steps
from .taxonomy import MATRIX_NO, MATRIX_YES, kernel_classes

if TYPE_CHECKING:
    from .overview import OverviewView

DATALOADER_PCT = 5.0
COMMUNICATION_PCT = 10.0
LOW_UTILIZATION_PCT = 50.0
MEMORY_PEAK_PCT = 90.0
ELIGIBLE_SHARE_PCT = 10.0


class Recommendation(TypedDict):
    id: str
    severity: str
    title: str
    message: str
    evidence: dict[str, Any]
    link: dict[str, str]
    docs_url: str | None


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
        for part, limit, rec_id, advice, url in (
            (
                "dataloader",
                DATALOADER_PCT,
                "dataloader",
                "Set num_workers on the DataLoader to load data in worker processes, "
                "and pin_memory=True when training on a GPU.",
                "https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading",
            ),
            (
                "communication",
                COMMUNICATION_PCT,
                "communication",
                "Overlap communication with computation (DDP bucket size, gradient "
                "accumulation with no_sync) or reduce what is exchanged.",
                "https://pytorch.org/docs/stable/notes/ddp.html",
            ),
        ):
            share = 100.0 * view["breakdown_us"][part] / total
            if share > limit:
                label = "Input loading" if part == "dataloader" else "Communication"
                out.append(
                    {
                        "id": rec_id,
                        "severity": "warning",
                        "title": f"{label} takes {share:.1f} % of step time",
                        "message": f"{label} covers {share:.1f} % of the step time "
                        f"(more than {limit:g} %). {advice}",
                        "evidence": {
                            "metric": f"{part}_share_pct",
                            "value": round(share, 2),
                            "threshold": limit,
                            "steps": _steps_above(view, part, limit),
                            "time_us": view["breakdown_us"][part],
                        },
                        "link": {"view": "overview", "anchor": "breakdown"},
                        "docs_url": url,
                    }
                )
    for dev in view["devices"]:
        util = dev["utilization_pct"]
        if util is not None and util < LOW_UTILIZATION_PCT:
            out.append(
                {
                    "id": f"gpu_utilization_{dev['id']}",
                    "severity": "warning",
                    "title": f"GPU {dev['id']} is busy only {util:.1f} % of the time",
                    "message": f"Kernels ran on GPU {dev['id']} during {util:.1f} % of the steps "
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
            )
    if devices_used > 1 and _uses_data_parallel(model):
        out.append(
            {
                "id": "data_parallel",
                "severity": "info",
                "title": f"One process drives {devices_used} GPUs (nn.DataParallel)",
                "message": "DistributedDataParallel, one process per GPU, is faster than "
                "DataParallel.",
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
        )
    if view["devices"] and _uses_gloo(model):
        out.append(
            {
                "id": "gloo_on_gpu",
                "severity": "warning",
                "title": "Collectives run over gloo on a GPU job",
                "message": "Use the NCCL backend for GPU tensors: it is much faster than gloo.",
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
        )
    out.extend(_tensor_core_advice(model, view))
    out.extend(_memory_advice(model, view))
    return out


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
    if not capable or any((d["tensor_core_pct"] or 0) > 0 for d in capable):
        return []
    ev = model.events
    classes = kernel_classes(model)
    kernels = classes.rows
    if kernels.size == 0 or bool((classes.matrix == MATRIX_YES).any()):
        return []
    ext = ev["external_id"][kernels].copy()
    missing = ext < 0
    if missing.any():
        launcher = launches_of(model, kernels[missing], launch_rows(model))
        ext[missing] = np.where(launcher >= 0, ev["external_id"][np.maximum(launcher, 0)], -1)
    ops = model.complete_rows(Kind.CPU_OP)
    eligible_ops = ops[name_flags(model, is_tensor_core_eligible_op)[ev["name"][ops]]]
    eligible_ext = np.unique(ev["external_id"][eligible_ops])
    # Only kernels known not to use matrix cores: an unknown one may well use them.
    eligible = np.isin(ext, eligible_ext[eligible_ext >= 0]) & (classes.matrix == MATRIX_NO)
    dur = ev["dur"][kernels]
    total = float(dur.sum())
    if total <= 0:
        return []
    share = 100.0 * float(dur[eligible].sum()) / total
    tc_share = 0.0
    if share < ELIGIBLE_SHARE_PCT or tc_share > 0:
        return []
    return [
        {
            "id": "tensor_cores",
            "severity": "info",
            "title": f"{share:.0f} % of kernel time comes from ops that could use tensor cores",
            "message": f"Kernels taking {share:.1f} % of the GPU time were launched by "
            "tensor-core eligible operators (convolutions, matrix multiplies), but no "
            "kernel used tensor cores. Automatic mixed precision (torch.autocast) or "
            "TF32 lets them.",
            "evidence": {
                "metric": "eligible_kernel_share_pct",
                "value": round(share, 2),
                "threshold": ELIGIBLE_SHARE_PCT,
                "steps": [],
                "time_us": float(dur[eligible].sum()),
            },
            "link": {"view": "kernels", "anchor": "tensor-cores"},
            "docs_url": "https://pytorch.org/docs/stable/amp.html",
        }
    ]


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
                    "title": f"GPU {dev['id']} memory peaks at {pct:.0f} % of its capacity",
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
