"""The per-op formulas of docs/metrics.md ("Roofline") over raw args (`roofline_work.Args`):
`work(name, dims, types, concrete)` -> (flops, bytes, unsized elements, roof dtype,
"compute" | "memory"), or None where the shapes do not fit. `bytes` None: unknown.
Standard library only; written from the docs, not from the product's code."""

from __future__ import annotations

from typing import Any, Callable

from .roofline_work import TYPES, Args, cat_elements, numel, out_type

Result = tuple[float, "float | None", int, "str | None", str]


def _roof(t: str | None) -> str | None:
    return TYPES[t][2] if t in TYPES else None


def _first(a: Args) -> tuple[list[int], str] | None:
    return next((t for i in range(len(a.types)) if (t := a.tensor(i))), None)


# --- matrix products ------------------------------------------------------------------------


def _gemm(a: Args, m: int, n: int, k: int, batch: int, first: int, out_size: int | None) -> Result:
    t = a.tensor(first)
    written = batch * m * n * out_size if out_size is not None else None
    total = a.read() + written if written is not None else None
    return 2.0 * batch * m * n * k, total, 0, _roof(t[1] if t else None), "compute"


def _mm(ia: int, ib: int) -> Callable[[Args], Result | None]:
    def f(a: Args) -> Result | None:
        x, y = a.tensor(ia), a.tensor(ib)
        if not x or not y or len(x[0]) != len(y[0]) or len(x[0]) not in (2, 3):
            return None
        if x[0][-1] != y[0][-2]:
            return None
        batch = x[0][0] if len(x[0]) == 3 else 1
        return _gemm(a, x[0][-2], y[0][-1], x[0][-1], batch, ia, TYPES[x[1]][0])

    return f


def _matmul(a: Args) -> Result | None:
    x, y = a.tensor(0), a.tensor(1)
    if not x or not y or not x[0] or not y[0]:
        return None
    sx = [1, *x[0]] if len(x[0]) == 1 else list(x[0])
    sy = [*y[0], 1] if len(y[0]) == 1 else list(y[0])
    if sx[-1] != sy[-2]:
        return None
    bx, by = sx[:-2], sy[:-2]
    width = max(len(bx), len(by))
    bx, by = [1] * (width - len(bx)) + bx, [1] * (width - len(by)) + by
    batch = numel([max(p, q) for p, q in zip(bx, by)])
    return _gemm(a, sx[-2], sy[-1], sx[-1], batch, 0, TYPES[x[1]][0])


def _linear(a: Args) -> Result | None:
    x, w = a.tensor(0), a.tensor(1)
    if not x or not w or len(w[0]) != 2 or not x[0] or x[0][-1] != w[0][1]:
        return None
    return _gemm(a, numel(x[0][:-1]), w[0][0], w[0][1], 1, 0, TYPES[x[1]][0])


def _out_size(a: Args, at: int, default: str) -> int | None:
    t = a.code_type(at)
    if t is None:
        return None
    return TYPES[t or default][0]


def _scaled_mm(a: Args) -> Result | None:
    x, y = a.tensor(0), a.tensor(1)
    if not x or not y or len(x[0]) != 2 or len(y[0]) != 2 or x[0][1] != y[0][0]:
        return None
    return _gemm(a, x[0][0], y[0][1], x[0][1], 1, 0, _out_size(a, 6, x[1]))


def _grouped(out_at: int, default: str | None) -> Callable[[Args], Result | None]:
    def f(a: Args) -> Result | None:
        x, y = a.tensor(0), a.tensor(1)
        if not x or not y:
            return None
        size = _out_size(a, out_at, default or x[1])
        sx, sy = x[0], y[0]
        if len(sx) == 2 and len(sy) == 3 and sx[1] == sy[1]:
            return _gemm(a, sx[0], sy[2], sx[1], 1, 0, size)
        if len(sx) == 3 and len(sy) == 3 and sx[2] == sy[1] and sx[0] == sy[0]:
            return _gemm(a, sx[1], sy[2], sx[2], sx[0], 0, size)
        return None

    return f


# --- convolutions and attention --------------------------------------------------------------


def _ints(text: str) -> list[int] | None:
    text = text.strip().strip("[]()")
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        return None


def _conv(stride: int, pad: int, dil: int, groups: int, transposed: int) -> Callable:
    def f(a: Args) -> Result | None:
        x, w = a.tensor(0), a.tensor(1)
        if not x or not w or len(x[0]) < 3 or len(x[0]) != len(w[0]) or not a.text(stride):
            return None
        xs, ws, nsp = x[0], w[0], len(x[0]) - 2
        params = [(_ints(a.text(i)) or [d]) for i, d in ((stride, 1), (pad, 0), (dil, 1))]
        params = [p * nsp if len(p) == 1 else p for p in params]
        if any(len(p) != nsp for p in params):
            return None
        st, pd, dl = params
        out = [
            (xs[2 + i] + 2 * pd[i] - dl[i] * (ws[2 + i] - 1) - 1) // st[i] + 1 for i in range(nsp)
        ]
        if min(out) <= 0:
            return None
        if transposed >= 0 and a.text(transposed) == "True":
            g = int(a.text(groups) or 1)
            flops = 2.0 * xs[0] * numel(xs[2:]) * xs[1] * ws[1] * numel(ws[2:])
            out_n = xs[0] * ws[1] * g * numel(xs[2:])
        else:
            flops = 2.0 * xs[0] * ws[0] * numel(out) * ws[1] * numel(ws[2:])
            out_n = xs[0] * ws[0] * numel(out)
        roof = _roof(x[1])
        return (
            flops,
            a.read() + out_n * TYPES[x[1]][0],
            0,
            "tf32" if roof == "fp32" else roof,
            "compute",
        )

    return f


def _conv_backward(a: Args) -> Result | None:
    g, x, w = a.tensor(0), a.tensor(1), a.tensor(2)
    if not g or not x or not w or len(x[0]) < 3:
        return None
    xs, ws = x[0], w[0]
    if a.text(7) == "True":
        fwd = 2.0 * xs[0] * numel(xs[2:]) * xs[1] * ws[1] * numel(ws[2:])
    else:
        fwd = 2.0 * xs[0] * ws[0] * numel(g[0][2:]) * ws[1] * numel(ws[2:])
    mask = [m.strip() == "True" for m in a.text(10).strip("[]").split(",") if m.strip()]
    gi, gw = (mask + [True, True])[:2] if mask else (True, True)
    written = a.nbytes(1) * gi + a.nbytes(2) * gw
    roof = _roof(x[1])
    return fwd * (gi + gw), a.read() + written, 0, "tf32" if roof == "fp32" else roof, "compute"


def _attention(q: int, bhsd: bool, causal_at: int, code: bool, backward: bool) -> Callable:
    def f(a: Args) -> Result | None:
        tq, tk, tv = a.tensor(q), a.tensor(q + 1), a.tensor(q + 2)
        if not tq or not tk or not tv or {len(tq[0]), len(tk[0]), len(tv[0])} != {4}:
            return None
        if bhsd:
            b, h, sq, d = tq[0]
            sk = tk[0][2]
        else:
            b, sq, h, d = tq[0]
            sk = tk[0][1]
        dv = tv[0][3]
        flops = 2.0 * b * h * sq * sk * (d + dv)
        flag = a.text(causal_at)
        if (flag not in ("", "0")) if code else flag == "True":
            flops /= 2
        if backward:
            return (
                2 * flops,
                a.read() + sum(a.nbytes(q + i) for i in range(3)),
                0,
                _roof(tq[1]),
                "compute",
            )
        written = numel(tq[0]) // d * dv * TYPES[tq[1]][0]
        return flops, a.read() + written, 0, _roof(tq[1]), "compute"

    return f


COMPUTE: dict[str, Callable[[Args], Result | None]] = {
    "mm": _mm(0, 1),
    "bmm": _mm(0, 1),
    "addmm": _mm(1, 2),
    "baddbmm": _mm(1, 2),
    "matmul": _matmul,
    "linear": _linear,
    "_scaled_mm": _scaled_mm,
    "_grouped_mm": _grouped(4, None),
    "_scaled_grouped_mm": _grouped(7, "c10::BFloat16"),
    "conv1d": _conv(3, 4, 5, 6, -1),
    "conv2d": _conv(3, 4, 5, 6, -1),
    "conv3d": _conv(3, 4, 5, 6, -1),
    "convolution": _conv(3, 4, 5, 8, 6),
    "_convolution": _conv(3, 4, 5, 8, 6),
    "cudnn_convolution": _conv(3, 2, 4, 5, -1),
    "miopen_convolution": _conv(4, 3, 5, 6, -1),
    "convolution_backward": _conv_backward,
    "scaled_dot_product_attention": _attention(0, True, 5, False, False),
    "_scaled_dot_product_flash_attention": _attention(0, True, 4, False, False),
    "_scaled_dot_product_efficient_attention": _attention(0, True, 6, False, False),
    "_scaled_dot_product_cudnn_attention": _attention(0, True, 6, False, False),
    "_flash_attention_forward": _attention(0, False, 8, False, False),
    "_efficient_attention_forward": _attention(0, False, 9, True, False),
    "_cudnn_attention_forward": _attention(0, True, 10, False, False),
    "_scaled_dot_product_flash_attention_backward": _attention(1, True, 11, False, True),
    "_scaled_dot_product_efficient_attention_backward": _attention(1, True, 11, False, True),
    "_scaled_dot_product_cudnn_attention_backward": _attention(1, True, 14, False, True),
    "_flash_attention_backward": _attention(1, False, 11, False, True),
    "_efficient_attention_backward": _attention(1, False, 14, True, True),
    "_cudnn_attention_backward": _attention(1, True, 14, False, True),
}


def work(name: str, dims: Any, types: Any, concrete: Any) -> Result | None:
    """The work of one call of `name` (with its `aten::` prefix), or None."""
    if not name.startswith("aten::") or not isinstance(dims, list) or not isinstance(types, list):
        return None
    from .roofline_memory import MEMORY

    op = name[6:]
    a = Args(dims, types, concrete if isinstance(concrete, list) else [])
    f = COMPUTE.get(op) or MEMORY.get(op)
    if f is None:
        return None
    try:
        r = f(a)
    except (ValueError, IndexError, TypeError, ZeroDivisionError):
        return None
    if r is None or op in ("cat", "stack"):
        return r
    listed = cat_elements(a)
    return (r[0], r[1], r[2] + listed, r[3], r[4]) if listed else r


__all__ = ["work", "out_type", "_first", "_roof"]
