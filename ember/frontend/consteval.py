"""Constant folding in the type checker, in plain Python (no numpy at start-up).

Typed integer and bool constants follow the language's semantics exactly (the same as
`ember.ir.semantics`; a test checks the two agree). Untyped literal expressions are
exact: arbitrary-size integers and exact rationals, as in Go.
"""

from __future__ import annotations

from fractions import Fraction

from ..ir.types import ScalarType


class ConstError(Exception):
    pass


# Untyped constants are exact but bounded (numerator and denominator of at most this many
# bits), so that folding any expression takes bounded time. Literals stay well below it.
MAX_CONST_BITS = 8192


def bounded(v):
    """v, or ConstError when an untyped constant outgrows MAX_CONST_BITS."""
    if isinstance(v, bool):
        return v
    if isinstance(v, Fraction):
        big = max(v.numerator.bit_length(), v.denominator.bit_length())
    else:
        big = v.bit_length()
    if big > MAX_CONST_BITS:
        raise ConstError(f"constant too large: untyped constants are exact up to {MAX_CONST_BITS} bits "
                         "of numerator and denominator")
    return v


def wrap(v: int, t: ScalarType) -> int:
    mask = (1 << t.bits) - 1
    v &= mask
    if t.signed and v >> (t.bits - 1):
        v -= 1 << t.bits
    return v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_binop(op: str, a: int, b: int, t: ScalarType):
    """`a op b` for typed integers (or bools for & | ^ == !=)."""
    if t.is_bool:
        return {"&": a and b, "|": a or b, "^": a != b, "==": a == b, "!=": a != b,
                "&&": a and b, "||": a or b}[op]
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op == "+":
        return wrap(a + b, t)
    if op == "-":
        return wrap(a - b, t)
    if op == "*":
        return wrap(a * b, t)
    if op == "/":
        if b == 0:
            return wrap(-1, t)
        return wrap(_trunc_div(a, b), t)   # MIN / -1 wraps back to MIN
    if op == "%":
        if b == 0:
            return a
        return wrap(a - _trunc_div(a, b) * b, t)
    if op in ("&", "|", "^"):
        r = {"&": a & b, "|": a | b, "^": a ^ b}[op]
        return wrap(r, t)
    if op in ("<<", ">>"):
        n = b & (t.bits - 1)
        if op == "<<":
            return wrap(a << n, t)
        return wrap(a >> n, t)   # arithmetic for signed (a < 0), logical for unsigned (a >= 0)
    raise ConstError(f"operator `{op}` cannot be folded")


def int_unop(op: str, a, t: ScalarType):
    if t.is_bool:
        return not a
    if op == "-":
        return wrap(-a, t)
    return wrap(~a, t)


def untyped_binop(op: str, a, b):
    """Exact arithmetic on untyped constants (ints, or Fractions for float literals)."""
    return bounded(_untyped_binop(op, a, b))


def _untyped_binop(op: str, a, b):
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    is_float = isinstance(a, Fraction) or isinstance(b, Fraction)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise ConstError("division by zero in a constant expression")
        return Fraction(a) / Fraction(b) if is_float else _trunc_div(a, b)
    if is_float:
        raise ConstError(f"`{op}` is not defined for float constants")
    if op == "%":
        if b == 0:
            raise ConstError("remainder by zero in a constant expression")
        return a - _trunc_div(a, b) * b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op in ("<<", ">>"):
        if b < 0:
            raise ConstError("negative shift amount in a constant expression")
        if op == "<<" and b > 4096:
            raise ConstError("shift amount too large in a constant expression")
        return a << b if op == "<<" else a >> b
    raise ConstError(f"operator `{op}` cannot be folded")
