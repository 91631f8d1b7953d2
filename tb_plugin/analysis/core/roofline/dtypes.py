"""Data types of op arguments as the profiler writes them (`Input type`, c10::ScalarType
codes in `Concrete Inputs`), and PyTorch's type promotion: the result type of an
element-wise op over tensors of several types, 0-d tensors and Python numbers.

Promotion follows PyTorch's documented rules (the "Type promotion" section of its tensor
attributes page): categories bool < integer < floating < complex; operands come in three
tiers, dimensioned tensors, 0-d tensors, and wrapped numbers (Python scalars), and a
lower tier changes the result only when its category is higher than every operand above
it (`int32 tensor + 0-d int64 tensor` is int32; `int32 tensor + 2.5` is float32, the
default dtype; `bf16 tensor * 0-d fp32 tensor` is bf16). Types the rules leave undefined
(fp8 mixed with another type) give None: unknown.
"""

from __future__ import annotations

from typing import NamedTuple

BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class DType(NamedTuple):
    name: str
    size: int  # bytes per element
    category: int  # BOOL, INT, FLOAT or COMPLEX
    roof: str | None  # the compute roof it takes (device_peaks.json keys); None: none


_ALL = [
    DType("bool", 1, BOOL, None),
    DType("uint8", 1, INT, "int8"),
    DType("int8", 1, INT, "int8"),
    DType("int16", 2, INT, None),
    DType("int32", 4, INT, None),
    DType("int64", 8, INT, None),
    DType("uint16", 2, INT, None),
    DType("uint32", 4, INT, None),
    DType("uint64", 8, INT, None),
    DType("float16", 2, FLOAT, "fp16"),
    DType("bfloat16", 2, FLOAT, "bf16"),
    DType("float32", 4, FLOAT, "fp32"),
    DType("float64", 8, FLOAT, "fp64"),
    DType("complex32", 4, COMPLEX, None),
    DType("complex64", 8, COMPLEX, None),
    DType("complex128", 16, COMPLEX, None),
    DType("float8_e4m3fn", 1, FLOAT, "fp8"),
    DType("float8_e5m2", 1, FLOAT, "fp8"),
    DType("float8_e4m3fnuz", 1, FLOAT, "fp8"),
    DType("float8_e5m2fnuz", 1, FLOAT, "fp8"),
]
BY_NAME = {d.name: d for d in _ALL}

# The `Input type` strings of tensors (C++ type names).
INPUT_TYPES: dict[str, DType] = {
    text: BY_NAME[name]
    for text, name in {
        "bool": "bool",
        "unsigned char": "uint8",
        "signed char": "int8",
        "short int": "int16",
        "int": "int32",
        "long int": "int64",
        "long": "int64",
        "long long int": "int64",
        "unsigned short int": "uint16",
        "unsigned int": "uint32",
        "unsigned long int": "uint64",
        "unsigned long": "uint64",
        "c10::Half": "float16",
        "c10::BFloat16": "bfloat16",
        "float": "float32",
        "double": "float64",
        "c10::complex<c10::Half>": "complex32",
        "c10::complex<float>": "complex64",
        "c10::complex<double>": "complex128",
        "c10::Float8_e4m3fn": "float8_e4m3fn",
        "c10::Float8_e5m2": "float8_e5m2",
        "c10::Float8_e4m3fnuz": "float8_e4m3fnuz",
        "c10::Float8_e5m2fnuz": "float8_e5m2fnuz",
    }.items()
}

# c10::ScalarType codes, as a `dtype` argument is recorded in `Concrete Inputs`.
SCALAR_TYPES: dict[int, DType] = {
    code: BY_NAME[name]
    for code, name in {
        0: "uint8",
        1: "int8",
        2: "int16",
        3: "int32",
        4: "int64",
        5: "float16",
        6: "float32",
        7: "float64",
        8: "complex32",
        9: "complex64",
        10: "complex128",
        11: "bool",
        15: "bfloat16",
        23: "float8_e5m2",
        24: "float8_e4m3fn",
        25: "float8_e5m2fnuz",
        26: "float8_e4m3fnuz",
        27: "uint16",
        28: "uint32",
        29: "uint64",
    }.items()
}

# The type a Python number takes as an operand: the default dtype of its category.
DEFAULT = {BOOL: BY_NAME["bool"], INT: BY_NAME["int64"], FLOAT: BY_NAME["float32"]}
DEFAULT[COMPLEX] = BY_NAME["complex64"]
_INT_RANK = ["int8", "int16", "int32", "int64"]
_FLOAT_RANK = ["float16", "float32", "float64"]
_COMPLEX_OF = {"float16": "complex32", "float32": "complex64", "float64": "complex128"}


def scalar_type(code: str) -> DType | None:
    """The type a ScalarType code names ("15": bfloat16); None: not a known code."""
    return SCALAR_TYPES.get(int(code)) if code.strip().isdigit() else None


def number_category(text: str) -> int | None:
    """The category of a recorded Python number ("2": INT, "0.5": FLOAT, "True": BOOL);
    None: not recorded or not read."""
    text = text.strip()
    if text in ("True", "False"):
        return BOOL
    try:
        int(text)
        return INT
    except ValueError:
        pass
    try:
        float(text)
        return FLOAT
    except ValueError:
        return COMPLEX if text.startswith("(") and text.endswith(")") else None


def promote(a: DType | None, b: DType | None) -> DType | None:
    """torch.promote_types: the smallest type of no lower category holding both."""
    if a is None or b is None or a == b:
        return a or b
    if "float8" in a.name or "float8" in b.name:
        return None  # undefined in PyTorch
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.category == COMPLEX and low.category == FLOAT:
            return promote(high, _complex_of(low))
        return high
    if a.category == INT:
        return _promote_int(a, b)
    if a.category == FLOAT:
        if "bfloat16" in (a.name, b.name):  # with float16: float32; with wider: that
            other = b if a.name == "bfloat16" else a
            return BY_NAME["float32"] if other.name == "float16" else other
        return _wider(a, b, _FLOAT_RANK)
    return _wider(a, b, ["complex32", "complex64", "complex128"])


def _promote_int(a: DType, b: DType) -> DType | None:
    if {a.name, b.name} & {"uint16", "uint32", "uint64"}:
        return None  # the shell unsigned types do not promote with other integers
    if a.name == "uint8" or b.name == "uint8":
        other = b if a.name == "uint8" else a
        return BY_NAME["int16"] if other.name == "int8" else other
    return _wider(a, b, _INT_RANK)


def _wider(a: DType, b: DType, rank: list[str]) -> DType:
    return a if rank.index(a.name) > rank.index(b.name) else b


def _complex_of(t: DType) -> DType | None:
    name = _COMPLEX_OF.get(t.name)
    return BY_NAME[name] if name else None


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    """A tier's type with the tiers below it: the lower ones count only where their
    category is higher."""
    if higher is None or lower is None:
        return higher or lower
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return _complex_of(higher) if higher.category == FLOAT else lower
    if higher.category == FLOAT:
        return higher
    if higher.category == BOOL or lower.category == FLOAT:
        return promote(higher, lower)
    return higher


class Operand(NamedTuple):
    dtype: DType
    tier: int  # 0: a tensor with dimensions, 1: a 0-d tensor, 2: a Python number


def result_type(operands: list[Operand]) -> DType | None:
    """The result type of an element-wise op over these operands; None: undefined."""
    tiers: list[DType | None] = [None, None, None]
    for o in operands:
        if "float8" in o.dtype.name and tiers[o.tier] not in (None, o.dtype):
            return None
        tiers[o.tier] = promote(tiers[o.tier], o.dtype) if tiers[o.tier] else o.dtype
        if tiers[o.tier] is None:
            return None
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))
