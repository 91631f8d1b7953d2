"""FLOPs and bytes of one op call, from its raw `Input Dims`, `Input type` and `Concrete
Inputs`, written again from docs/metrics.md ("Roofline"), not from the product's code.

`work(name, dims, types, concrete)` gives (flops, bytes, roof dtype, family) or None;
bytes is None where an element size is not in the args (tensor lists: `cat_elements`,
which roofline.py sizes from the cat kernel's name), `nan`-free. Standard library only.
"""

from __future__ import annotations

import math
from typing import Any

# Input type -> (bytes, kind, roof). kind: "b" bool, "i" integer, "f" floating, "c" complex.
TYPES: dict[str, tuple[int, str, str | None]] = {
    "bool": (1, "b", None),
    "unsigned char": (1, "i", "int8"),
    "signed char": (1, "i", "int8"),
    "short int": (2, "i", None),
    "int": (4, "i", None),
    "long int": (8, "i", None),
    "long": (8, "i", None),
    "unsigned short int": (2, "u", None),
    "unsigned int": (4, "u", None),
    "unsigned long int": (8, "u", None),
    "unsigned long": (8, "u", None),
    "long long int": (8, "i", None),
    "c10::Half": (2, "f", "fp16"),
    "c10::BFloat16": (2, "f", "bf16"),
    "float": (4, "f", "fp32"),
    "double": (8, "f", "fp64"),
    "c10::complex<c10::Half>": (4, "c", None),
    "c10::complex<float>": (8, "c", None),
    "c10::complex<double>": (16, "c", None),
    "c10::Float8_e4m3fn": (1, "f", "fp8"),
    "c10::Float8_e5m2": (1, "f", "fp8"),
    "c10::Float8_e4m3fnuz": (1, "f", "fp8"),
    "c10::Float8_e5m2fnuz": (1, "f", "fp8"),
}
# c10::ScalarType code -> Input type string of that type.
CODES = {
    0: "unsigned char",
    1: "signed char",
    2: "short int",
    3: "int",
    4: "long int",
    5: "c10::Half",
    6: "float",
    7: "double",
    8: "c10::complex<c10::Half>",
    9: "c10::complex<float>",
    10: "c10::complex<double>",
    11: "bool",
    15: "c10::BFloat16",
    23: "c10::Float8_e5m2",
    24: "c10::Float8_e4m3fn",
    25: "c10::Float8_e5m2fnuz",
    26: "c10::Float8_e4m3fnuz",
}
NON_TENSOR = {"", "Scalar", "ScalarList", "TensorList", "GenericList", "Int", "c10::string_view"}
KIND_ORDER = "bifc"  # "u": the shell unsigned types (uint16/32/64), which promote with nothing
DEFAULT_OF = {"b": "bool", "i": "long int", "f": "float", "c": "c10::complex<float>"}


def numel(shape: list[int]) -> int:
    return math.prod(shape)


class Args:
    def __init__(self, dims: list[Any], types: list[str], concrete: list[str]):
        self.dims, self.types, self.concrete = dims, types, concrete

    def tensor(self, i: int) -> tuple[list[int], str] | None:
        if i < len(self.dims) and i < len(self.types) and self.types[i] in TYPES:
            d = self.dims[i]
            if isinstance(d, list) and all(isinstance(x, int) for x in d):
                return d, self.types[i]
        return None

    def nbytes(self, i: int) -> int:
        t = self.tensor(i)
        return numel(t[0]) * TYPES[t[1]][0] if t else 0

    def read(self) -> float:
        """Bytes of the tensor inputs; nan where one has dimensions and a type not known."""
        total = 0.0
        for i, kind in enumerate(self.types):
            d = self.dims[i] if i < len(self.dims) else None
            shaped = isinstance(d, list) and d and all(isinstance(x, int) for x in d)
            if kind not in TYPES and kind not in NON_TENSOR and shaped:
                return math.nan
            total += self.nbytes(i)
        return total

    def text(self, i: int) -> str:
        return self.concrete[i].strip() if i < len(self.concrete) else ""

    def code_type(self, i: int) -> str | None:
        """The type a ScalarType-code argument names; "" recorded empty; None unknown."""
        if i >= len(self.concrete):
            return None
        t = self.text(i)
        if t == "":
            return ""
        return CODES.get(int(t)) if t.isdigit() else None


def cat_elements(a: Args) -> int:
    n = 0
    for i, kind in enumerate(a.types):
        if (
            kind in ("TensorList", "GenericList")
            and i < len(a.dims)
            and isinstance(a.dims[i], list)
        ):
            n += sum(
                numel(d)
                for d in a.dims[i]
                if isinstance(d, list) and all(isinstance(x, int) for x in d)
            )
    return n


# --- type promotion: the rules of PyTorch's "Type promotion" documentation ---------------


def _kind(t: str) -> int:
    return KIND_ORDER.index(TYPES[t][1].replace("u", "i"))


def promote_two(x: str | None, y: str | None) -> str | None:
    if x is None or y is None or x == y:
        return x or y
    if "Float8" in x or "Float8" in y:
        return None
    if TYPES[x][1] == "u" or TYPES[y][1] == "u":
        return None
    kx, ky = _kind(x), _kind(y)
    if kx != ky:
        hi, lo = (x, y) if kx > ky else (y, x)
        if TYPES[hi][1] == "c" and TYPES[lo][1] == "f":
            # complex with a float: complex of the wider float part
            part = {4: "c10::Half", 8: "float", 16: "double"}[TYPES[hi][0]]
            wider = promote_two(part, lo)
            return {"c10::Half": "c10::complex<c10::Half>", "float": "c10::complex<float>"}.get(
                wider or "", "c10::complex<double>"
            )
        return hi
    if {x, y} == {"c10::Half", "c10::BFloat16"}:
        return "float"
    if {x, y} == {"unsigned char", "signed char"}:
        return "short int"
    if "unsigned char" in (x, y):
        return y if x == "unsigned char" else x
    return x if TYPES[x][0] >= TYPES[y][0] else y


_COMPLEX_WITH = {
    "c10::Half": "c10::complex<c10::Half>",
    "float": "c10::complex<float>",
    "double": "c10::complex<double>",
}


def _over(upper: str | None, lower: str | None) -> str | None:
    """An upper tier's type with a lower tier's: the lower one counts only where its
    category is higher, and then it is the result (a complex number over a float
    tensor keeps the tensor's width)."""
    if upper is None:
        return lower
    if lower is None or _kind(lower) <= _kind(upper):
        return upper
    if TYPES[lower][1] == "c" and TYPES[upper][1] == "f":
        return _COMPLEX_WITH.get(upper)
    return lower


def result_of(dimensioned: list[str], zero_dim: list[str], numbers: list[str]) -> str | None:
    """Dimensioned tensors decide; 0-d tensors only with a higher category than theirs,
    numbers only with a higher category than both (then the numbers' default type)."""
    tiers: list[str | None] = []
    for group in (dimensioned, zero_dim, numbers):
        r: str | None = None
        for t in group:
            r = promote_two(r, t) if r else t
            if r is None:
                return None
        tiers.append(r)
    return _over(tiers[0], _over(tiers[1], tiers[2]))


def out_type(a: Args, operands: list[int] | None, to_float: bool) -> str | None:
    """The promoted output type of an element-wise call (None: unknown)."""
    dimensioned: list[str] = []
    zero_dim: list[str] = []
    numbers: list[str] = []
    unread = False
    for i in operands if operands is not None else range(len(a.types)):
        t = a.tensor(i)
        if t and t[0]:
            dimensioned.append(t[1])
        elif t and t[1] in ("double", "c10::complex<double>"):  # a Python float/complex
            numbers.append(DEFAULT_OF[TYPES[t[1]][1]])
        elif t:
            zero_dim.append(t[1])
        elif i < len(a.types) and a.types[i] == "Scalar":
            v = a.text(i)
            if v in ("True", "False"):
                numbers.append("bool")
            elif _is_int(v):
                numbers.append("long int")
            elif _is_float(v):
                numbers.append("float")
            elif v.startswith("(") and v.endswith(")"):
                numbers.append("c10::complex<float>")
            else:
                unread = True
    r = result_of(dimensioned, zero_dim, numbers)
    if r is None or (unread and TYPES[r][1] in "biu"):
        return None
    if to_float and TYPES[r][1] in "biu":
        return "float"
    return r


def _is_int(v: str) -> bool:
    try:
        int(v)
        return True
    except ValueError:
        return False


def _is_float(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


Work = tuple[float, "float | None", "str | None", str]  # flops, bytes, roof, "compute"|"memory"
