"""The memory-bound formulas of docs/metrics.md ("Roofline") over raw args: element-wise
ops (output in the promoted type), reductions, norms, embedding, copies, `cat`/`stack`.
Standard library only; written from the docs, not from the product's code."""

from __future__ import annotations

import math
from typing import Callable

from .roofline_ops import Result, _first, _roof
from .roofline_work import TYPES, Args, cat_elements, numel, out_type

UNARY = [
    "neg",
    "abs",
    "exp",
    "exp2",
    "log",
    "log2",
    "log1p",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "silu",
    "erf",
    "sign",
    "floor",
    "ceil",
    "round",
]
POINTWISE = UNARY + [
    "add",
    "sub",
    "mul",
    "div",
    "rsub",
    "pow",
    "gelu",
    "mish",
    "hardtanh",
    "hardswish",
    "leaky_relu",
    "elu",
    "clamp",
    "clamp_min",
    "clamp_max",
    "where",
    "masked_fill",
    "lerp",
    "addcmul",
    "addcdiv",
    "maximum",
    "minimum",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "threshold_backward",
    "hardtanh_backward",
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "native_dropout",
    "dropout",
    "bitwise_and",
    "bitwise_or",
    "bitwise_not",
]
COMPARE = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "isnan",
    "isinf",
    "logical_and",
    "logical_or",
    "logical_not",
]
REDUCE = ["sum", "mean", "amax", "amin", "logsumexp", "prod", "norm", "var", "std"]
# Functional-form argument counts: one more input that is a tensor is an `out=` tensor.
ARITY = {
    **dict.fromkeys(UNARY, 1),
    **dict.fromkeys(("mul", "div", "pow", "maximum", "minimum", "gelu"), 2),
    **dict.fromkeys(("add", "sub", "rsub", "where", "clamp", "lerp"), 3),
    **{c: 2 for c in COMPARE if c not in ("isnan", "isinf", "logical_not")},
}
FLOAT_OUT = set(UNARY) - {"neg", "abs", "sign", "floor", "ceil", "round", "relu"}
# Which inputs take part in the output's type (None: all), and `dtype` arguments.
OPERANDS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(
        ("add", "sub", "rsub", "div", "threshold_backward", "hardtanh_backward"), (0, 1)
    ),
    "where": (1, 2),
    **dict.fromkeys(("addcmul", "addcdiv"), (0, 1, 2)),
    **dict.fromkeys(
        [
            "masked_fill",
            "lerp",
            "softmax",
            "log_softmax",
            "_softmax",
            "_log_softmax",
            "_softmax_backward_data",
            "_log_softmax_backward_data",
            "native_dropout",
            "dropout",
            "gelu",
            "hardtanh",
            "leaky_relu",
            "elu",
        ],
        (0,),
    ),
}
DTYPE_ARG = {
    "softmax": 2,
    "log_softmax": 2,
    "_softmax_backward_data": 3,
    "_log_softmax_backward_data": 3,
}


def _pointwise(op: str, compare: bool) -> Callable[[Args], Result | None]:
    def f(a: Args) -> Result | None:
        out_tensor = None
        arity = ARITY.get(op, 0)
        if arity and len(a.types) > arity and a.tensor(len(a.types) - 1):
            out_tensor = a.tensor(len(a.types) - 1)
            a = Args(a.dims[:-1], a.types[:-1], a.concrete[: len(a.types) - 1])
        shapes = [t[0] for i in range(len(a.types)) if (t := a.tensor(i))]
        if not shapes:
            return None
        rank = max(len(s) for s in shapes)
        n = numel([max(c) for c in zip(*([1] * (rank - len(s)) + s for s in shapes))])
        if op in DTYPE_ARG and a.text(DTYPE_ARG[op]):
            typed = a.code_type(DTYPE_ARG[op]) or None
        else:
            to_float = op in FLOAT_OUT or (op == "div" and not a.text(2))
            typed = out_type(a, OPERANDS.get(op), to_float)
        size = 1 if compare else (TYPES[typed][0] if typed else None)
        if out_tensor:
            size = TYPES[out_tensor[1]][0]
        roof = _roof(typed) if typed else _roof(_first(a)[1])  # type: ignore[index]
        return float(n), (a.read() + n * size) if size is not None else None, 0, roof, "memory"

    return f


def _memory(a: Args, written: float, flops: float) -> Result | None:
    t = _first(a)
    return (flops, a.read() + written, 0, _roof(t[1]), "memory") if t else None


def _inplace(a: Args) -> Result | None:
    t = a.tensor(0)
    return _memory(a, a.nbytes(0), numel(t[0])) if t else None


def _fill(a: Args) -> Result | None:
    t = a.tensor(0)
    return (0.0, a.nbytes(0), 0, _roof(t[1]), "memory") if t else None


def _copy(a: Args) -> Result | None:
    dst, src = a.tensor(0), a.tensor(1)
    return (0.0, a.nbytes(0) + a.nbytes(1), 0, _roof(src[1]), "memory") if dst and src else None


def _copy_out(dtype_at: int) -> Callable[[Args], Result | None]:
    def f(a: Args) -> Result | None:
        t = a.tensor(0)
        if not t:
            return None
        size = TYPES[t[1]][0]
        if dtype_at >= 0:
            named = a.code_type(dtype_at)
            size = TYPES[named or t[1]][0] if named is not None else None
        n = numel(t[0])
        return (
            0.0,
            n * TYPES[t[1]][0] + n * size if size is not None else None,
            0,
            _roof(t[1]),
            "memory",
        )

    return f


def _cat(a: Args) -> Result | None:
    n = cat_elements(a)
    return (0.0, 0.0, 2 * n, None, "memory") if n else None


# Reductions: where the dim is, where a dtype is, what a 2-argument call's second
# argument is ("dtype": sum(x, dtype); "other": var(x, unbiased), norm(x, p)), and
# whether integer inputs sum to int64.
REDUCE_ARGS = {
    "sum": (1, 3, "dtype", True),
    "prod": (1, 3, "dtype", True),
    "mean": (1, 3, "dtype", False),
    "var": (1, -1, "other", False),
    "std": (1, -1, "other", False),
    "norm": (2, 4, "other", False),
}


def _reduce_as(op: str) -> Callable[[Args], Result | None]:
    dim_at, dtype_at, short, widen = REDUCE_ARGS.get(op, (1, -1, "", False))

    def f(a: Args) -> Result | None:
        t = a.tensor(0)
        if not t:
            return None
        if short and len(a.types) == 2:
            text, dtype_at_ = "", (1 if short == "dtype" else -1)
        else:
            text, dtype_at_ = a.text(dim_at).strip("[]()"), dtype_at
        try:
            dims = [int(p) for p in text.split(",") if p.strip()]
        except ValueError:
            return None
        shape = t[0]
        gone = {d % max(len(shape), 1) for d in dims}
        kept = numel([s for i, s in enumerate(shape) if i not in gone]) if dims else 1
        named = a.code_type(dtype_at_) if dtype_at_ >= 0 and a.text(dtype_at_) else ""
        if named is None:
            return _memory(a, math.nan, numel(shape))
        if named:
            size = TYPES[named][0]
        elif widen and TYPES[t[1]][1] in "biu":
            size = 8
        else:
            size = TYPES[t[1]][0]
        return _memory(a, kept * size, numel(shape))

    return f


def _norm(backward: bool) -> Callable[[Args], Result | None]:
    def f(a: Args) -> Result | None:
        t = a.tensor(0)
        if not t:
            return None
        written = a.nbytes(0)
        if backward:
            written += 2 * max((a.nbytes(i) for i in range(5, min(len(a.types), 7))), default=0)
        return _memory(a, written, numel(t[0]))

    return f


def _embedding(a: Args) -> Result | None:
    w, idx = a.tensor(0), a.tensor(1)
    if not w or not idx or len(w[0]) != 2:
        return None
    rows = numel(idx[0]) * w[0][1] * TYPES[w[1]][0]
    return 0.0, a.nbytes(1) + 2 * rows, 0, _roof(w[1]), "memory"


def _embedding_backward(a: Args) -> Result | None:
    g = a.tensor(0)
    if not g or not g[0] or not a.text(2).isdigit():
        return None
    return 0.0, a.read() + int(a.text(2)) * g[0][-1] * TYPES[g[1]][0], 0, _roof(g[1]), "memory"


MEMORY: dict[str, Callable[[Args], Result | None]] = {
    **{op: _pointwise(op, False) for op in POINTWISE},
    **{op + "_": _inplace for op in POINTWISE},
    **{op: _pointwise(op, True) for op in COMPARE},
    **{op: _reduce_as(op) for op in REDUCE},
    "fill_": _fill,
    "zero_": _fill,
    "copy_": _copy,
    "clone": _copy_out(-1),
    "contiguous": _copy_out(-1),
    "_to_copy": _copy_out(1),
    "cat": _cat,
    "stack": _cat,
    "embedding": _embedding,
    "embedding_backward": _embedding_backward,
    "embedding_dense_backward": _embedding_backward,
    **dict.fromkeys(
        [
            "layer_norm",
            "native_layer_norm",
            "rms_norm",
            "_fused_rms_norm",
            "group_norm",
            "native_group_norm",
            "batch_norm",
            "native_batch_norm",
            "_batch_norm_impl_index",
            "cudnn_batch_norm",
        ],
        _norm(False),
    ),
    **dict.fromkeys(
        ["native_layer_norm_backward", "native_batch_norm_backward", "cudnn_batch_norm_backward"],
        _norm(True),
    ),
}
