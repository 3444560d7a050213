"""Scalar values written as text: `-D NAME=VALUE` and `ember run NAME=VALUE` arguments.

One reader for both, so that every way of giving a value checks it the same way: integers
must fit their type, floats are rounded once and a finite value that overflows is an
error (write `inf` for infinity), and a bad value gets a message a user can act on.
"""

from __future__ import annotations

import math
import re

from . import floats
from .ir.types import ScalarType

_DEFINE_INT = re.compile(r"^[+-]?(0x[0-9a-fA-F_]+|0b[01_]+|0o[0-7_]+|[0-9][0-9_]*)$")
_FLOAT_WORDS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def parse_scalar(text: str, t: ScalarType):
    """A -D value for a const parameter of type t; raises ValueError (with a message for
    the user) if it is not a value of t."""
    s = text.strip()
    if t.is_bool:
        if s in ("true", "1"):
            return True
        if s in ("false", "0"):
            return False
        raise ValueError("expected true or false")
    if t.is_int:
        if not _DEFINE_INT.match(s) or len(s) > 80:
            raise ValueError("expected an integer (decimal, 0x hex, 0o octal or 0b binary)")
        v = int(s.replace("_", ""), 0)
        lo, hi = t.int_range()
        if not lo <= v <= hi:
            raise ValueError(f"out of range for {t} ({lo}..{hi})")
        return v
    if s.lower() in _FLOAT_WORDS:
        return _FLOAT_WORDS[s.lower()]
    try:
        q = floats.parse_decimal(s)
    except floats.DecimalRangeError as e:
        raise ValueError(str(e).replace(f"`{s}` is not a decimal number", "expected a number")) from None
    x = floats.round_fraction(q, t.name)
    if math.isinf(x):
        raise ValueError(f"{floats.describe(q)} overflows {t} (write inf for infinity)")
    return x


