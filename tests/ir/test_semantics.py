"""The language's arithmetic: the numpy semantics (simulator, folder) against exact
references, and the checker's pure-Python constant folder against the numpy semantics."""

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings, strategies as st

from ember import floats
from ember.frontend.consteval import typed_binop
from ember.ir import semantics as S
from ember.ir.types import F32, F64, INT_TYPES, SCALARS, BF16

OPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">="]


def numpy_binop(op, a, b, t):
    A = np.array([a], dtype=S.dtype(t))
    B = np.array([b], dtype=S.dtype(t))
    with np.errstate(all="ignore"):
        r = {"+": lambda: A + B, "-": lambda: A - B, "*": lambda: A * B, "/": lambda: S.int_div(A, B, t),
             "%": lambda: S.int_rem(A, B, t), "&": lambda: A & B, "|": lambda: A | B, "^": lambda: A ^ B,
             "<<": lambda: S.shl(A, B, t), ">>": lambda: S.shr(A, B, t), "==": lambda: A == B,
             "!=": lambda: A != B, "<": lambda: A < B, "<=": lambda: A <= B, ">": lambda: A > B,
             ">=": lambda: A >= B}[op]()
    return r[0].item()


@settings(max_examples=600, deadline=None)
@given(st.sampled_from([t.name for t in INT_TYPES]), st.sampled_from(OPS), st.integers(), st.integers())
def test_constant_folder_agrees_with_numpy_semantics(tname, op, a, b):
    t = SCALARS[tname]
    lo, hi = t.int_range()
    a, b = lo + a % (hi - lo + 1), lo + b % (hi - lo + 1)
    if a % 7 == 0:
        b = 0 if b % 2 else (-1 if t.signed else b)
    assert typed_binop(op, a, b, t) == numpy_binop(op, a, b, t)


def test_division_definitions():
    i32 = SCALARS["i32"]
    a = np.array([7, -7, -2**31, -2**31, 5], dtype=np.int32)
    b = np.array([0, 2, -1, 0, -3], dtype=np.int32)
    assert list(S.int_div(a, b, i32)) == [-1, -3, -2**31, -1, -1]
    assert list(S.int_rem(a, b, i32)) == [7, -1, 0, -2**31, 2]


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, width=64), st.floats(allow_nan=False, width=64),
       st.floats(allow_nan=False, width=64))
def test_fma_f64_rounds_once(a, b, c):
    got = S.fma(np.array([a]), np.array([b]), np.array([c]), F64)[0]
    if not all(math.isfinite(v) for v in (a, b, c)):
        return
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        want = float(exact) if exact != 0 else None
    except OverflowError:
        want = math.inf if exact > 0 else -math.inf
    if want is None:
        assert got == 0
    else:
        assert got == want or (math.isinf(want) and math.isinf(got))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["f16", "bf16", "f32"]), st.floats(width=32, allow_nan=False),
       st.floats(width=32, allow_nan=False), st.floats(width=32, allow_nan=False))
def test_fma_narrow_rounds_once(fmt, a, b, c):
    t = SCALARS[fmt]
    a, b, c = (floats.round_float(v, fmt) for v in (a, b, c))
    arr = lambda v: S.round_to(np.array([v], dtype=np.float64), t)  # noqa: E731
    got = float(S.fma(arr(a), arr(b), arr(c), t)[0])
    if not all(math.isfinite(v) for v in (a, b, c)):
        return
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    want = floats.round_fraction(exact, fmt)
    assert got == want or (math.isnan(got) and math.isnan(want))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([t.name for t in INT_TYPES]), st.sampled_from(["f16", "bf16", "f32", "f64"]),
       st.integers())
def test_int_to_float_rounds_once(src, dst, v):
    s = SCALARS[src]
    lo, hi = s.int_range()
    v = lo + v % (hi - lo + 1)
    got = float(S.cast(np.array([v], dtype=S.dtype(s)), s, SCALARS[dst])[0])
    assert got == floats.round_fraction(Fraction(v), dst)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["f16", "bf16", "f32", "f64"]), st.sampled_from([t.name for t in INT_TYPES]),
       st.floats(width=64))
def test_float_to_int_truncates_and_saturates(src, dst, x):
    x = floats.round_float(x, src)
    d = SCALARS[dst]
    arr = S.round_to(np.array([x], dtype=np.float64), SCALARS[src])
    got = int(S.cast(arr, SCALARS[src], d)[0])
    lo, hi = d.int_range()
    want = 0 if math.isnan(x) else (lo if x < lo else hi if x >= hi + 1 else int(math.trunc(x)))
    if math.isinf(x):
        want = lo if x < 0 else hi
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.floats(width=64))
def test_f64_to_bf16_rounds_once(x):
    got = S.cast(np.array([x]), F64, BF16)[0]
    if math.isnan(x):
        assert math.isnan(got)
        return
    assert float(got) == floats.round_float(x, "bf16")


def test_min_max_order_signed_zeros_and_ignore_nan():
    a = np.array([0.0, -0.0, np.nan, 1.0], dtype=np.float32)
    b = np.array([-0.0, 0.0, 2.0, np.nan], dtype=np.float32)
    mn, mx = S.fmin(a, b, F32), S.fmax(a, b, F32)
    assert list(np.signbit(mn[:2])) == [True, True] and list(np.signbit(mx[:2])) == [False, False]
    assert list(mn[2:]) == [2.0, 1.0] and list(mx[2:]) == [2.0, 1.0]


def test_shift_amounts_are_masked():
    u8 = SCALARS["u8"]
    a = np.array([1, 1, 0x80], dtype=np.uint8)
    b = np.array([9, 8, 15], dtype=np.uint8)
    assert list(S.shl(a, b, u8)) == [2, 1, 0]
    assert list(S.shr(a, b, u8)) == [0, 1, 1]


def test_f16_arithmetic_rounds_to_f16():
    a = np.array([2048.0], dtype=np.float16)
    assert (a + np.float16(1.0))[0] == 2048.0   # 2049 ties to even
