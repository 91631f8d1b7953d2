"""Work of one op call from its recorded input shapes and types (`record_shapes`): FLOPs,
bytes moved (inputs read + outputs written, once each) and the data type whose roof
applies. The formulas, and where they differ from PyTorch's own `flop_counter` and
inductor's `profile_analysis`, are in docs/metrics.md ("Roofline").

A formula returns None when the shapes do not fit it (a varlen attention, a missing
dimension): unknown, never a guess.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from .dtypes import INPUT_TYPES, scalar_type

# Element sizes and roof dtypes of the `Input type` strings the profiler writes.
_TYPES: dict[str, tuple[int, str | None]] = {k: (t.size, t.roof) for k, t in INPUT_TYPES.items()}

COMPUTE, MEMORY = 0, 1  # the roof a family meets first on every GPU we list


class Work(NamedTuple):
    flops: float
    bytes: float
    dtype: str | None  # fp64, fp32, tf32, bf16, fp16, fp8, int8; None: no compute roof
    nominal: int  # COMPUTE or MEMORY
    # Elements moved whose size the args do not say (tensor lists carry no type): `bytes`
    # leaves them out; work.py sizes them from the op's kernel, or makes bytes unknown.
    unsized: float = 0.0


class Call(NamedTuple):
    dims: list[Any]
    types: list[str]
    concrete: list[str]


def _numel(shape: Any) -> int:
    return math.prod(int(d) for d in shape)


def _sized(value: Any) -> bool:
    return _is_shape(value) and len(value) > 0


def _is_shape(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(d, int) for d in value)


def _tensor(call: Call, i: int) -> tuple[list[int], int, str | None] | None:
    """Input i as (shape, element size, dtype), when it is a tensor of a known type."""
    if i >= len(call.dims) or i >= len(call.types):
        return None
    shape, kind = call.dims[i], call.types[i]
    if kind not in _TYPES or not _is_shape(shape):
        return None
    size, dtype = _TYPES[kind]
    return shape, size, dtype


def _nbytes(call: Call, i: int) -> int:
    t = _tensor(call, i)
    return _numel(t[0]) * t[1] if t else 0


def _tensor_bytes(call: Call) -> float:
    """Every typed tensor input, read once (tensor lists: `list_elements`); NaN where a
    tensor's type is one we do not know the size of."""
    total = 0.0
    for i, kind in enumerate(call.types):
        if kind in _TYPES:
            total += _nbytes(call, i)
        elif kind not in _NOT_TENSORS and i < len(call.dims) and _sized(call.dims[i]):
            return math.nan  # a tensor (it has dimensions) of a type we cannot size
    return total


# `Input type` strings of arguments that are not tensors.
_NOT_TENSORS = {"", "Scalar", "ScalarList", "TensorList", "GenericList", "Int", "c10::string_view"}


def list_elements(call: Call) -> int:
    """Elements of the tensor-list inputs, whose type the profiler does not record."""
    total = 0
    for i, kind in enumerate(call.types):
        listed = call.dims[i] if i < len(call.dims) else None
        if kind in ("TensorList", "GenericList") and isinstance(listed, list):
            total += sum(_numel(d) for d in listed if _is_shape(d))
    return total


def _concrete(call: Call, i: int) -> str:
    return call.concrete[i].strip() if i < len(call.concrete) else ""


def _int_list(text: str) -> list[int] | None:
    text = text.strip().strip("[]()")
    if not text:
        return []
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        return None


# --- matrix multiplications ----------------------------------------------------------------


def _gemm(m: int, n: int, k: int, batch: int, call: Call, a: int, out_size: int) -> Work:
    """2·M·N·K per product (a multiply and an add); bytes: the inputs and the output."""
    ta = _tensor(call, a)
    dtype = ta[2] if ta else None
    return Work(2.0 * batch * m * n * k, _tensor_bytes(call) + batch * m * n * out_size, dtype, 0)


def _mm_at(a: int, b: int) -> Callable[[Call], Work | None]:
    def formula(call: Call) -> Work | None:
        ta, tb = _tensor(call, a), _tensor(call, b)
        if not ta or not tb or len(ta[0]) != len(tb[0]) or len(ta[0]) not in (2, 3):
            return None
        (sa, size, _), sb = ta, tb[0]
        batch = sa[0] if len(sa) == 3 else 1
        m, k, n = sa[-2], sa[-1], sb[-1]
        if sb[-2] != k:
            return None
        return _gemm(m, n, k, batch, call, a, size)

    return formula


def _matmul(call: Call) -> Work | None:
    ta, tb = _tensor(call, 0), _tensor(call, 1)
    if not ta or not tb or not ta[0] or not tb[0]:
        return None
    sa, sb = list(ta[0]), list(tb[0])
    if len(sa) == 1:
        sa = [1, *sa]
    if len(sb) == 1:
        sb = [*sb, 1]
    if sa[-1] != sb[-2]:
        return None
    batch = math.prod(max(x, y) for x, y in zip(_pad(sa[:-2], sb[:-2]), _pad(sb[:-2], sa[:-2])))
    return _gemm(sa[-2], sb[-1], sa[-1], batch, call, 0, ta[1])


def _pad(shape: list[int], other: list[int]) -> list[int]:
    return [1] * max(len(other) - len(shape), 0) + shape


def _linear(call: Call) -> Work | None:
    tx, tw = _tensor(call, 0), _tensor(call, 1)
    if not tx or not tw or len(tw[0]) != 2 or not tx[0] or tx[0][-1] != tw[0][1]:
        return None
    rows = _numel(tx[0][:-1])
    return _gemm(rows, tw[0][0], tw[0][1], 1, call, 0, tx[1])


def _out_size(call: Call, at: int, default: int) -> int | None:
    """The element size of the `out_dtype` argument at `at`: its ScalarType code, or
    `default` where it was None (recorded empty); None where no argument was recorded
    or the code is unknown."""
    if at >= len(call.concrete):
        return None
    code = call.concrete[at].strip()
    if not code:
        return default
    t = scalar_type(code)
    return t.size if t else None


def _scaled_mm(call: Call) -> Work | None:
    """fp8 inputs; output in `out_dtype` (arg 6; None: the input's type)."""
    ta, tb = _tensor(call, 0), _tensor(call, 1)
    if not ta or not tb or len(ta[0]) != 2 or len(tb[0]) != 2 or ta[0][1] != tb[0][0]:
        return None
    size = _out_size(call, 6, ta[1])
    work = _gemm(ta[0][0], tb[0][1], ta[0][1], 1, call, 0, size or 0)
    return work if size else work._replace(bytes=math.nan)


def _grouped_mm_at(out_at: int, default: int | None) -> Callable[[Call], Work | None]:
    """`_grouped_mm(a, b, offs, bias, out_dtype)`, `_scaled_grouped_mm(a, b, scale_a,
    scale_b, offs, bias, scale_result, out_dtype, ...)`: 2D×3D (tokens routed to G
    experts: 2·(total rows)·N·K) or 3D×3D (a batch); other layouts (groups along K) are
    left unknown. Output in `out_dtype` (None: `default`, or the input's type)."""

    def formula(call: Call) -> Work | None:
        ta, tb = _tensor(call, 0), _tensor(call, 1)
        if not ta or not tb:
            return None
        sa, sb = ta[0], tb[0]
        size = _out_size(call, out_at, default or ta[1])
        if len(sa) == 2 and len(sb) == 3 and sa[1] == sb[1]:
            work = _gemm(sa[0], sb[2], sa[1], 1, call, 0, size or 0)
        elif len(sa) == 3 and len(sb) == 3 and sa[2] == sb[1] and sa[0] == sb[0]:
            work = _gemm(sa[1], sb[2], sa[2], sa[0], call, 0, size or 0)
        else:
            return None
        return work if size else work._replace(bytes=math.nan)

    return formula
