"""Tokens and requests of an iteration from its ops' input shapes (`record_shapes=True`),
when the engine's annotation does not count them.

- tokens: the index tensor of the first `aten::embedding` (the forward's input ids), else
  the rows of the first GEMM op (the first projection), else the query rows of the engine's
  attention op (`vllm::unified_attention*`; padded to a captured graph's batch size in a
  graph-replayed iteration);
- requests: the rows of the iteration's logits GEMM (the last GEMM whose output is the
  vocabulary: the widest of the trace's GEMMs), one sampled row per request.

Ops run eagerly only: in a graph replay none is recorded, so a replayed decode shows its
attention op and its logits, not its embedding. The phase from them (`view.py`): as many
tokens as requests is decode; at least twice as many is a prefill (or a mixed batch): a
graph's padding never doubles a batch, so less than twice decides nothing."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.common import complete_rows, name_flags, thread_keys
from .iterations import Found

GEMM_OPS = frozenset({"aten::mm", "aten::addmm", "aten::linear", "aten::matmul"})
EMBEDDING = "aten::embedding"


class _Dims(msgspec.Struct, gc=False):
    dims: Any = msgspec.field(default=None, name="Input Dims")
    legacy: Any = msgspec.field(default=None, name="Input dims")


class Counts(msgspec.Struct):
    """Per iteration, tokens and requests from shapes (None: not seen)."""

    tokens: list[int | None]
    requests: list[int | None]


def _is_shape_op(name: str) -> bool:
    return name in GEMM_OPS or name == EMBEDDING or "unified_attention" in name


def shape_counts(model: TraceModel, found: Found) -> Counts:
    n = len(found)
    out = Counts([None] * n, [None] * n)
    ops = complete_rows(model, Kind.CPU_OP)
    if n == 0 or ops.size == 0:
        return out
    ops = ops[name_flags(model, _is_shape_op)[model.events["name"][ops]]]
    owner = _owner(model, found, ops)
    ops, owner = ops[owner >= 0], owner[owner >= 0]
    if ops.size == 0:
        return out
    order = np.lexsort((model.events["ts"][ops], owner))
    ops, owner = ops[order], owner[order]
    names = model.names_of(ops)
    dims = [a.dims if a.dims is not None else a.legacy for a in model.args_of(ops, _Dims)]
    gemms = [_gemm(name, d) for name, d in zip(names, dims)]
    widest = max((g[1] for g in gemms if g is not None), default=None)
    for i, name, d, g in zip(owner.tolist(), names, dims, gemms):
        _count(out, i, name, d, g, widest)
    return out


def _owner(model: TraceModel, found: Found, rows: np.ndarray) -> np.ndarray:
    """Per op row, the iteration whose span on the op's thread holds its start, or -1."""
    owner = np.full(rows.size, -1, dtype=np.int64)
    t = model.events["ts"][rows].astype(np.float64)
    threads = thread_keys(model, rows)
    it_threads = thread_keys(model, found.rows)
    for thread in np.unique(it_threads).tolist():
        its = np.flatnonzero(it_threads == thread)
        sel = np.flatnonzero(threads == thread)
        at = np.searchsorted(found.starts[its], t[sel], side="right") - 1
        ok = at >= 0
        ok[ok] = t[sel[ok]] <= found.ends[its[at[ok]]]
        owner[sel[ok]] = its[at[ok]]
    return owner


def _count(
    out: Counts, i: int, name: str, dims: Any, gemm: tuple[int, int] | None, widest: int | None
) -> None:
    if gemm is not None and gemm[1] == widest:
        out.requests[i] = gemm[0]  # the last logits GEMM of the iteration
        return
    if out.tokens[i] is not None:
        return
    if name == EMBEDDING:
        out.tokens[i] = _numel(dims[1]) if _tensors(dims, 2) else None
    elif gemm is not None:
        out.tokens[i] = gemm[0]
    elif _tensors(dims, 1) and dims[0]:
        out.tokens[i] = int(dims[0][0])


def _gemm(name: str, dims: Any) -> tuple[int, int] | None:
    """(rows, outputs) of a GEMM op's shapes, None when they are not two matrices."""
    if name not in GEMM_OPS:
        return None
    if name == "aten::addmm":
        dims = dims[1:] if isinstance(dims, list) else dims
    if not _tensors(dims, 2):
        return None
    a, b = dims[0], dims[1]
    if len(a) < 2 or len(b) != 2:
        return None
    rows = _numel(a[:-1])
    # linear's weight is (out, in); mm's and matmul's second matrix is (in, out)
    inner, outputs = (b[1], b[0]) if name == "aten::linear" else (b[0], b[1])
    if rows is None or a[-1] != inner:
        return None
    return rows, outputs


def _tensors(dims: Any, count: int) -> bool:
    return (
        isinstance(dims, list)
        and len(dims) >= count
        and all(isinstance(d, list) and all(isinstance(x, int) for x in d) for d in dims[:count])
    )


def _numel(shape: list[int]) -> int | None:
    return int(math.prod(shape)) if shape else None
