"""Exact floating-point formats without numpy: correctly rounded conversion of exact
rationals, bit patterns, and the shortest text that reads back to the same bits.

Float constants in the IR are stored as bit patterns; these helpers are how they are made
and printed. Decimal literals are rounded once, from their exact value, straight to the
target format (no double rounding through f64).
"""

from __future__ import annotations

import math
import re
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


# Limits of exact decimal text, so that reading any literal takes bounded time: the
# value's decimal exponent (of its leading digit) within +-MAX_DECIMAL_EXPONENT, and at
# most MAX_DIGITS significant digits (an f64 needs at most 767 to be written exactly).
MAX_DECIMAL_EXPONENT = 1000
MAX_DIGITS = 1000
_DECIMAL = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$")


class DecimalRangeError(ValueError):
    """Decimal text beyond the limits above (or not a decimal number at all)."""


def parse_decimal(text: str) -> Fraction:
    """The exact value of decimal text such as `-1.5e-3` (underscores allowed), in time
    bounded by the limits above; raises DecimalRangeError beyond them."""
    m = _DECIMAL.match(text.strip().replace("_", ""))
    if m is None or not (m.group(2) or m.group(3)):
        raise DecimalRangeError(f"`{text}` is not a decimal number")
    sign, whole, frac, exp = m.group(1), m.group(2) or "", m.group(3) or "", m.group(4)
    digits = (whole + frac).lstrip("0")
    if not digits:
        return Fraction(0)
    # an exponent of many digits is out of range whatever the significand is
    e_text = (exp or "0").lstrip("+-").lstrip("0") or "0"
    if len(e_text) > 6:
        raise DecimalRangeError(f"the exponent of `{text}` is out of range (beyond 1e+-{MAX_DECIMAL_EXPONENT})")
    e = int(exp or "0") - len(frac)
    significant = digits.rstrip("0")
    e += len(digits) - len(significant)
    if len(significant) > MAX_DIGITS:
        raise DecimalRangeError(f"`{text[:20]}...` has more than {MAX_DIGITS} significant digits")
    leading = e + len(significant) - 1          # decimal exponent of the leading digit
    if abs(leading) > MAX_DECIMAL_EXPONENT:
        raise DecimalRangeError(f"`{text if len(text) < 40 else text[:20] + '...'}` is out of range: "
                                f"its magnitude is 1e{leading:+d} (constants are limited to "
                                f"1e+-{MAX_DECIMAL_EXPONENT})")
    n = int(significant)
    q = Fraction(n * 10 ** e) if e >= 0 else Fraction(n, 10 ** -e)
    return -q if sign == "-" else q


def describe(q) -> str:
    """Short text for an exact constant (an int or a Fraction of any size), for messages."""
    if isinstance(q, bool) or not isinstance(q, (int, Fraction)):
        return str(q)
    if q == 0:
        return "0"
    if (isinstance(q, int) or q.denominator == 1) and abs(int(q)).bit_length() <= 64:
        return str(int(q))
    try:
        x = float(q)
        if x != 0 and math.isfinite(x):
            return f"{x:g}"
    except OverflowError:
        pass
    a = abs(Fraction(q))
    e = math.floor((a.numerator.bit_length() - a.denominator.bit_length()) * math.log10(2))
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    while Fraction(10) ** e > a:
        e -= 1
    lead = int(a / Fraction(10) ** e)
    return f"{'-' if q < 0 else ''}{lead}e{e:+d} (about)"


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
    x = round_fraction(parse_decimal(t), fmt)
    if x == 0 and t.startswith("-"):
        x = -0.0
    return to_bits(x, fmt)
