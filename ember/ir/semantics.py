"""The language's arithmetic, exactly, over numpy arrays (one element per lane).

This is the one definition of what each scalar operation computes; the constant folder
and the simulator both call it, and the lowering must produce code that agrees with it
bit for bit (the differential tests check that on a GPU). Documented in
docs/language.md, "Semantics":

- integers wrap; shift amounts are taken modulo the bit width;
- x / 0 == -1 (all ones), x % 0 == x, MIN / -1 == MIN, MIN % -1 == 0;
- floats are IEEE binary16/bfloat16/binary32/binary64, round to nearest even, subnormals
  kept; f16 and bf16 arithmetic is rounded once to the type (as if computed exactly);
- float -> int conversion truncates toward zero and saturates; NaN converts to 0;
- every conversion to a float type is rounded once (no double rounding);
- min/max ignore a NaN operand and order -0 below +0 (IEEE 754-2019 minimumNumber).

bf16 values are held in float32 arrays whose values are always bf16-representable.
"""

from __future__ import annotations

from ..lazy_numpy import np
from .types import BOOL, ScalarType, Type, VectorType

# numpy dtypes by name (numpy itself is imported on first use: see ember/lazy_numpy.py)
_DTYPES = {
    "bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "bf16": "float32", "f32": "float32", "f64": "float64",
}
_UINT_OF_BITS = {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}


def dtype(t: Type):
    if isinstance(t, VectorType):
        return _DTYPES[t.elem.name]
    return _DTYPES[t.name]


def bits_dtype(t: ScalarType):
    return _UINT_OF_BITS[max(t.bits, 8)]


# ---------------------------------------------------------------- constants and bits

def from_bits(bits, t: ScalarType) -> np.ndarray:
    """Array of type t from an array (or int) of raw bit patterns."""
    b = np.asarray(bits, dtype=np.uint64)
    if t.name == "bf16":
        return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if t.is_float:
        return b.astype(_UINT_OF_BITS[t.bits]).view(dtype(t))
    if t.is_bool:
        return b != 0
    return b.astype(_UINT_OF_BITS[t.bits]).view(dtype(t))


def to_bits(x: np.ndarray, t: ScalarType) -> np.ndarray:
    """Raw bit patterns (as uint64) of an array of type t."""
    x = np.asarray(x)
    if t.is_bool:
        return x.astype(np.uint64)
    with np.errstate(over="ignore"):   # rounding to a narrower float may overflow to inf
        if t.name == "bf16":
            return (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint64)
        return x.astype(dtype(t)).view(_UINT_OF_BITS[max(t.bits, 8)]).astype(np.uint64)


def round_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> nearest bf16 value (ties to even), kept in float32. NaN stays NaN."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    out = np.where(nan, (u | np.uint32(0x00400000)) & np.uint32(0xFFFF0000), rounded)
    return out.astype(np.uint32).view(np.float32)


def _f64_to_f32_odd(x: np.ndarray) -> np.ndarray:
    """f64 -> f32 rounded to odd: exact values stay, inexact ones get a set last bit.
    Rounding that once more to any narrower format is then correctly rounded."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
        back = r.astype(np.float64)
        # truncate toward zero first
        over = np.abs(back) > np.abs(x)
        r = np.where(over & np.isfinite(x), np.nextafter(r, np.float32(0)), r)
        inexact = (r.astype(np.float64) != x) & np.isfinite(x)
        bits = r.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
    return bits.view(np.float32)


def round_to(x: np.ndarray, t: ScalarType) -> np.ndarray:
    """Round a float64 or float32 array to float type t (once, ties to even)."""
    x = np.asarray(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if t.name == "bf16":
            if x.dtype == np.float64:
                x = _f64_to_f32_odd(x)
            return round_bf16(x)
        return x.astype(dtype(t))


# ---------------------------------------------------------------- integer arithmetic

def int_div(a: np.ndarray, b: np.ndarray, t: ScalarType) -> np.ndarray:
    zero = b == 0
    safe = np.where(zero, np.ones_like(b), b)
    if t.signed:
        lo = np.array(t.int_range()[0], dtype=a.dtype)
        overflow = (a == lo) & (b == -1)
        safe = np.where(overflow, np.ones_like(b), safe)
        # numpy floors; the language truncates toward zero
        q = np.abs(a.astype(np.int64)) // np.abs(safe.astype(np.int64)) if t.bits < 64 else _trunc_div64(a, safe)
        if t.bits < 64:
            q = np.where((a < 0) != (safe < 0), -q, q).astype(a.dtype)
        return np.where(zero, np.array(-1, dtype=a.dtype), q)
    q = a // safe
    return np.where(zero, np.array(-1).astype(a.dtype), q)


def _trunc_div64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    r = a - q * b
    fix = (r != 0) & ((a < 0) != (b < 0))
    return q + fix.astype(np.int64)


def int_rem(a: np.ndarray, b: np.ndarray, t: ScalarType) -> np.ndarray:
    zero = b == 0
    q = int_div(a, np.where(zero, np.ones_like(b), b), t)
    with np.errstate(over="ignore"):
        r = a - q * np.where(zero, np.ones_like(b), b)
    return np.where(zero, a, r).astype(a.dtype)


def shift_amount(b: np.ndarray, t: ScalarType) -> np.ndarray:
    """Shift amounts are taken modulo the bit width (as unsigned)."""
    return (b.astype(np.uint64) & np.uint64(t.bits - 1)).astype(dtype(t))


def shl(a, b, t):
    return np.left_shift(a, shift_amount(b, t)).astype(a.dtype)


def shr(a, b, t):
    # numpy's right_shift is arithmetic for signed dtypes and logical for unsigned
    return np.right_shift(a, shift_amount(b, t)).astype(a.dtype)


# ---------------------------------------------------------------- floating point

def _fix_bf16(x, t):
    return round_bf16(x) if t.name == "bf16" else x


def fmin(a, b, t):
    r = np.fmin(a, b)
    both_zero = (a == 0) & (b == 0)
    if np.any(both_zero):
        ub = _UINT_OF_BITS[32 if t.name == "bf16" else t.bits]
        z = (a.view(ub) | b.view(ub)).view(a.dtype)
        r = np.where(both_zero, z, r)
    return r


def fmax(a, b, t):
    r = np.fmax(a, b)
    both_zero = (a == 0) & (b == 0)
    if np.any(both_zero):
        ub = _UINT_OF_BITS[32 if t.name == "bf16" else t.bits]
        z = (a.view(ub) & b.view(ub)).view(a.dtype)
        r = np.where(both_zero, z, r)
    return r


def _two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def _two_prod(a, b):
    """Dekker's exact product (valid away from overflow and deep underflow)."""
    p = a * b
    c = 134217729.0  # 2**27 + 1
    ah = a * c
    ah = ah - (ah - a)
    al = a - ah
    bh = b * c
    bh = bh - (bh - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, err


def _odd(s, err):
    """Round-to-odd correction of s = RN(x) given the exact error err = x - s."""
    inexact = err != 0
    bits = s.view(np.uint64)
    even = (bits & np.uint64(1)) == 0
    step = np.where(err > 0, np.inf, -np.inf)
    nudged = np.nextafter(s, step)
    return np.where(inexact & even, nudged, s)


def fma(a, b, c, t: ScalarType):
    """a*b + c with a single rounding."""
    with np.errstate(all="ignore"):
        if t.bits < 64:
            a64, b64, c64 = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
            p = a64 * b64                      # exact: 2 x 24 bits fit in 53
            s, err = _two_sum(p, c64)
            finite = np.isfinite(s)
            s = np.where(finite, _odd(s, np.where(finite, err, 0.0)), p + c64)
            return round_to(s, t)
        a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
        # Boldo & Melquiond: RN(th + RO(ul + tl)) with (uh, ul) = a*b and (th, tl) = c + uh.
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        v, verr = _two_sum(ul, tl)
        r = th + _odd(v, verr)
        # An exact zero is -0 only when both addends are -0 (a*b is exact zero here iff uh is).
        r = np.where(r == 0, np.where((uh == 0) & (c == 0), uh + c, 0.0), r)
        # Exactness needs no overflow and no deep underflow; other lanes go through Fractions.
        risky = ~(np.isfinite(r) & np.isfinite(uh)) | (np.abs(uh) > 1e300) | (
            (uh != 0) & (np.abs(uh) < 1e-250)) | (np.abs(c) > 1e300) | ((c != 0) & (np.abs(c) < 1e-250))
        if np.any(risky):
            r = np.array(r, dtype=np.float64)
            idx = np.nonzero(risky)
            r[idx] = [_fma_exact(x, y, z) for x, y, z in zip(a[idx], b[idx], c[idx])]
        return r


def _fma_exact(a: float, b: float, c: float) -> float:
    import math
    from fractions import Fraction
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        # sign of an exact zero sum: -0 only if both addends are -0 (round to nearest)
        prod_neg = (math.copysign(1, a) * math.copysign(1, b)) < 0
        return -0.0 if (prod_neg and math.copysign(1, c) < 0) else 0.0
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


# ---------------------------------------------------------------- conversions

def cast(x: np.ndarray, src: ScalarType, dst: ScalarType) -> np.ndarray:
    if src == dst:
        return x
    with np.errstate(all="ignore"):
        if dst.is_bool:
            return x != 0
        if src.is_bool:
            return x.astype(dtype(dst)) if dst.name != "bf16" else x.astype(np.float32)
        if src.is_int and dst.is_int:
            return x.astype(dtype(dst))          # wraps (two's complement)
        if src.is_float and dst.is_int:
            return _float_to_int(x, dst)
        if src.is_int and dst.is_float:
            return _int_to_float(x, src, dst)
        # float -> float
        if dst.bits > src.bits or (src.name == "f16" and dst.name == "f32") or (src.name == "bf16" and dst.bits >= 32):
            return x.astype(dtype(dst))          # exact widening
        if dst.name == "bf16":
            return round_to(x.astype(np.float64) if src.name == "f64" else x.astype(np.float32), dst)
        if src.name == "bf16" and dst.name == "f16":
            return x.astype(np.float32).astype(np.float16)   # single rounding from an exact f32
        return x.astype(dtype(dst))              # f64->f32, f64->f16, f32->f16: one rounding


def _float_to_int(x: np.ndarray, dst: ScalarType) -> np.ndarray:
    lo, hi = dst.int_range()
    t = np.trunc(x.astype(np.float64))
    nan = np.isnan(t)
    t = np.where(nan, 0.0, t)
    too_low = t < float(lo)
    too_high = t >= float(hi + 1)   # hi + 1 is a power of two, exact in f64
    safe = np.where(too_low | too_high, 0.0, t)
    out = safe.astype(dtype(dst))
    out = np.where(too_low, np.array(lo).astype(dtype(dst)), out)
    out = np.where(too_high, np.array(hi).astype(dtype(dst)), out)
    return out.astype(dtype(dst))


def _int_to_float(x: np.ndarray, src: ScalarType, dst: ScalarType) -> np.ndarray:
    if src.bits <= 32 or dst.name == "f64":
        # |x| < 2**53 converts exactly to f64 first; wider 64-bit values convert once (C cast).
        if dst.name in ("f64", "f32") and src.bits == 64:
            return x.astype(dtype(dst))
        return round_to(x.astype(np.float64), dst)
    # 64-bit integers to f16/bf16: round to odd at 53 bits, then round once more.
    mag = np.abs(x.astype(np.float64))
    big = mag >= 2.0 ** 53
    f = x.astype(np.float64)
    if np.any(big):
        idx = np.nonzero(big)[0]
        vals = [_int_round_odd_53(int(v)) for v in x[idx]]
        f = f.copy()
        f[idx] = vals
    return round_to(f, dst)


def _int_round_odd_53(v: int) -> float:
    m = abs(v)
    k = max(m.bit_length() - 53, 0)
    kept = m >> k
    if m & ((1 << k) - 1):
        kept |= 1
    r = float(kept << k)
    return -r if v < 0 else r


def bitcast(x: np.ndarray, src: ScalarType, dst: ScalarType) -> np.ndarray:
    return from_bits(to_bits(x, src), dst)


def const(value, t: ScalarType, n: int = 1) -> np.ndarray:
    """A lane array holding an IR constant (float constants are bit patterns)."""
    if t.is_float:
        return np.broadcast_to(from_bits(np.uint64(value), t), (n,)).copy()
    if t == BOOL:
        return np.full(n, bool(value), dtype=np.bool_)
    return np.full(n, value, dtype=dtype(t))
