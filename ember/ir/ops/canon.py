"""Op-specific canonicalizations: the rewrites of single ops that are not one of the
algebraic facts canonicalize reads from the traits (identity, absorbing element, ...).
Each takes the op and returns None or (new ops, values replacing the op's results);
every rewrite is exact for all inputs."""

from __future__ import annotations

import math

from ... import floats
from ..core import Op
from ..types import BOOL, ScalarType


def const_value(v):
    """The constant an SSA value holds (int, bool, or float bit pattern), or None."""
    op = v.op
    if op is not None and op.name == "arith.const":
        return op.attrs["value"]
    return None


def make_const(t: ScalarType, value, loc=None) -> Op:
    """An arith.const of type t; integers are wrapped into t's range."""
    from . import OPS
    if t.is_bool:
        value = bool(value)
    elif not t.is_float:
        lo, _ = t.int_range()
        value = ((int(value) - lo) % (1 << t.bits)) + lo
    return Op(OPS["arith.const"], [], [t], {"value": value}, loc=loc)


def _new(name: str, operands, t, loc) -> Op:
    from . import OPS
    return Op(OPS[name], operands, [t], loc=loc)


def add(op):
    """Integer reassociation that moves constants outwards (the vectorizer matches
    `base + offset`): a + (x + c) -> (a + x) + c, and (y + c1) + c2 -> y + (c1 + c2)."""
    t = op.results[0].type
    if not t.is_int:
        return None
    a, b = op.operands
    cb = const_value(b)
    if cb is None and b.op is not None and b.op.name == "arith.add" and const_value(b.op.operands[1]) is not None:
        inner = _new("arith.add", [a, b.op.operands[0]], t, op.loc)
        outer = _new("arith.add", [inner.results[0], b.op.operands[1]], t, op.loc)
        return [inner, outer], [outer.results[0]]
    if cb is not None and a.op is not None and a.op.name == "arith.add":
        c1 = const_value(a.op.operands[1])
        if c1 is not None:
            c = make_const(t, c1 + cb, op.loc)
            new = _new("arith.add", [a.op.operands[0], c.results[0]], t, op.loc)
            return [c, new], [new.results[0]]
    return None


def sub(op):
    """x - c -> x + (-c) for integers (one canonical form for the vectorizer)."""
    t = op.results[0].type
    cb = const_value(op.operands[1])
    if not t.is_int or cb is None:
        return None
    c = make_const(t, -cb, op.loc)
    new = _new("arith.add", [op.operands[0], c.results[0]], t, op.loc)
    return [c, new], [new.results[0]]


def exact_reciprocal(bits: int, t: ScalarType):
    """The bit pattern of 1/c when c (given as bits) is a power of two whose reciprocal is
    also representable (so multiplying by it is exactly dividing by c); else None."""
    c = floats.from_bits(bits, t.name)
    if not math.isfinite(c) or c == 0.0:
        return None
    m, _ = math.frexp(abs(c))
    if m != 0.5:
        return None
    r = 1.0 / c                                 # exact in f64 unless it overflows (to inf)
    if not math.isfinite(r) or floats.round_float(r, t.name) != r:
        return None                             # not representable in t (rounded, or overflows)
    return floats.to_bits(r, t.name)


def div(op):
    """x / 2^k -> x * 2^-k for floats: both round the same real number once."""
    t = op.results[0].type
    cb = const_value(op.operands[1])
    if not t.is_float or cb is None:
        return None
    recip = exact_reciprocal(cb, t)
    if recip is None:
        return None
    c = make_const(t, recip, op.loc)
    mul = _new("arith.mul", [op.operands[0], c.results[0]], t, op.loc)
    return [c, mul], [mul.results[0]]


def cmp(op):
    """x op x for integers and bools is known (floats: NaN is not equal to itself)."""
    a, b = op.operands
    if a is b and not a.type.is_float:
        c = make_const(BOOL, op.attrs["pred"] in ("eq", "le", "ge"), op.loc)
        return [c], [c.results[0]]
    return None


def select(op):
    c, x, y = op.operands
    cc = const_value(c)
    if cc is not None:
        return [], [x if cc else y]
    if x is y:
        return [], [x]
    if op.results[0].type == BOOL and const_value(x) is True and const_value(y) is False:
        return [], [c]
    return None


def same_type(op):
    """A conversion to the type the value has already."""
    if op.operands[0].type == op.results[0].type:
        return [], [op.operands[0]]
    return None
