"""Which formula an op name takes (names without their `aten::` prefix). An op not listed
has no work: unknown, and its kernels take the work of the nearest enclosing op that has
some."""

from __future__ import annotations

from functools import partial

from .formulas import (
    Call,
    Work,
    _grouped_mm_at,
    _linear,
    _matmul,
    _mm_at,
    _scaled_mm,
    list_elements,
)
from .nn_formulas import (
    AttnArgs,
    ConvArgs,
    Formula,
    Pointwise,
    attention,
    concat,
    conv_backward,
    conv_forward,
    copy_into,
    copy_out,
    elementwise,
    embedding,
    embedding_backward,
    fill,
    inplace,
    norm,
    reduction,
)

_GEMMS: dict[str, Formula] = {
    "mm": _mm_at(0, 1),
    "bmm": _mm_at(0, 1),
    "addmm": _mm_at(1, 2),
    "baddbmm": _mm_at(1, 2),
    "matmul": _matmul,
    "linear": _linear,
    "_scaled_mm": _scaled_mm,
    "_grouped_mm": _grouped_mm_at(4, None),
    "_scaled_grouped_mm": _grouped_mm_at(7, 2),  # its out_dtype defaults to bf16
}
_CONVS: dict[str, Formula] = {
    **{f"conv{n}d": conv_forward(ConvArgs(3, 4, 5, 6, -1)) for n in (1, 2, 3)},
    "convolution": conv_forward(ConvArgs(3, 4, 5, 8, 6)),
    "_convolution": conv_forward(ConvArgs(3, 4, 5, 8, 6)),
    "cudnn_convolution": conv_forward(ConvArgs(3, 2, 4, 5, -1)),
    "miopen_convolution": conv_forward(ConvArgs(4, 3, 5, 6, -1)),
    "convolution_backward": conv_backward,
}
_ATTENTION: dict[str, Formula] = {
    "scaled_dot_product_attention": attention(AttnArgs(0, "bhsd", 5, False, False)),
    "_scaled_dot_product_flash_attention": attention(AttnArgs(0, "bhsd", 4, False, False)),
    "_scaled_dot_product_efficient_attention": attention(AttnArgs(0, "bhsd", 6, False, False)),
    "_scaled_dot_product_cudnn_attention": attention(AttnArgs(0, "bhsd", 6, False, False)),
    "_flash_attention_forward": attention(AttnArgs(0, "bshd", 8, False, False)),
    "_efficient_attention_forward": attention(AttnArgs(0, "bshd", 9, True, False)),
    "_cudnn_attention_forward": attention(AttnArgs(0, "bhsd", 10, False, False)),
    "_scaled_dot_product_flash_attention_backward": attention(AttnArgs(1, "bhsd", 11, False, True)),
    "_scaled_dot_product_efficient_attention_backward": attention(
        AttnArgs(1, "bhsd", 11, False, True)
    ),
    "_scaled_dot_product_cudnn_attention_backward": attention(AttnArgs(1, "bhsd", 14, False, True)),
    "_flash_attention_backward": attention(AttnArgs(1, "bshd", 11, False, True)),
    "_efficient_attention_backward": attention(AttnArgs(1, "bshd", 14, True, True)),
    "_cudnn_attention_backward": attention(AttnArgs(1, "bhsd", 14, False, True)),
}
# One input, one output of its shape (arity 1 in their functional form).
_UNARY = [
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
_POINTWISE = [
    *_UNARY,
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
_COMPARISONS = [
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
_REDUCTIONS = ["sum", "mean", "amax", "amin", "logsumexp", "prod", "norm", "var", "std"]


# Arguments of the functional form, where an `out=` form is seen in traces (one more).
_ARITY = {
    **{n: 1 for n in _UNARY},
    **{n: 2 for n in ["mul", "div", "pow", "maximum", "minimum", "gelu"]},
    **{n: 3 for n in ["add", "sub", "rsub", "where", "clamp", "lerp"]},
    **{n: 2 for n in _COMPARISONS if n not in ("isnan", "isinf", "logical_not")},
}


# Type promotion of the element-wise ops whose output is not simply the promotion of all
# their tensor and number inputs (the default).
_TO_FLOAT = Pointwise(to_float=True)  # an integer input gives a float output
_TYPING: dict[str, Pointwise] = {
    **{
        n: _TO_FLOAT
        for n in _UNARY
        if n not in ("neg", "abs", "sign", "floor", "ceil", "round", "relu")
    },
    "add": Pointwise((0, 1)),  # alpha is no operand
    "sub": Pointwise((0, 1)),
    "rsub": Pointwise((0, 1)),
    "div": Pointwise((0, 1), to_float=True, mode_at=2),  # true division, unless rounded
    "where": Pointwise((1, 2)),  # the condition is no operand
    "masked_fill": Pointwise((0,)),  # self's type
    "addcmul": Pointwise((0, 1, 2)),
    "addcdiv": Pointwise((0, 1, 2), to_float=True),
    "lerp": Pointwise((0,)),
    "softmax": Pointwise((0,), dtype_at=2),
    "log_softmax": Pointwise((0,), dtype_at=2),
    "_softmax": Pointwise((0,)),
    "_log_softmax": Pointwise((0,)),
    "_softmax_backward_data": Pointwise((0,), dtype_at=3),
    "_log_softmax_backward_data": Pointwise((0,), dtype_at=3),
    "native_dropout": Pointwise((0,)),
    "dropout": Pointwise((0,)),
    "gelu": Pointwise((0,)),
    "hardtanh": Pointwise((0,)),
    "leaky_relu": Pointwise((0,)),
    "elu": Pointwise((0,)),
    "threshold_backward": Pointwise((0, 1)),
    "hardtanh_backward": Pointwise((0, 1)),
}


# Reductions whose arguments are not (self, dim, keepdim): sum/mean/prod(self, dim, keepdim,
# dtype) or (self, dtype); var/std(self, unbiased); norm(self, p, dim, keepdim, dtype).
_REDUCTION: dict[str, Formula] = {
    "sum": reduction(1, 3, "dtype", widen=True),
    "prod": reduction(1, 3, "dtype", widen=True),
    "mean": reduction(1, 3, "dtype"),
    "var": reduction(1, -1, "other"),
    "std": reduction(1, -1, "other"),
    "norm": reduction(2, 4, "other"),
}


def _memory_table() -> dict[str, Formula]:
    table: dict[str, Formula] = {}
    for name in _POINTWISE:
        table[name] = partial(elementwise, arity=_ARITY.get(name, 0), how=_TYPING.get(name))
        table[name + "_"] = inplace
    for name in _COMPARISONS:
        table[name] = partial(elementwise, bool_out=True, arity=_ARITY.get(name, 0))
    for name in _REDUCTIONS:
        table[name] = _REDUCTION.get(name, reduction(1))
    table.update(
        {
            "fill_": fill,
            "zero_": fill,
            "copy_": copy_into,
            "clone": copy_out(-1),
            "contiguous": copy_out(-1),
            "_to_copy": copy_out(1),
            "cat": concat,
            "stack": concat,
            "embedding": embedding,
            "embedding_backward": embedding_backward,
            "embedding_dense_backward": embedding_backward,
            "layer_norm": norm(False),
            "native_layer_norm": norm(False),
            "rms_norm": norm(False),
            "_fused_rms_norm": norm(False),
            "group_norm": norm(False),
            "native_group_norm": norm(False),
            "batch_norm": norm(False),
            "native_batch_norm": norm(False),
            "_batch_norm_impl_index": norm(False),
            "cudnn_batch_norm": norm(False),
            "native_layer_norm_backward": norm(True),
            "native_batch_norm_backward": norm(True),
            "cudnn_batch_norm_backward": norm(True),
        }
    )
    return table


_CONCAT: Formula = concat
FORMULAS: dict[str, Formula] = {**_GEMMS, **_CONVS, **_ATTENTION, **_memory_table()}


def formula_of(op_name: str) -> Formula | None:
    """The formula of an aten op name (`aten::mm`), or None."""
    return FORMULAS.get(op_name[6:]) if op_name.startswith("aten::") else None


def work_of(op_name: str, call: Call) -> Work | None:
    formula = formula_of(op_name)
    if formula is None:
        return None
    try:
        work = formula(call)
        # A tensor list outside `cat`/`stack` (read once): its size comes as theirs does.
        lists = list_elements(call) if formula is not _CONCAT else 0
        return work._replace(unsized=work.unsized + lists) if work and lists else work
    except (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError):
        return None  # shapes or arguments not as the schema says
