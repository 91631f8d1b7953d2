"""An iteration's phase when the engine's annotation does not say it, from the work itself,
in this order (each rule abstains when its signal is absent or ambiguous):

1. no GPU work at all: `idle` (vLLM ends a profile with an empty `execute_model`);
2. op shapes (`shapes.py`): as many tokens as requests is `decode`; at least twice as many
   a `prefill` (or a mixed batch: the shapes cannot tell them apart); in between, a
   graph's padding or a small mixed batch, decides nothing;
3. graph replays: an iteration with at least REPLAYED_PCT of its kernel time in graph
   replays (piecewise graphs count: a few eager kernels between them do not break it) is
   `decode` (engines replay captured graphs for decode-sized batches); an eager iteration
   among replayed ones, with at least PREFILL_GEMM_RATIO times their median GEMM time (the
   same layers over many more tokens), is a `prefill` (or a large mixed batch);
4. attention kernels whose names say one phase (`data/serving.json`; a kernel both
   phases launch is in neither list);
5. else `unknown`, with what each signal showed.

`phase_from` says which rule decided, with the row's own numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .iterations import Found
from .metrics import CLASSES, IterationWork
from .shapes import Counts

REPLAYED_PCT = 50.0
PREFILL_GEMM_RATIO = 2.0
ANNOTATION = "engine annotation"
SHAPES = "op shapes"


@dataclass
class Decided:
    phase: str
    phase_from: str
    tokens: int | None
    requests: int | None
    counts_from: str | None  # ANNOTATION, SHAPES, or None: no counts


def decide(found: Found, work: IterationWork, counts: Counts) -> list[Decided]:
    kernel = work.kernel.astype(np.float64)
    share = np.where(kernel > 0, 100.0 * work.replayed / np.maximum(kernel, 1), 0.0)
    gemm = work.classes[:, CLASSES.index("gemm")].astype(np.float64)
    replayed = (share >= REPLAYED_PCT) & (work.activities > 0)
    reference = float(np.median(gemm[replayed])) if replayed.any() else None
    return [_one(found, work, counts, i, float(share[i]), reference) for i in range(len(found))]


def _one(
    found: Found,
    work: IterationWork,
    counts: Counts,
    i: int,
    share: float,
    reference_gemm: float | None,
) -> Decided:
    marker = found.markers[i]
    if marker.phase is not None and marker.phase_from is not None:
        said = marker.tokens is not None or marker.requests is not None
        return Decided(
            marker.phase,
            marker.phase_from,
            marker.tokens,
            marker.requests,
            ANNOTATION if said else None,
        )
    if work.activities[i] == 0:
        return Decided("idle", "no GPU work: the call launched nothing", None, None, None)
    tokens, requests = counts.tokens[i], counts.requests[i]
    by_shapes = _from_shapes(tokens, requests)
    if by_shapes is not None:
        return by_shapes
    phase, why = _from_work(work, i, share, reference_gemm)
    if phase == "decode" and requests is not None:
        return Decided(phase, why, requests, requests, SHAPES)  # one token a request
    counted = SHAPES if tokens is not None or requests is not None else None
    return Decided(phase, why, tokens if phase == "prefill" else None, requests, counted)


def _from_shapes(tokens: int | None, requests: int | None) -> Decided | None:
    if not tokens or not requests:
        return None
    if tokens == requests:
        said = f"op shapes: {tokens} tokens for {requests} requests (one a request: decode)"
        return Decided("decode", said, tokens, requests, SHAPES)
    if tokens >= 2 * requests:
        said = (
            f"op shapes: {tokens} tokens for {requests} requests (many a request: a prefill, "
            "or a mixed batch: the shapes cannot tell them apart)"
        )
        return Decided("prefill", said, tokens, requests, SHAPES)
    return None


def _from_work(
    work: IterationWork, i: int, share: float, reference_gemm: float | None
) -> tuple[str, str]:
    if share >= REPLAYED_PCT:
        return "decode", (
            f"graph replays: {share:.1f} % of its kernel time (engines replay captured graphs "
            "for decode-sized batches; no engine counts)"
        )
    gemm = float(work.classes[i, CLASSES.index("gemm")])
    if reference_gemm and gemm >= PREFILL_GEMM_RATIO * reference_gemm:
        return "prefill", (
            f"eager ({share:.1f} % graph replays) among graph-replayed iterations, with "
            f"{gemm / reference_gemm:.1f}x their median GEMM time: a prefill (or a large "
            "mixed batch)"
        )
    hinted = work.hinted_phase[i]
    if hinted is not None:
        return hinted, f"attention kernels: {hinted} kernels ran (no engine counts)"
    ratio = f", {gemm / reference_gemm:.1f}x the replayed ones' GEMM time" if reference_gemm else ""
    return "unknown", (
        f"no engine counts, no op shapes; graph replays {share:.1f} % of its kernel time"
        f"{ratio}; no phase-specific attention kernel"
    )
