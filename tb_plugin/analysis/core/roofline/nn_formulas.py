"""Work of convolutions, attention and the memory-bound families (element-wise ops,
reductions, norms, embedding, copies); see formulas.py for the shared pieces and
docs/metrics.md ("Roofline") for the rules."""

from __future__ import annotations

import math
from typing import Callable

from .dtypes import DEFAULT, FLOAT, INPUT_TYPES, DType, Operand, number_category, result_type
from .dtypes import scalar_type as _scalar_type
from .formulas import (
    COMPUTE,
    MEMORY,
    Call,
    Work,
    _concrete,
    _int_list,
    _is_shape,
    _nbytes,
    _numel,
    _tensor,
    _tensor_bytes,
    list_elements,
)

Formula = Callable[[Call], "Work | None"]

# --- convolution ----------------------------------------------------------------------------


class ConvArgs:
    """Positions of stride, padding, dilation, transposed and groups in an op's schema."""

    def __init__(self, stride: int, padding: int, dilation: int, groups: int, transposed: int):
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.groups, self.transposed = groups, transposed


def _conv_flops(x: list[int], w: list[int], out_spatial: list[int], transposed: bool) -> float:
    """2 · N · C_out · Π(out) · C_in/groups · Π(kernel); transposed: the same product over
    the input positions (weight [C_in, C_out/groups, k...])."""
    if transposed:
        return 2.0 * x[0] * _numel(x[2:]) * x[1] * w[1] * _numel(w[2:])
    return 2.0 * x[0] * w[0] * _numel(out_spatial) * w[1] * _numel(w[2:])


def _out_spatial(call: Call, at: ConvArgs, x: list[int], w: list[int]) -> list[int] | None:
    n = len(x) - 2
    stride = _int_list(_concrete(call, at.stride)) or [1]
    padding = _int_list(_concrete(call, at.padding)) or [0]
    dilation = _int_list(_concrete(call, at.dilation)) or [1]
    if not _concrete(call, at.stride):
        return None  # no Concrete Inputs: stride unknown
    stride, padding, dilation = (v * n if len(v) == 1 else v for v in (stride, padding, dilation))
    if len(stride) != n or len(padding) != n or len(dilation) != n:
        return None
    return [
        (x[2 + i] + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
        for i in range(n)
    ]


def conv_forward(at: ConvArgs) -> Formula:
    def formula(call: Call) -> Work | None:
        tx, tw = _tensor(call, 0), _tensor(call, 1)
        if not tx or not tw or len(tx[0]) < 3 or len(tx[0]) != len(tw[0]):
            return None
        x, w = tx[0], tw[0]
        transposed = at.transposed >= 0 and _concrete(call, at.transposed) == "True"
        out = _out_spatial(call, at, x, w)
        if out is None or min(out, default=1) <= 0:
            return None
        if transposed:
            groups = int(_concrete(call, at.groups) or 1)
            # Written bytes counted as if the output were as large as the input spatially
            # (it is, up to the stride): the output padding is not recorded.
            out_numel = x[0] * w[1] * groups * _numel(x[2:])
        else:
            out_numel = x[0] * w[0] * _numel(out)
        flops = _conv_flops(x, w, out, transposed)
        return Work(flops, _tensor_bytes(call) + out_numel * tx[1], _conv_dtype(tx[2]), COMPUTE)

    return formula


def _conv_dtype(dtype: str | None) -> str | None:
    """cuDNN runs FP32 convolutions in TF32 unless told not to (torch's
    `backends.cudnn.allow_tf32` defaults to True): their roof is TF32's."""
    return "tf32" if dtype == "fp32" else dtype


def conv_backward(call: Call) -> Work | None:
    """`convolution_backward(grad_out, input, weight, bias_sizes, stride, padding, dilation,
    transposed, output_padding, groups, output_mask)`: grad_input and grad_weight each
    cost what the forward does (grad_out's spatial size is the forward's output)."""
    tg, tx, tw = _tensor(call, 0), _tensor(call, 1), _tensor(call, 2)
    if not tg or not tx or not tw or len(tx[0]) < 3:
        return None
    transposed = _concrete(call, 7) == "True"
    fwd = _conv_flops(tx[0], tw[0], tg[0][2:], transposed)
    mask = [m.strip() == "True" for m in _concrete(call, 10).strip("[]").split(",") if m.strip()]
    want_input, want_weight = (mask + [True, True])[:2] if mask else (True, True)
    flops = fwd * (int(want_input) + int(want_weight))
    written = _nbytes(call, 1) * want_input + _nbytes(call, 2) * want_weight
    return Work(flops, _tensor_bytes(call) + written, _conv_dtype(tx[2]), COMPUTE)


# --- attention ------------------------------------------------------------------------------


class AttnArgs:
    """Where q, k, v sit, their layout (heads before sequence: "bhsd", else "bshd"), where
    the causal flag is (-1: none) and whether it is a mask-type code (efficient kernels)."""

    def __init__(self, q: int, layout: str, causal: int, mask_code: bool, backward: bool):
        self.q, self.layout, self.causal = q, layout, causal
        self.mask_code, self.backward = mask_code, backward


def attention(at: AttnArgs) -> Formula:
    """Forward: Q·Kᵀ and P·V, 2·B·H·Sq·Sk·(D + Dv); backward twice that (dV, dP, dQ, dK);
    causal: half (the kernels skip the masked half). Varlen (3-D q) is unknown."""

    def formula(call: Call) -> Work | None:
        tq, tk, tv = (_tensor(call, at.q + i) for i in range(3))
        if not tq or not tk or not tv or not (len(tq[0]) == len(tk[0]) == len(tv[0]) == 4):
            return None
        if at.layout == "bhsd":
            (b, h, sq, d), sk, dv = tq[0], tk[0][2], tv[0][3]
        else:
            (b, sq, h, d), sk, dv = tq[0], tk[0][1], tv[0][3]
        flops = 2.0 * b * h * sq * sk * (d + dv)
        flag = _concrete(call, at.causal) if at.causal >= 0 else ""
        causal = flag not in ("", "0") if at.mask_code else flag == "True"
        if causal:
            flops /= 2
        out = _numel(tq[0]) // d * dv * tq[1]
        if at.backward:
            flops *= 2
            written = sum(_nbytes(call, at.q + i) for i in range(3))
        else:
            written = out
        return Work(flops, _tensor_bytes(call) + written, tq[2], COMPUTE)

    return formula


# --- memory-bound families ------------------------------------------------------------------


def _work_memory(call: Call, written: float, elements: int) -> Work | None:
    t = _first_tensor(call)
    if t is None:
        return None
    return Work(float(elements), float(_tensor_bytes(call) + written), t[2], MEMORY)


def _first_tensor(call: Call) -> tuple[list[int], int, str | None] | None:
    for i in range(len(call.types)):
        t = _tensor(call, i)
        if t:
            return t
    return None


def _broadcast(call: Call) -> list[int] | None:
    """The broadcast shape of the tensor inputs."""
    shapes = [t[0] for i in range(len(call.types)) if (t := _tensor(call, i))]
    if not shapes:
        return None
    rank = max(len(s) for s in shapes)
    padded = [[1] * (rank - len(s)) + s for s in shapes]
    return [max(col) for col in zip(*padded)]


class Pointwise:
    """How an element-wise op types its output: which inputs are operands of its type
    promotion (None: every tensor and number; `add`'s alpha, `where`'s condition are
    not), whether an integer result becomes the default float (`div`, `exp`), and the
    position of a `dtype` argument that sets it (-1: none)."""

    def __init__(
        self,
        operands: tuple[int, ...] | None = None,
        to_float: bool = False,
        dtype_at: int = -1,
        mode_at: int = -1,
    ):
        self.operands, self.to_float, self.dtype_at = operands, to_float, dtype_at
        self.mode_at = mode_at  # a rounding mode there keeps an integer result integral


def output_type(call: Call, how: Pointwise) -> DType | None:
    """The output's type by PyTorch's promotion (dtypes.py); None: unknown (a number
    whose value was not recorded where it could change an integer result)."""
    if how.dtype_at >= 0 and _concrete(call, how.dtype_at):
        return _scalar_type(_concrete(call, how.dtype_at))
    operands, unread = [], False
    for i in how.operands if how.operands is not None else range(len(call.types)):
        kind = call.types[i] if i < len(call.types) else ""
        shape = call.dims[i] if i < len(call.dims) else None
        if kind in INPUT_TYPES and _is_shape(shape):
            t = INPUT_TYPES[kind]
            # A Python float or complex operand is recorded as a 0-d double tensor.
            number = not shape and kind in ("double", "c10::complex<double>")
            tier = 2 if number else (0 if shape else 1)
            operands.append(Operand(DEFAULT[t.category] if number else t, tier))
        elif kind == "Scalar":
            category = number_category(_concrete(call, i))
            if category is None:
                unread = True
            else:
                operands.append(Operand(DEFAULT[category], 2))
    out = result_type(operands) if operands else None
    if out is None or (unread and out.category < FLOAT):
        return None
    to_float = how.to_float and not (how.mode_at >= 0 and _concrete(call, how.mode_at))
    return DEFAULT[FLOAT] if to_float and out.category < FLOAT else out


def elementwise(
    call: Call, bool_out: bool = False, arity: int = 0, how: Pointwise | None = None
) -> Work | None:
    """Inputs read, the broadcast output written, in the promoted type (1 byte each for
    comparisons); one FLOP per output element. A call with more inputs than the op's
    `arity` (its functional form's argument count) whose last input is a tensor is the
    `out=` form: that tensor is the output, written in its own type and not read."""
    out_size: int | None = 1 if bool_out else None
    if arity and len(call.types) > arity and (out := _tensor(call, len(call.types) - 1)):
        last = len(call.types) - 1
        call = Call(call.dims[:last], call.types[:last], call.concrete[:last])
        out_size = out[1]
    shape = _broadcast(call)
    if shape is None:
        return None
    typed = output_type(call, how or Pointwise())
    if out_size is None and typed is not None:
        out_size = typed.size
    n = _numel(shape)
    first = _first_tensor(call)
    dtype = typed.roof if typed is not None else (first[2] if first else None)
    written = n * out_size if out_size is not None else math.nan
    return Work(float(n), float(_tensor_bytes(call) + written), dtype, MEMORY)


def inplace(call: Call) -> Work | None:
    """`x.op_(...)`: the inputs read and x written."""
    t = _tensor(call, 0)
    return _work_memory(call, _nbytes(call, 0), _numel(t[0])) if t else None


def fill(call: Call) -> Work | None:
    """`fill_`, `zero_`: x written, nothing read."""
    t = _tensor(call, 0)
    if t is None:
        return None
    return Work(0.0, float(_numel(t[0]) * t[1]), t[2], MEMORY)


def copy_into(call: Call) -> Work | None:
    """`copy_(dst, src)`: src read, dst written."""
    src = _tensor(call, 1)
    if _tensor(call, 0) is None or src is None:
        return None
    return Work(0.0, float(_nbytes(call, 0) + _nbytes(call, 1)), src[2], MEMORY)


def copy_out(dtype_at: int) -> Formula:
    """`clone`, `contiguous`, `_to_copy`: the input read and a copy written (in the
    `dtype` argument's type where recorded)."""

    def formula(call: Call) -> Work | None:
        t = _tensor(call, 0)
        if t is None:
            return None
        size: float = t[1]
        if dtype_at >= 0:
            out = _concrete(call, dtype_at)
            known = _scalar_type(out) if out else None
            # Recorded empty: None, the input's type; not recorded, or a code we do not
            # know: unknown.
            size = (
                known.size
                if known
                else (t[1] if dtype_at < len(call.concrete) and not out else math.nan)
            )
        return Work(0.0, float(_numel(t[0]) * (t[1] + size)), t[2], MEMORY)

    return formula


def concat(call: Call) -> Work | None:
    """`cat`, `stack`: the listed tensors read and written once more. A tensor list
    carries no type: its elements are `unsized` (work.py takes the size from the cat
    kernel's template type, or leaves the bytes unknown)."""
    elements = list_elements(call)
    return Work(0.0, 0.0, None, MEMORY, unsized=2.0 * elements) if elements else None


def reduction(dim_at: int, dtype_at: int = -1, short: str = "", widen: bool = False) -> Formula:
    """Input read, the reduced output written; one FLOP per input element. Dimensions
    from the `dim` argument at `dim_at` (none recorded: a full reduction). The output is
    in the `dtype` argument's type (at `dtype_at`), else the input's; `widen`: a sum or
    product of integers or bools is int64. `short`: what the second argument of the
    two-argument form is instead of a dim (`sum(x, dtype)`: "dtype"; `var(x, unbiased)`,
    `norm(x, p)`: "other"), a full reduction."""

    def formula(call: Call) -> Work | None:
        t = _tensor(call, 0)
        if t is None:
            return None
        type_at = dtype_at
        if short and len(call.types) == 2:
            dims: list[int] | None = []
            type_at = 1 if short == "dtype" else -1
        else:
            dims = _int_list(_concrete(call, dim_at))
        shape = t[0]
        if dims is None:
            return None
        gone = {d % max(len(shape), 1) for d in dims}
        kept = [s for i, s in enumerate(shape) if dims and i not in gone]
        size = _reduced_size(call, type_at, widen, t[1])
        return _work_memory(call, math.prod(kept) * size, _numel(shape))

    return formula


def _reduced_size(call: Call, dtype_at: int, widen: bool, size: int) -> float:
    """The element size of a reduction's output: its `dtype` argument's where recorded
    (an unknown code: NaN), int64 for a widened integer sum, else the input's."""
    code = _concrete(call, dtype_at) if dtype_at >= 0 else ""
    if code:
        named = _scalar_type(code)
        return named.size if named else math.nan
    kind = INPUT_TYPES.get(call.types[0])
    return 8 if widen and kind is not None and kind.category < FLOAT else size


def norm(backward: bool) -> Formula:
    """Norms read their inputs and write an input-sized output (backward: also the weight
    and bias gradients, sized as the weight); one FLOP per element (a lower bound)."""

    def formula(call: Call) -> Work | None:
        t = _tensor(call, 0)
        if t is None:
            return None
        n = _numel(t[0])
        written = n * t[1]
        if backward:
            weights = (_nbytes(call, i) for i in range(5, min(len(call.types), 7)))
            written += 2 * max(weights, default=0)
        return _work_memory(call, written, n)

    return formula


def embedding(call: Call) -> Work | None:
    """`embedding(weight, indices)`: indices read, one row per index read and written."""
    tw, ti = _tensor(call, 0), _tensor(call, 1)
    if not tw or not ti or len(tw[0]) != 2:
        return None
    out = _numel(ti[0]) * tw[0][1] * tw[1]
    return Work(0.0, float(_nbytes(call, 1) + 2 * out), tw[2], MEMORY)


def embedding_backward(call: Call) -> Work | None:
    """`embedding_dense_backward(grad_output, indices, num_weights, ...)`: the gradient and
    the indices read, the weight gradient (num_weights rows) written."""
    tg = _tensor(call, 0)
    rows = _concrete(call, 2)
    if not tg or not tg[0] or not rows.isdigit():
        return None
    written = int(rows) * tg[0][-1] * tg[1]
    return Work(0.0, float(_tensor_bytes(call) + written), tg[2], MEMORY)
