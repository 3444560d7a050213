"""Constant folding in the type checker, in plain Python (no numpy at start-up).

Typed integer and bool constants are folded by the ops the operators are, with each op's
own `fold` (ember.ir.fold): typed arithmetic has one definition. What is left here is
the arithmetic of untyped literal expressions, which is exact: arbitrary-size integers and
exact rationals, as in Go.
"""

from __future__ import annotations

from fractions import Fraction

from ..ir.types import ScalarType
from .operators import BINARY, COMPARE, UNARY


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


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def typed_binop(op: str, a, b, t: ScalarType, rhs_type: ScalarType | None = None):
    """`a op b` for typed integer or bool constants of type t (a shift's amount of
    `rhs_type`): folded by the op the operator is (ember.frontend.operators), with the op's
    own `fold` - the one definition of typed arithmetic."""
    from ..ir.fold import fold
    from ..ir.types import BOOL
    if op in COMPARE:
        return fold("arith.cmp", [t, t], [a, b], BOOL, {"pred": COMPARE[op]})
    return fold(BINARY[op], [t, rhs_type or t], [a, b], t)


def typed_unop(op: str, a, t: ScalarType):
    """`-a`, `~a` or `!a` for a typed constant, by arith.neg / arith.not's fold."""
    from ..ir.fold import fold
    return fold(UNARY[op], [t], [a], t)


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
