"""The constants of a numeric type, written as fields of the type (or of a type parameter):
`f32.inf`, `bf16.nan`, `T.max`, `u8.bits`. Typed constants, folded like any other.

    floats:   inf, nan (a quiet NaN), max (the largest finite), min (its negation),
              min_positive (the smallest normal), epsilon (the gap above 1.0), bits
    integers: max, min, bits
"""

from __future__ import annotations

import math

from ..ir.types import U32, ScalarType

NAMES = {"float": ("inf", "nan", "max", "min", "min_positive", "epsilon", "bits"),
         "int": ("max", "min", "bits"), "bool": ()}

# significand bits after the point, exponent bias
_FORMATS = {"f16": (10, 15), "bf16": (7, 127), "f32": (23, 127), "f64": (52, 1023)}


def value(t: ScalarType, name: str):
    """(type, value) of constant `name` of type t - floats as Python floats, as typed float
    constants are held - or None if t has no such constant."""
    if name == "bits" and not t.is_bool:
        return U32, t.bits
    if t.is_int:
        lo, hi = t.int_range()
        return {"max": (t, hi), "min": (t, lo)}.get(name)
    if not t.is_float:
        return None
    man, bias = _FORMATS[t.name]
    largest = math.ldexp(2.0 - 2.0 ** -man, bias)
    return {"inf": (t, math.inf), "nan": (t, math.nan), "max": (t, largest), "min": (t, -largest),
            "min_positive": (t, math.ldexp(1.0, 1 - bias)), "epsilon": (t, 2.0 ** -man)}.get(name)
