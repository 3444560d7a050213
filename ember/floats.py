"""Exact floating-point formats without numpy: correctly rounded conversion of exact
rationals, bit patterns, and the shortest text that reads back to the same bits.

Float constants in the IR are stored as bit patterns; these helpers are how they are made
and printed. Decimal literals are rounded once, from their exact value, straight to the
target format (no double rounding through f64).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

# name -> (significand bits incl. the implicit one, min normal exponent, max exponent, total bits)
FORMATS: dict[str, tuple[int, int, int, int]] = {
    "f16": (11, -14, 15, 16),
    "bf16": (8, -126, 127, 16),
    "f32": (24, -126, 127, 32),
    "f64": (53, -1022, 1023, 64),
}


def round_fraction(q: Fraction, fmt: str) -> float:
    """The value of `fmt` nearest to q (ties to even), as a Python float (exact)."""
    p, emin, emax, _ = FORMATS[fmt]
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    num, den = q.numerator, q.denominator
    e = num.bit_length() - den.bit_length()
    if (num << max(-e, 0)) < (den << max(e, 0)):  # q < 2**e
        e -= 1
    e = max(e, emin)
    shift = e - p + 1  # weight of the last significand bit
    if shift >= 0:
        m, rem = divmod(num, den << shift)
        half = (den << shift)
    else:
        m, rem = divmod(num << -shift, den)
        half = den
    twice = 2 * rem
    if twice > half or (twice == half and m & 1):
        m += 1
    if m == 1 << p:
        m >>= 1
        shift += 1
        e += 1
    if e > emax:
        return sign * math.inf
    return sign * math.ldexp(m, shift)


def round_float(x: float, fmt: str) -> float:
    """Round a Python float (f64) to `fmt`, ties to even. NaN and infinities pass through."""
    if fmt == "f64" or math.isnan(x) or math.isinf(x):
        return x
    return round_fraction(Fraction(x), fmt) if x != 0 else x


def to_bits(x: float, fmt: str) -> int:
    """Bit pattern of x, which must already be exactly representable in fmt."""
    if fmt == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if fmt == "f32":
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if fmt == "f16":
        return struct.unpack("<H", struct.pack("<e", x))[0]
    if fmt == "bf16":
        if math.isnan(x):
            return 0x7FC0 | (0x8000 if math.copysign(1.0, x) < 0 else 0)
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    raise KeyError(fmt)


def from_bits(bits: int, fmt: str) -> float:
    """The value of a bit pattern (NaN payloads are not preserved in the Python float)."""
    if fmt == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if fmt == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if fmt == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if fmt == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    raise KeyError(fmt)


def is_nan_bits(bits: int, fmt: str) -> bool:
    p, _, _, total = FORMATS[fmt]
    exp_mask = ((1 << (total - p)) - 1) << (p - 1)
    return (bits & exp_mask) == exp_mask and (bits & ((1 << (p - 1)) - 1)) != 0


def format_bits(bits: int, fmt: str) -> str:
    """Shortest decimal text that reads back to exactly these bits; hex for NaNs."""
    total = FORMATS[fmt][3]
    if is_nan_bits(bits, fmt):
        return f"0x{bits:0{total // 4}X}"
    x = from_bits(bits, fmt)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if fmt == "f64":
        text = repr(x)
    else:
        for digits in range(1, 18):
            text = f"{x:.{digits}g}"
            if round_fraction(Fraction(text), fmt) == x and to_bits(round_fraction(Fraction(text), fmt), fmt) == bits:
                break
    if text in ("0", "-0"):
        text += ".0"
    elif not any(c in text for c in ".einf"):
        text += ".0"
    return text


def parse_bits(text: str, fmt: str) -> int:
    """Inverse of format_bits: decimal (rounded exactly), `inf`, or `0x...` raw bits."""
    t = text.strip()
    if t.lower().startswith(("0x", "-0x")):
        return int(t, 16) & ((1 << FORMATS[fmt][3]) - 1)
    if t in ("inf", "+inf"):
        return to_bits(math.inf, fmt)
    if t == "-inf":
        return to_bits(-math.inf, fmt)
    x = round_fraction(Fraction(t), fmt)
    if x == 0 and t.startswith("-"):
        x = -0.0
    return to_bits(x, fmt)
