"""exp, exp2, log, log2 and tanh for f32 and f64.

- exp2: x = j + f with j = rint(x), |f| <= 1/2 (exact); 2^f by a minimax polynomial;
  the result is scaled by 2^j in two exact-then-rounded steps, so results in the
  subnormal range are rounded once.
- exp: j = rint(x log2 e); r = x - j ln2 by a two-part Cody-Waite reduction with FMAs
  (the first step is exact); e^r by a minimax polynomial; scaled as exp2. f32 exp is
  the f64 one rounded once to f32.
- log2, log: x = 2^e m with m in [sqrt(1/2), sqrt(2)); f = m - 1 is exact. f32 uses a
  minimax polynomial for log(1+f)/f; f64 the fdlibm form with s = f/(2+f), and log2
  carries log(1+f) as a double-f64 sum through the multiplication by 1/ln 2.
- tanh: x + x^3 p(x^2) below 0.5625, else 1 - 2/(e^{2|x|} + 1) with the sign of x.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from ... import floats
from ..types import F32, F64, I32, U32, U64
from . import coeffs as K
from .dsl import FB, V


@lru_cache(maxsize=None)
def _ln2() -> Fraction:
    """ln 2 to ~200 bits: 2 atanh(1/3) = sum 2 / ((2k+1) 3^(2k+1))."""
    bits = 220
    total, k, p = 0, 0, 3
    while True:
        term = (2 << bits) // ((2 * k + 1) * p)
        if term == 0:
            break
        total += term
        k, p = k + 1, p * 9
    return Fraction(total, 1 << bits)


@lru_cache(maxsize=None)
def _split(value_name: str, fmt: str):
    """(hi, lo) with hi = fmt(v) and lo = fmt(v - hi), for v = ln2, log2(e) or 1/ln2."""
    v = {"ln2": _ln2(), "inv_ln2": 1 / _ln2()}[value_name]
    hi = floats.round_fraction(v, fmt)
    lo = floats.round_fraction(v - Fraction(hi), fmt)
    return hi, lo


def _pow2(fb: FB, k: V, t) -> V:
    """2^k for k (i32) in the normal exponent range."""
    if t == F32:
        return fb.bitcast(fb.cast(k + 127, U32) << 23, F32)
    return fb.bitcast(fb.cast(k + 1023, U64) << 52, F64)


def _scale(fb: FB, p: V, n: V) -> V:
    """p * 2^n, rounded once (p in [1/2, 2], |n| <= 2 * the exponent range)."""
    n1 = n >> 1
    n2 = n - n1
    return p * _pow2(fb, n1, p.type) * _pow2(fb, n2, p.type)


def _clamp(fb: FB, x: V, lim: float) -> V:
    """Clamp to [-lim, lim], keeping NaN (compare-and-select rather than min/max)."""
    x = fb.select(x.gt(lim), lim, x)
    return fb.select(x.lt(-lim), -lim, x)


def exp2(fb: FB, x: V) -> list:
    t = x.type
    xc = _clamp(fb, x, 160.0 if t == F32 else 1100.0)
    j = fb.rint(xc)
    f = xc - j
    p = fb.fma(f, fb.horner(f, K.EXP2_F32 if t == F32 else K.EXP2_F64), 1.0)
    return [_scale(fb, p, fb.cast(j, I32))]


def _exp(fb: FB, x: V) -> V:
    t = x.type
    xc = _clamp(fb, x, 104.0 if t == F32 else 750.0)
    ln2_hi, ln2_lo = _split("ln2", t.name)
    j = fb.rint(xc * (1 / math.log(2)))
    r = fb.fma(j, -ln2_hi, xc)
    r = fb.fma(j, -ln2_lo, r)
    p = fb.fma(r, fb.horner(r, K.EXP_F32 if t == F32 else K.EXP_F64), 1.0)
    return _scale(fb, p, fb.cast(j, I32))


def exp(fb: FB, x: V) -> list:
    if x.type == F32:
        # In f32 the reduction's rounding and the polynomial's add up to just over 1 ulp;
        # computed in f64 and rounded once (as glibc's expf), it stays within 0.5001 ulp.
        return [fb.cast(_exp(fb, fb.cast(x, F64)), F32)]
    return [_exp(fb, x)]


def _decompose(fb: FB, x: V):
    """x > 0 -> (e, f) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); e as a float."""
    t = x.type
    if t == F32:
        ub, mant, bias, emask, sqrt2_bits, min_normal = U32, 23, 127, 0xFF, 0x3FB504F3, 2.0 ** -126
    else:
        ub, mant, bias, emask, sqrt2_bits, min_normal = U64, 52, 1023, 0x7FF, 0x3FF6A09E667F3BCD, 2.0 ** -1022
    sub = x.lt(min_normal)
    xs = fb.select(sub, x * 2.0 ** mant, x)
    ib = fb.bitcast(xs, ub)
    e = fb.cast((ib >> mant) & emask, I32) - bias + fb.select(sub, fb.c(I32, -mant), fb.c(I32, 0))
    mb = (ib & ((1 << mant) - 1)) | (bias << mant)
    big = mb.gt(sqrt2_bits)
    mb = fb.select(big, mb - (1 << mant), mb)
    e = e + fb.select(big, fb.c(I32, 1), fb.c(I32, 0))
    f = fb.bitcast(mb, t) - 1.0
    return fb.cast(e, t), f


def _log_specials(fb: FB, x: V, r: V) -> V:
    r = fb.select(x.eq(math.inf), math.inf, r)
    r = fb.select(x.eq(0.0), -math.inf, r)
    r = fb.select(x.lt(0.0), math.nan, r)
    return fb.select(x.ne(x), x, r)


def _log1p_f64(fb: FB, f: V):
    """log(1+f) for f in [sqrt(1/2)-1, sqrt(2)-1] as (hi, lo), fdlibm-style."""
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    rr = z * fb.horner(z, K.LOG_R_F64)
    hi = f - hfsq
    lo = ((f - hi) - hfsq) + s * (hfsq + rr)
    return hi, lo


def log(fb: FB, x: V) -> list:
    t = x.type
    e, f = _decompose(fb, x)
    ln2_hi, ln2_lo = _split("ln2", t.name)
    if t == F32:
        r = fb.fma(e, ln2_hi, fb.fma(e, ln2_lo, f * fb.horner(f, K.LOG_F32)))
    else:
        hi, lo = _log1p_f64(fb, f)
        r = fb.fma(e, ln2_hi, hi + fb.fma(e, ln2_lo, lo))
    return [_log_specials(fb, x, r)]


def log2(fb: FB, x: V) -> list:
    t = x.type
    e, f = _decompose(fb, x)
    if t == F32:
        r = fb.fma(f, fb.horner(f, K.LOG2_F32), e)
    else:
        hi, lo = _log1p_f64(fb, f)
        il_hi, il_lo = _split("inv_ln2", "f64")
        yh = hi * il_hi
        yl = fb.fma(hi, il_hi, -yh) + fb.fma(lo, il_hi, (hi + lo) * il_lo)
        w = e + yh
        r = w + (((e - w) + yh) + yl)     # e + yh is exact in two parts (|e| >= |yh| or e = 0)
    return [_log_specials(fb, x, r)]


def tanh(fb: FB, x: V) -> list:
    t = x.type
    ax = fb.abs(x)
    z = x * x
    small = fb.fma(x * z, fb.horner(z, K.TANH_F32 if t == F32 else K.TANH_F64), x)
    e2 = _exp(fb, 2.0 * ax)
    big = fb.copysign(1.0 - 2.0 / (e2 + 1.0), x)
    r = fb.select(ax.lt(0.5625), small, big)
    return [fb.select(x.eq(0.0), x, r)]      # tanh(-0) = -0 (the FMA gives +0)


def rsqrt(fb: FB, x: V) -> list:
    """1/sqrt(x) as two correctly rounded operations (within 1 ulp)."""
    return [1.0 / fb.sqrt(x)]


def round_half_away(fb: FB, x: V) -> list:
    t = fb.trunc(x)
    d = x - t
    a = fb.abs(t) + fb.select(fb.abs(d).ge(0.5), fb.c(x.type, 1.0), 0.0)
    return [fb.copysign(a, x)]
