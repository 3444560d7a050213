"""The language's integer and bool arithmetic on Python scalars, for the constant folder.

semantics.py defines every operation over numpy lane arrays; the simulator runs it, and the
constant folder falls back to it. Compiling a kernel folds mostly integer index arithmetic
(`BLOCK * 4`, `K / 256`, casts of them), and folding that with numpy would make every cold
compile import numpy (50-100 ms). The ops' `fold` hooks use these functions instead.

Values are as `arith.const` holds them: an integer is its value in its type's range, a bool
is a bool, a float is its bit pattern. Results are mathematical (unwrapped): `make_const`
wraps them into the result type, which is two's complement wrapping. tests/ir/
test_int_semantics.py checks every op's `fold` against its numpy `eval` on every integer
type, at the edges and at random.
"""

from __future__ import annotations

from fractions import Fraction

from .. import floats
from .types import ScalarType


def div(a: int, b: int) -> int:
    """Truncating division; x / 0 = -1 (all ones once wrapped); MIN / -1 wraps to MIN."""
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def rem(a: int, b: int) -> int:
    """Sign of the dividend; x % 0 = x; MIN % -1 = 0."""
    if b == 0:
        return a
    return a - div(a, b) * b


def shift_amount(b: int, t: ScalarType) -> int:
    """The amount modulo the shifted type's width, reading b's bits as unsigned."""
    return b % t.bits


def to_float_bits(v: int, t: ScalarType) -> int:
    """An integer converted to float type t: rounded once, ties to even; too large is inf."""
    return floats.to_bits(floats.round_fraction(Fraction(v), t.name), t.name)
