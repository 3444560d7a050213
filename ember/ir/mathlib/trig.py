"""sin, cos, sincos and tan for f32 and f64.

Range reduction x = q*(pi/2) + r, |r| <= ~pi/4:
- moderate |x| (f32: <= 105615, f64: < 2**26): Cody-Waite with three FMA steps against
  pi/2 split into three parts; the first step is exact, so r is accurate to ~1/2 ulp;
- larger |x|: Payne-Hanek, multiplying the integer significand by the needed window of
  the bits of 2/pi (a constant table) in 32-bit words, which gives the fraction to
  62 (f32) or 126 (f64) bits whatever the exponent.
Then minimax polynomials for sin and cos on [-pi/4, pi/4] and a quadrant swap.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..core import Global
from ..types import BOOL, F32, F64, I32, I64, U32, U64, PtrType
from . import coeffs as K
from .dsl import FB, V

TABLE = "__ember_two_over_pi"
TABLE_WORDS = 38          # enough for f64 exponents up to 1023 with a 7-word window


@lru_cache(maxsize=None)
def two_over_pi_words(n: int = TABLE_WORDS) -> tuple:
    """The first 32*n bits of 2/pi after the binary point, as 32-bit words (exact)."""
    bits = 32 * n + 64
    guard = bits + 16

    def arctan_inv(x: int) -> int:  # atan(1/x) * 2**guard
        total = term = (1 << guard) // x
        x2, k, sign = x * x, 1, -1
        while term:
            term //= x2
            total += sign * (term // (2 * k + 1))
            sign, k = -sign, k + 1
        return total

    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)        # pi * 2**guard, error < 2**4
    frac = ((2 << (2 * guard)) // pi) >> (guard - bits)   # 2/pi * 2**bits
    frac >>= 64
    return tuple((frac >> (32 * (n - 1 - i))) & 0xFFFFFFFF for i in range(n))


def table_global() -> Global:
    return Global(TABLE, U32, list(two_over_pi_words()))


def _split_pio2(fmt: str):
    """pi/2 as three parts in `fmt` (each the rounding of what is left)."""
    from fractions import Fraction
    from ... import floats
    # 2/pi is known exactly to many bits; pi/2 to 200 bits from the same series
    words = 8
    two_over_pi = Fraction(sum(w << (32 * (words - 1 - i)) for i, w in enumerate(two_over_pi_words(words))),
                           1 << (32 * words))
    pio2 = 1 / two_over_pi
    parts = []
    rest = pio2
    for _ in range(3):
        p = floats.round_fraction(rest, fmt)
        parts.append(p)
        rest -= Fraction(p)
    return parts


@lru_cache(maxsize=None)
def _pio2_parts(fmt: str):
    return _split_pio2(fmt)


def _cody_waite(fb: FB, x: V):
    t = x.type
    p1, p2, p3 = _pio2_parts(t.name)
    j = fb.rint(x * (2.0 / math.pi))
    r = fb.fma(j, -p1, x)
    r = fb.fma(j, -p2, r)
    r = fb.fma(j, -p3, r)
    return r, fb.cast(j, I32)


def _payne_hanek(fb: FB, x: V):
    """x -> (r, q) for finite |x| beyond the Cody-Waite range (other lanes: anything)."""
    t = x.type
    if t == F32:
        ubits, mant, bias, nwords, frac_words = U32, 23, 150, 4, 2
    else:
        ubits, mant, bias, nwords, frac_words = U64, 52, 1075, 7, 4
    bits = fb.bitcast(x, ubits)
    biased = fb.cast((bits >> mant) & ((1 << (11 if t == F64 else 8)) - 1), I32)
    e = biased - bias                                   # x = m * 2**e
    m = fb.cast((bits & ((1 << mant) - 1)) | (1 << mant), U64)
    i0 = fb.max((e - 2) >> 5, 0)                        # first table word needed
    d = e - (i0 << 5)                                   # in [-26, 33]
    table = fb.op("mem.global", type=PtrType(U32, "const"))
    table.v.op.attrs["name"] = TABLE
    # T: nwords table words, most significant first; m in 32-bit limbs, least significant first
    words = [fb.cast(fb.load(table, i0 + k, U32), U64) for k in range(nwords)]
    limbs = [m & 0xFFFFFFFF] + ([m >> 32] if t == F64 else [])
    # schoolbook product in 32-bit columns, least significant first
    ncols = nwords + len(limbs)
    cols = [fb.c(U64, 0) for _ in range(ncols + 1)]
    for a, limb in enumerate(limbs):
        for j in range(nwords):
            prod = limb * words[nwords - 1 - j]
            cols[a + j] = cols[a + j] + (prod & 0xFFFFFFFF)
            cols[a + j + 1] = cols[a + j + 1] + (prod >> 32)
    prod_words = []
    carry = fb.c(U64, 0)
    for k in range(ncols):
        s = cols[k] + carry
        prod_words.append(s & 0xFFFFFFFF)
        carry = s >> 32
    # The product has s = 32*nwords - d fraction bits; take the 2 quadrant bits and
    # 32*frac_words - 2 fraction bits below the point: bits [L, L + 32*frac_words).
    out_bits = 32 * frac_words
    low = (32 * nwords - out_bits + 2) - d                 # L
    lo_min = 32 * nwords - out_bits + 2 - 33
    lo_max = 32 * nwords - out_bits + 2 + 26
    word_idx = low >> 5
    sh = fb.cast(low & 31, U64)
    zero = fb.c(U64, 0)
    selected = None
    for w in range(lo_min >> 5, (lo_max >> 5) + 1):
        cand = [prod_words[w + k] if w + k < ncols else zero for k in range(frac_words + 1)]
        if selected is None:
            selected = cand
        else:
            hit = word_idx.eq(w)
            selected = [fb.select(hit, c, s) for c, s in zip(cand, selected)]
    out = [((selected[k] | (selected[k + 1] << 32)) >> sh) & 0xFFFFFFFF for k in range(frac_words)]
    top = fb.cast(out[-1], U32)
    q = fb.cast((top + 0x20000000) >> 30, I32)           # round to the nearest quadrant
    top_signed = fb.cast(fb.bitcast(top << 2, I32) >> 2, I64)   # fraction, sign-extended from bit 29
    if t == F32:
        fixed = (top_signed << 32) | fb.bitcast(out[0], I64)
        r64 = fb.cast(fixed, F64) * (math.pi / 2 * 2.0 ** -62)
        r = fb.cast(r64, F32)
    else:
        hi_int = (top_signed << 32) | fb.bitcast(out[2], I64)
        lo_int = (out[1] << 32) | out[0]
        a = fb.cast(hi_int, F64)
        resid = hi_int - fb.cast(a, I64)
        hi = a * 2.0 ** -62
        lo = fb.cast(resid, F64) * 2.0 ** -62 + fb.cast(lo_int, F64) * 2.0 ** -126
        pio2_hi, pio2_lo, _ = _pio2_parts("f64")
        ph = hi * pio2_hi
        pl = fb.fma(hi, pio2_hi, -ph)
        r = ph + (pl + fb.fma(hi, pio2_lo, lo * pio2_hi))
    neg = x.lt(0.0)
    r = fb.select(neg, -r, r)
    q = fb.select(neg, -q, q)
    finite = fb.abs(x).lt(math.inf)
    r = fb.select(finite, r, x - x)                      # NaN for inf and NaN inputs
    return r, q


def slow_reduction_name(t) -> str:
    return f"__ember_trig_reduce_{t.name}"


def slow_reduction_function(t):
    """The Payne-Hanek reduction as a library function (not inlined): the path is rare, and
    one shared copy, compiled once per process (ember.lowering.library), keeps kernels (and
    LLVM's work) small."""
    from ..builder import Builder
    from ..core import Function, Region
    body = Region([t], ["x"])
    fb = FB(Builder(body))
    r, q = _payne_hanek(fb, V(fb, body.args[0]))
    fb.b.op("func.return", [r.v, q.v])
    return Function(slow_reduction_name(t), "func", body, [t, I32], {"noinline": True, "library": True})


def reduce(fb: FB, x: V):
    t = x.type
    limit = 105615.0 if t == F32 else 2.0 ** 26
    near = fb.abs(x).le(limit)

    def slow(f: FB):
        op = f.b.op("func.call", [x.v], [t, I32], {"callee": slow_reduction_name(t)})
        return [V(f, v) for v in op.results]

    r, q = fb.if_(near, [t, I32], lambda f: list(_cody_waite(f, f.v(x))), slow)
    return r, q


def _kernels(fb: FB, r: V):
    t = r.type
    sin_c, cos_c = (K.SIN_F32, K.COS_F32) if t == F32 else (K.SIN_F64, K.COS_F64)
    z = r * r
    s = fb.fma(r * z, fb.horner(z, sin_c), r)
    c = fb.fma(z, fb.horner(z, cos_c), 1.0)
    return s, c


def sincos(fb: FB, x: V):
    r, q = reduce(fb, x)
    s, c = _kernels(fb, r)
    odd = (q & 1).ne(0)
    sin = fb.select(odd, c, s)
    cos = fb.select(odd, s, c)
    sin = fb.select((q & 2).ne(0), -sin, sin)
    cos = fb.select(((q + 1) & 2).ne(0), -cos, cos)
    # sin(-0) = -0: the reduction's FMAs cannot keep the sign of a zero (+0 + -0 = +0).
    sin = fb.select(x.eq(0.0), x, sin)
    return sin, cos


def sin(fb: FB, x: V):
    return [sincos(fb, x)[0]]


def cos(fb: FB, x: V):
    return [sincos(fb, x)[1]]


def sincos_op(fb: FB, x: V):
    return list(sincos(fb, x))


def tan(fb: FB, x: V):
    if x.type == F32:
        # s / c of f32 sin and cos errs up to 3.5 ulp; in f64, rounded once, 0.5 ulp.
        s, c = sincos(fb, fb.cast(x, F64))
        return [fb.cast(s / c, F32)]
    s, c = sincos(fb, x)
    return [s / c]


__all__ = ["sin", "cos", "sincos_op", "tan", "table_global", "TABLE", "two_over_pi_words", "BOOL", "F64"]
