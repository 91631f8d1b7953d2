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

# Element sizes and roof dtypes of the `Input type` strings the profiler writes.
_TYPES: dict[str, tuple[int, str | None]] = {
    "double": (8, "fp64"),
    "float": (4, "fp32"),
    "c10::Half": (2, "fp16"),
    "c10::BFloat16": (2, "bf16"),
    "c10::Float8_e4m3fn": (1, "fp8"),
    "c10::Float8_e5m2": (1, "fp8"),
    "c10::Float8_e4m3fnuz": (1, "fp8"),
    "c10::Float8_e5m2fnuz": (1, "fp8"),
    "signed char": (1, "int8"),
    "unsigned char": (1, "int8"),
    "bool": (1, None),
    "short int": (2, None),
    "int": (4, None),
    "long int": (8, None),
    "long long int": (8, None),
    "c10::complex<float>": (8, None),
    "c10::complex<double>": (16, None),
}
# c10::ScalarType codes a `dtype` argument is recorded as (Concrete Inputs).
_SCALAR_TYPE_SIZES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 15: 2, 23: 1, 24: 1}

COMPUTE, MEMORY = 0, 1  # the roof a family meets first on every GPU we list


class Work(NamedTuple):
    flops: float
    bytes: float
    dtype: str | None  # fp64, fp32, tf32, bf16, fp16, fp8, int8; None: no compute roof
    nominal: int  # COMPUTE or MEMORY


class Call(NamedTuple):
    dims: list[Any]
    types: list[str]
    concrete: list[str]


def _numel(shape: Any) -> int:
    return math.prod(int(d) for d in shape)


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


def _tensor_bytes(call: Call) -> int:
    """Every tensor input (tensor lists too), read once."""
    total = 0
    for i, kind in enumerate(call.types):
        if kind == "TensorList" and i < len(call.dims):
            inner = [d for d in call.dims[i] if _is_shape(d)]
            total += sum(_numel(d) for d in inner) * _list_size(call, i)
        else:
            total += _nbytes(call, i)
    return total


def _list_size(call: Call, i: int) -> int:
    """Tensor lists carry no element type: that of the first typed tensor, else 4."""
    for j in range(len(call.types)):
        t = _tensor(call, j)
        if t:
            return t[1]
    return 4


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


def _scaled_mm(call: Call) -> Work | None:
    """fp8 inputs, output in the `out_dtype` (bf16 here when not recorded: 2 bytes)."""
    ta, tb = _tensor(call, 0), _tensor(call, 1)
    if not ta or not tb or len(ta[0]) != 2 or len(tb[0]) != 2 or ta[0][1] != tb[0][0]:
        return None
    return _gemm(ta[0][0], tb[0][1], ta[0][1], 1, call, 0, 2)


def _grouped_mm(call: Call) -> Work | None:
    """`_grouped_mm(a, b, offs)`: 2D×3D (tokens routed to G experts: 2·(total rows)·N·K)
    or 3D×3D (a batch); other layouts (groups along K) are left unknown. Output bf16."""
    ta, tb = _tensor(call, 0), _tensor(call, 1)
    if not ta or not tb:
        return None
    sa, sb = ta[0], tb[0]
    if len(sa) == 2 and len(sb) == 3 and sa[1] == sb[1]:
        return _gemm(sa[0], sb[2], sa[1], 1, call, 0, 2)
    if len(sa) == 3 and len(sb) == 3 and sa[2] == sb[1] and sa[0] == sb[0]:
        return _gemm(sa[1], sb[2], sa[2], sa[0], call, 0, 2)
    return None
