"""The compiled scanner reads every number as Python's float() does (correctly rounded):
the fast path (at most 2**53 and a power of ten up to 22), the exact 128-bit path for
up to 19 digits (timestamps of 17 digits, as tiled and converted traces have them; on
x86-64 a fraction's division is one hardware division), and strtod beyond; digits are
gathered eight at a time. Checked against float() on many decimal texts near the paths'
edges."""

from __future__ import annotations

import random

import numpy as np
import pytest
from kinetoscope.ingest import native_chunk

pytestmark = pytest.mark.skipif(
    native_chunk._scan is None, reason="the compiled scanner is not built here"
)


def _decimal(rng: random.Random) -> str:
    mantissa = rng.choice(
        [
            rng.getrandbits(64) % 10**19,
            rng.randint(10**15, 10**17),
            2**53 + rng.randint(-4, 4),
            rng.randint(1, 10**6),
        ]
    )
    if rng.random() < 0.25:
        mantissa = mantissa - mantissa % 10 + 5  # near a half
    digits = str(mantissa)
    shift = rng.randint(-21, 21)
    if shift >= 0:
        text = digits + "0" * rng.randint(0, 3) + ("." + "0" * rng.randint(1, 3) if shift else "")
    else:
        digits = digits.rjust(-shift + 1, "0")
        text = digits[:shift] + "." + digits[shift:]
    if rng.random() < 0.2:
        text += f"e{rng.randint(-30, 30)}"
    return ("-" if rng.random() < 0.2 else "") + text


@pytest.mark.parametrize("seed", range(4))
def test_numbers_read_as_python_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    texts = [_decimal(rng) for _ in range(50_000)]
    texts += ["1419123249308.9338", "9007199254740993", "9007199254740993.000", "0.1", "-0"]
    body = ",".join(f'{{"ph": "X", "ts": {t}}}' for t in texts).encode()
    chunk = native_chunk.chunk_from_text(body)
    assert chunk is not None
    want = np.array([float(t) + 0.0 for t in texts])
    wrong = np.flatnonzero(chunk.cols["ts"] != want)
    assert [texts[i] for i in wrong[:5]] == []


def test_float32_columns_round_as_numpy_does_past_their_range() -> None:
    texts = ["3.4028234663852886e38", "3.4028235677973362e38", "3.4028235677973366e38"]
    texts += ["1e39", "-3.4028235677973366e38", "-1e300", "0.1", "1e-50"]
    body = ",".join(f'{{"ph": "X", "args": {{"blocks per SM": {t}}}}}' for t in texts).encode()
    chunk = native_chunk.chunk_from_text(body)
    assert chunk is not None
    with np.errstate(over="ignore"):
        want = np.array([float(t) for t in texts]).astype(np.float32)
    assert chunk.cols["blocks_per_sm"].tolist() == want.tolist()


@pytest.mark.parametrize("places", range(1, 20))
def test_wide_fractions_round_as_python_rounds_them(places: int) -> None:
    """Mantissas past 2**53 (up to 19 digits) with `places` fraction digits, halves and
    their neighbours among them: the path that divides by a power of ten."""
    rng = random.Random(places)
    mantissas = [rng.randint(2**53, 10**19 - 1) for _ in range(3_000)]
    mantissas += [m - m % 10 + 5 for m in mantissas[:1_000]]  # ...5: near a half
    mantissas += [2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 10**19 - 1, 10**18 + 1]
    mantissas = [m for m in mantissas if m < 10**19]
    texts = []
    for m in mantissas:
        digits = str(m).rjust(places + 1, "0")
        texts.append(digits[:-places] + "." + digits[-places:])
    body = ",".join(f'{{"ph": "X", "ts": {t}}}' for t in texts).encode()
    chunk = native_chunk.chunk_from_text(body)
    assert chunk is not None
    want = np.array([float(t) for t in texts])
    wrong = np.flatnonzero(chunk.cols["ts"] != want)
    assert [texts[i] for i in wrong[:5]] == []
