"""arith: constants, integer/float arithmetic, comparisons, select and conversions."""

from __future__ import annotations

import operator

from ...lazy_numpy import np
from .. import int_semantics as I
from .. import semantics as S
from .. import signature as sig
from ..formats import Cast, Const, Keyword, Operands
from ..opdef import (ALL_ONES, BOOL_KIND, COMMUTATIVE, FLOAT, FONE, INT, INT_OR_BOOL, NEG_ZERO, ONE, POS_ZERO,
                     ZERO, Absorbing, Attr, Idempotent, Identity, Involution, SelfInverse, defop, enum)
from ..types import I32, U32, PtrType, ScalarType, size_of
from . import canon


def _const_verify(op):
    t, v = op.results[0].type, op.value
    if t.is_bool:
        return None if isinstance(v, bool) else "bool constant must be true or false"
    if not isinstance(v, int) or isinstance(v, bool):
        return "constant value must be an integer (or float bit pattern)"
    if t.is_float:
        return None if 0 <= v < (1 << t.bits) else f"bit pattern {v:#x} does not fit {t}"
    lo, hi = t.int_range()
    return None if lo <= v <= hi else f"{v} is out of range for {t}"


def _int_fold(fn):
    """An op's `fold` from fn(*values, result type) on integer and bool constants (see
    ember/ir/int_semantics.py); float operands or results are left to `eval`."""
    def fold(op, *values):
        if op.results[0].type.is_float or any(v.type.is_float for v in op.operands):
            return None
        return (fn(*values, op.results[0].type),)
    return fold


defop("arith.const", Const(), results="result: T", attrs={"value": Attr("any")}, verify=_const_verify,
      eval=lambda op, n=1: (S.const(op.value, op.results[0].type, n),),
      example="%c = arith.const 1.5 : f32",
      doc="A scalar constant; floats are stored as their bit pattern.")


def _undef_sim(m, op, args, mask):
    t = op.result.type
    if isinstance(t, PtrType):
        return [m.wild_pointer(t)]
    return [S.const(0, t, m.lanes)]


defop("arith.undef", Operands(), results="result: any", simulate=_undef_sim,
      example="%u = arith.undef : *global f32",
      doc="A value with no meaning yet: the placeholder IR generation gives a function's result "
          "before a `return` sets it (for types without constants, such as pointers). Reading it "
          "is never done by generated code; the simulator makes any access through it an error.")


# -- binary arithmetic: one table, one evaluator per row.

def _binary(name, kinds, fn, fold=None, traits=(), doc="", canonicalize=None):
    """fn(a, b, t) on lane arrays; fold on Python ints where fn is not the same expression."""
    def ev(op, a, b):
        t = op.results[0].type
        with np.errstate(all="ignore"):
            r = fn(a, b, t)
        return (S._fix_bf16(r, t) if t.is_float else r,)

    defop(name, Operands(), operands=f"lhs: {kinds}, rhs: {kinds}", results=f"result: {kinds}",
          traits=traits, eval=ev, fold=_int_fold(fold or fn), canonicalize=canonicalize,
          example=f"%r = {name} %a, %b : u32", example_args="%a: u32, %b: u32", doc=doc)


def _div(a, b, t):
    return a / b if t.is_float else S.int_div(a, b, t)


def _minmax(int_fn, float_fn):
    return lambda a, b, t: float_fn(a, b, t) if t.is_float else int_fn(a, b)


_binary("arith.add", "N", lambda a, b, t: a + b, None,
        (COMMUTATIVE, Identity(ZERO, INT), Identity(NEG_ZERO, FLOAT)),
        "Wrapping for integers, IEEE for floats.", canon.add)
_binary("arith.sub", "N", lambda a, b, t: a - b, None,
        (Identity(ZERO, INT), Identity(POS_ZERO, FLOAT), SelfInverse(INT)), "Wrapping for integers, IEEE for floats.",
        canon.sub)
_binary("arith.mul", "N", lambda a, b, t: a * b, None,
        (COMMUTATIVE, Identity(ONE, INT), Identity(FONE, FLOAT), Absorbing(ZERO, INT)),
        "Wrapping for integers, IEEE for floats.")
_binary("arith.div", "N", _div, lambda a, b, t: I.div(a, b), (Identity(ONE, INT), Identity(FONE, FLOAT)),
        "Integers truncate; x/0 = -1 (all ones); MIN/-1 = MIN.", canon.div)
_binary("arith.rem", "I", lambda a, b, t: S.int_rem(a, b, t), lambda a, b, t: I.rem(a, b),
        doc="Sign of the dividend; x%0 = x; MIN%-1 = 0.")
_binary("arith.min", "N", _minmax(lambda a, b: np.minimum(a, b), S.fmin), lambda a, b, t: min(a, b),
        (COMMUTATIVE, Idempotent(INT)),
        "Floats: NaN ignored, -0 < +0.")
_binary("arith.max", "N", _minmax(lambda a, b: np.maximum(a, b), S.fmax), lambda a, b, t: max(a, b),
        (COMMUTATIVE, Idempotent(INT)),
        "Floats: NaN ignored, -0 < +0.")
_binary("arith.and", "B", lambda a, b, t: a & b, None,
        (COMMUTATIVE, Identity(ALL_ONES, INT_OR_BOOL), Absorbing(ZERO, INT_OR_BOOL), Idempotent(INT_OR_BOOL)),
        "Bitwise and (logical for bool).")
_binary("arith.or", "B", lambda a, b, t: a | b, None,
        (COMMUTATIVE, Identity(ZERO, INT_OR_BOOL), Absorbing(ALL_ONES, BOOL_KIND), Idempotent(INT_OR_BOOL)),
        "Bitwise or (logical for bool).")
_binary("arith.xor", "B", lambda a, b, t: a ^ b, None,
        (COMMUTATIVE, Identity(ZERO, INT_OR_BOOL), SelfInverse(INT)), "Bitwise exclusive or (logical for bool).")


def _shift(name, fn, fold, doc):
    defop(name, Operands(), operands="value: I, amount: U", results="result: I", fold=_int_fold(fold),
          traits=(Identity(ZERO, INT),), verify=lambda op: None if op.amount.type.is_int else
          "shift amount must be an integer",
          eval=lambda op, a, b: (fn(a, b, op.results[0].type),),
          example=f"%r = {name} %a, %n : u32", example_args="%a: u32, %n: u32", doc=doc)


_shift("arith.shl", S.shl, lambda a, b, t: a << I.shift_amount(b, t),
       "Shift left; the amount is taken modulo the bit width.")
_shift("arith.shr", S.shr, lambda a, b, t: a >> I.shift_amount(b, t),
       "Arithmetic for signed types, logical for unsigned; amount modulo the width.")


# -- unary

def _unary(name, kinds, fn, fold, traits=(), doc=""):
    def ev(op, a):
        with np.errstate(all="ignore"):
            return (fn(a),)

    defop(name, Operands(), operands=f"value: {kinds}", results=f"result: {kinds}", traits=traits, eval=ev,
          fold=_int_fold(fold),
          example=f"%r = {name} %a : i32", example_args="%a: i32", doc=doc)


_unary("arith.neg", "N", lambda a: np.negative(a), lambda a, t: -a, (Involution(INT + FLOAT),),
       "Wrapping for integers; flips the sign bit of floats.")
_unary("arith.not", "B", lambda a: np.invert(a), lambda a, t: (not a) if t.is_bool else ~a,
       (Involution(INT_OR_BOOL),), "Bitwise not (logical not for bool).")
_unary("arith.abs", "N", lambda a: np.abs(a), lambda a, t: abs(a),
       doc="Wrapping for integers (abs(MIN) = MIN); clears the sign bit of floats.")


# -- comparison and select

PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
# elementwise on lane arrays, plain on Python ints
_CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
        "ge": operator.ge}

defop("arith.cmp", Keyword("pred", types_of="operands"), operands="lhs: T, rhs: T", results="result: bool",
      attrs={"pred": enum(*PREDICATES)}, canonicalize=canon.cmp,
      eval=lambda op, a, b: (_CMP[op.pred](a, b),),
      fold=lambda op, a, b: None if op.lhs.type.is_float else (_CMP[op.pred](a, b),),
      example="%b = arith.cmp lt %a, %c : u32", example_args="%a: u32, %c: u32",
      doc="Float comparisons are ordered (false on NaN) except `ne`, which is true on NaN.")
def _select(c, a, b):
    if isinstance(a, np.ndarray):
        return np.where(c, a, b)
    return type(a).where(c, a, b)      # pointer values (in the simulator)


defop("arith.select", Operands(), operands="cond: bool, if_true: T, if_false: T", results="result: T",
      canonicalize=canon.select, eval=lambda op, c, a, b: (_select(c, a, b),),
      fold=lambda op, c, a, b: (a if c else b,),
      example="%r = arith.select %c, %a, %b : f32", example_args="%c: bool, %a: f32, %b: f32",
      doc="Both operands are evaluated.")


# -- conversions

def _cast_fold(op, a):
    src, dst = op.value.type, op.result.type
    if src.is_float:
        return None
    if dst.is_bool:
        return (a != 0,)
    if dst.is_float:
        return (I.to_float_bits(int(a), dst),)
    return (int(a),)


def _bitcast_fold(op, a):
    src = op.value.type
    if not isinstance(src, ScalarType):
        return None
    return (a if src.is_float else a & ((1 << src.bits) - 1),)     # bits: wrapped for an integer dst

defop("arith.cast", Cast(), operands="value: T", results="result: U", canonicalize=canon.same_type,
      verify=lambda op: "no conversion from float to bool" if op.result.type.is_bool and op.value.type.is_float
      else None,
      eval=lambda op, a: (S.cast(a, op.operands[0].type, op.results[0].type),), fold=_cast_fold,
      example="%f = arith.cast %i : u32 to f32", example_args="%i: u32",
      doc="Numeric conversion: wraps between integers, rounds once to floats, "
          "truncates and saturates to integers (NaN -> 0).")


def bitcast_problem(src, dst) -> str | None:
    """Why `src` cannot be reinterpreted as `dst` (None if it can): the one rule, read by
    the verifier and by the type checker."""
    if isinstance(src, PtrType) and isinstance(dst, PtrType):
        if src.space != dst.space:
            return f"a bit cast cannot change the address space ({src.space} -> {dst.space})"
        if dst.mut and not src.mut:
            return "a bit cast cannot make a read-only pointer mutable"
        return None
    if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)) or src.is_bool or dst.is_bool:
        return f"cannot bit cast `{src}` to `{dst}`"
    if size_of(src) != size_of(dst):
        return f"cannot bit cast `{src}` ({size_of(src)} bytes) to `{dst}` ({size_of(dst)} bytes)"
    return None


def _bitcast_eval(op, a):
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, PtrType):
        return (a.reinterpret(dst),)
    return (S.bitcast(a, src, dst),)


defop("arith.bitcast", Cast(), operands="value: any", results="result: any", canonicalize=canon.same_type,
      verify=lambda op: bitcast_problem(op.value.type, op.result.type), eval=_bitcast_eval, fold=_bitcast_fold,
      example="%u = arith.bitcast %f : f32 to u32", example_args="%f: f32",
      doc="Reinterpret the bits of a value as another type of the same size (or a pointer as a "
          "pointer to another element type in the same address space).")


# -- packed integer dot product

def _bytes(x: np.ndarray, signed: bool) -> list:
    """The four bytes of 32-bit lanes, low first, as int64 (sign-extended when signed)."""
    u = x.astype(np.int64) & 0xFFFFFFFF
    out = []
    for k in range(4):
        b = (u >> (8 * k)) & 0xFF
        out.append((b ^ 0x80) - 0x80 if signed else b)
    return out


def _dp4a_eval(op, a, b, c):
    sa, sb = op.a.type.signed, op.b.type.signed
    total = np.asarray(c).astype(np.int64)
    for x, y in zip(_bytes(a, sa), _bytes(b, sb)):
        total = total + x * y
    t = op.result.type
    return ((total & 0xFFFFFFFF).astype(np.uint32).view(S.dtype(t)),)


def _dp4a_fold(op, a, b, c):
    total = c
    for k in range(4):
        x, y = (a >> 8 * k) & 0xFF, (b >> 8 * k) & 0xFF
        if op.a.type.signed:
            x = (x ^ 0x80) - 0x80
        if op.b.type.signed:
            y = (y ^ 0x80) - 0x80
        total += x * y
    return (total,)


def _dp4a_canon(op):
    """A zero factor leaves the accumulator."""
    if canon.const_value(op.a) == 0 or canon.const_value(op.b) == 0:
        return [], [op.acc]
    return None


defop("arith.dp4a", Operands(types_of="operands"), operands="a: I{i32,u32}, b: U{i32,u32}, acc: V{i32,u32}",
      results="result: V",
      rules=(sig.Rule("V", ("I", "U"), lambda b: U32 if b["I"] == U32 and b["U"] == U32 else I32,
                      "u32 when `a` and `b` are both u32, else i32"),),
      eval=_dp4a_eval, fold=_dp4a_fold, canonicalize=_dp4a_canon, min_sm=61,
      example="%r = arith.dp4a %a, %b, %c : u32, i32, i32", example_args="%a: u32, %b: i32, %c: i32",
      doc="Four-way byte dot product with accumulate (PTX `dp4a`): the sum of a.byte[k] * b.byte[k] "
          "over the four bytes of each 32-bit operand, each byte signed or unsigned as its operand's "
          "type, plus `acc`, wrapping to 32 bits.")

