"""arith: constants, integer/float arithmetic, comparisons, select and conversions."""

from __future__ import annotations

import numpy as np

from .. import semantics as S
from ..formats import Cast, Const, Keyword, Operands
from ..types import BOOL, PtrType, ScalarType, size_of
from . import checks as C
from . import defop


def _const_verify(op):
    err = C.arity(op, 0, 1)
    if err:
        return err
    t, v = op.results[0].type, op.attrs.get("value")
    if not isinstance(t, ScalarType):
        return f"constant must be a scalar, not {t}"
    if t.is_bool:
        return None if isinstance(v, bool) else "bool constant must be true or false"
    if not isinstance(v, int) or isinstance(v, bool):
        return "constant value must be an integer (or float bit pattern)"
    if t.is_float:
        return None if 0 <= v < (1 << t.bits) else f"bit pattern {v:#x} does not fit {t}"
    lo, hi = t.int_range()
    return None if lo <= v <= hi else f"{v} is out of range for {t}"


defop("arith.const", Const(), _const_verify,
      eval=lambda op, n=1: (S.const(op.attrs["value"], op.results[0].type, n),),
      doc="A scalar constant; floats are stored as their bit pattern.")


# -- binary arithmetic: one table, one verifier, one evaluator per row.

def _binary(name, kinds, fn, commutative=False, doc=""):
    check = {"num": C.numeric, "int": C.integer, "intbool": C.int_or_bool}[kinds]

    def verify(op):   # hot: written out
        if len(op.operands) != 2 or len(op.results) != 1:
            return C.arity(op, 2, 1)
        t = op.results[0].type
        if op.operands[0].type is not t or op.operands[1].type is not t:
            err = C.same([op.operands[0].type, op.operands[1].type, t])
            if err:
                return err
        return check(t)

    def ev(op, a, b):
        t = op.results[0].type
        with np.errstate(all="ignore"):
            r = fn(a, b, t)
        return (S._fix_bf16(r, t) if t.is_float else r,)

    defop(name, Operands(), verify, infer=lambda ts, attrs: [ts[0]], eval=ev,
          commutative=commutative, doc=doc)


def _div(a, b, t):
    return a / b if t.is_float else S.int_div(a, b, t)


def _rem(a, b, t):
    return S.int_rem(a, b, t)


def _minmax(int_fn, float_fn):
    return lambda a, b, t: float_fn(a, b, t) if t.is_float else int_fn(a, b)


_binary("arith.add", "num", lambda a, b, t: a + b, True, "Wrapping for integers, IEEE for floats.")
_binary("arith.sub", "num", lambda a, b, t: a - b)
_binary("arith.mul", "num", lambda a, b, t: a * b, True)
_binary("arith.div", "num", _div, doc="Integers truncate; x/0 = -1 (all ones); MIN/-1 = MIN.")
_binary("arith.rem", "int", _rem, doc="Sign of the dividend; x%0 = x; MIN%-1 = 0.")
_binary("arith.min", "num", _minmax(np.minimum, S.fmin), True, "Floats: NaN ignored, -0 < +0.")
_binary("arith.max", "num", _minmax(np.maximum, S.fmax), True, "Floats: NaN ignored, -0 < +0.")
_binary("arith.and", "intbool", lambda a, b, t: a & b, True)
_binary("arith.or", "intbool", lambda a, b, t: a | b, True)
_binary("arith.xor", "intbool", lambda a, b, t: a ^ b, True)


def _shift_verify(op):
    return C.first(lambda: C.arity(op, 2, 1),
                   lambda: C.integer(op.operands[0].type, "shifted value"),
                   lambda: C.integer(op.operands[1].type, "shift amount"),
                   lambda: C.same([op.operands[0].type, op.results[0].type]))


defop("arith.shl", Operands(), _shift_verify, infer=lambda ts, a: [ts[0]],
      eval=lambda op, a, b: (S.shl(a, b, op.results[0].type),),
      doc="Shift left; the amount is taken modulo the bit width.")
defop("arith.shr", Operands(), _shift_verify, infer=lambda ts, a: [ts[0]],
      eval=lambda op, a, b: (S.shr(a, b, op.results[0].type),),
      doc="Arithmetic for signed types, logical for unsigned; amount modulo the width.")


# -- unary

def _unary(name, check, fn, doc=""):
    def verify(op):
        return C.first(lambda: C.arity(op, 1, 1),
                       lambda: C.same([op.operands[0].type, op.results[0].type]),
                       lambda: check(op.results[0].type))

    def ev(op, a):
        with np.errstate(all="ignore"):
            return (fn(a),)

    defop(name, Operands(), verify, infer=lambda ts, attrs: [ts[0]], eval=ev, doc=doc)


_unary("arith.neg", C.numeric, np.negative, "Wrapping for integers; flips the sign bit of floats.")
_unary("arith.not", C.int_or_bool, np.invert, "Bitwise not (logical not for bool).")
_unary("arith.abs", C.numeric, np.abs, "Wrapping for integers (abs(MIN) = MIN); clears the sign bit of floats.")


# -- comparison and select

PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}


def _cmp_verify(op):
    return C.first(lambda: C.arity(op, 2, 1),
                   lambda: None if op.attrs.get("pred") in PREDICATES else f"unknown predicate {op.attrs.get('pred')}",
                   lambda: C.scalar(op.operands[0].type),
                   lambda: C.same([op.operands[0].type, op.operands[1].type]),
                   lambda: None if op.results[0].type == BOOL else "result must be bool")


defop("arith.cmp", Keyword("pred", types_of="operands"), _cmp_verify,
      infer=lambda ts, attrs: [BOOL],
      eval=lambda op, a, b: (_CMP[op.attrs["pred"]](a, b),),
      doc="Float comparisons are ordered (false on NaN) except `ne`, which is true on NaN.")


def _select_verify(op):
    return C.first(lambda: C.arity(op, 3, 1),
                   lambda: None if op.operands[0].type == BOOL else "condition must be bool",
                   lambda: C.same([op.operands[1].type, op.operands[2].type, op.results[0].type]))


defop("arith.select", Operands(), _select_verify, infer=lambda ts, attrs: [ts[1]],
      eval=lambda op, c, a, b: (np.where(c, a, b),),
      doc="Both operands are evaluated.")


# -- conversions

def _cast_verify(op):
    return C.first(lambda: C.arity(op, 1, 1),
                   lambda: C.scalar(op.operands[0].type),
                   lambda: C.scalar(op.results[0].type, "result"),
                   lambda: None if not (op.results[0].type.is_bool and op.operands[0].type.is_float)
                   else "no conversion from float to bool")


defop("arith.cast", Cast(), _cast_verify,
      eval=lambda op, a: (S.cast(a, op.operands[0].type, op.results[0].type),),
      doc="Numeric conversion: wraps between integers, rounds once to floats, "
          "truncates and saturates to integers (NaN -> 0).")


def _bitcast_verify(op):
    err = C.arity(op, 1, 1)
    if err:
        return err
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, PtrType) and isinstance(dst, PtrType):
        if src.space != dst.space:
            return "pointer bit casts keep the address space"
        if dst.mut and not src.mut:
            return "a bit cast cannot make a read-only pointer mutable"
        return None
    if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)) or src.is_bool or dst.is_bool:
        return "bit casts need two non-bool scalars or two pointers"
    if size_of(src) != size_of(dst):
        return f"bit cast between types of different sizes ({src} -> {dst})"
    return None


def _bitcast_eval(op, a):
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, PtrType):
        return (a.reinterpret(dst),)
    return (S.bitcast(a, src, dst),)


defop("arith.bitcast", Cast(), _bitcast_verify, eval=_bitcast_eval,
      doc="Reinterpret the bits of a value as another type of the same size.")
