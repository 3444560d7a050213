"""Lowering of the arith ops: constants, integer and float arithmetic, comparisons,
select and conversions, with the language's semantics made explicit where LLVM's differ."""

from __future__ import annotations

from . import llvm_ir as ll

from ..diagnostics import InternalError
from .registry import lowers
from ..ir.types import PtrType, ScalarType
from .llvm_lower import I1, I32, FLOATS, const, const_int, lltype


@lowers("arith.undef")
def _undef(L, op, args):
    return [ll.Constant(lltype(op.results[0].type), ll.Undefined)]


@lowers("arith.const")
def _const(L, op, args):
    return [const(op.results[0].type, op.attrs["value"])]


_INT_BIN = {"arith.add": "add", "arith.sub": "sub", "arith.mul": "mul",
            "arith.and": "and_", "arith.or": "or_", "arith.xor": "xor"}
_FLOAT_BIN = {"arith.add": "fadd", "arith.sub": "fsub", "arith.mul": "fmul", "arith.div": "fdiv"}


@lowers("arith.add", "arith.sub", "arith.mul", "arith.and", "arith.or", "arith.xor")
def _bin(L, op, args):
    t = op.results[0].type
    if t.is_float:
        return [getattr(L.b, _FLOAT_BIN[op.name])(*args)]
    return [getattr(L.b, _INT_BIN[op.name])(*args)]


@lowers("arith.div", "arith.rem")
def _divrem(L, op, args):
    t = op.results[0].type
    a, b = args
    if t.is_float:
        if op.name == "arith.rem":
            raise InternalError("lower", "float remainder is not part of the language", op.loc)
        return [L.b.fdiv(a, b)]
    ty = a.type
    known = const_int(op.operands[1])
    div = op.name == "arith.div"
    if t.signed:
        raw = L.b.sdiv if div else L.b.srem
    else:
        raw = L.b.udiv if div else L.b.urem
    if known is not None and known != 0 and not (t.signed and known == -1):
        return [raw(a, b)]
    # x/0 = -1, x%0 = x, MIN/-1 = MIN, MIN%-1 = 0: divide by a safe divisor, then select.
    zero = L.b.icmp_unsigned("==", b, ll.Constant(ty, 0))
    bad = zero
    if t.signed:
        lo = ll.Constant(ty, 1 << (t.bits - 1))
        overflow = L.b.and_(L.b.icmp_unsigned("==", a, lo), L.b.icmp_unsigned("==", b, ll.Constant(ty, -1)))
        bad = L.b.or_(zero, overflow)
    safe = L.b.select(bad, ll.Constant(ty, 1), b)
    r = raw(a, safe)
    if div:
        return [L.b.select(zero, ll.Constant(ty, -1), r)]
    return [L.b.select(zero, a, r)]


@lowers("arith.shl", "arith.shr")
def _shift(L, op, args):
    t = op.results[0].type
    a, n = args
    ty = a.type
    amount = const_int(op.amount)
    if amount is not None:
        # the usual case, folded here rather than left for LLVM's instcombine
        n = ll.Constant(ty, amount & (t.bits - 1))
    else:
        if n.type.width > ty.width:
            n = L.b.trunc(n, ty)
        elif n.type.width < ty.width:
            n = L.b.zext(n, ty)
        n = L.b.and_(n, ll.Constant(ty, t.bits - 1))
    if op.name == "arith.shl":
        return [L.b.shl(a, n)]
    return [L.b.ashr(a, n) if t.signed else L.b.lshr(a, n)]


@lowers("arith.neg")
def _neg(L, op, args):
    t = op.results[0].type
    if t.is_float:
        return [L.b.fneg(args[0])]
    return [L.b.neg(args[0])]


@lowers("arith.not")
def _not(L, op, args):
    return [L.b.not_(args[0])]


@lowers("arith.abs")
def _abs(L, op, args):
    t = op.results[0].type
    if t.is_float:
        return [L.intrinsic("llvm.fabs", [args[0].type], args)]
    if not t.signed:
        return [args[0]]
    if t.bits < 32:
        # i8/i16: abs.s32 of the widened value in inline PTX, then truncated. ptxas compiles
        # abs.s16 to a 32-bit IABS whose result it then treats as an already sign-extended
        # i16, so abs(-32768i16) widened to 32 bits read +32768 on an H100 (fuzz corpus
        # seed 1000729); LLVM turns every select/xor/mul form back into abs.s16, and the
        # asm is opaque to it.
        wide = L.b.sext(args[0], I32)
        asm = ll.InlineAsm(ll.FunctionType(I32, [I32]), "abs.s32 $0, $1;", "=r,r", side_effect=False)
        return [L.b.trunc(L.b.call(asm, [wide]), args[0].type)]
    return [L.intrinsic("llvm.abs", [args[0].type], [args[0], ll.Constant(I1, 0)], ret=args[0].type)]


@lowers("arith.min", "arith.max")
def _minmax(L, op, args):
    t = op.results[0].type
    is_min = op.name == "arith.min"
    if t.is_float:
        return [L.intrinsic("llvm.minimumnum" if is_min else "llvm.maximumnum", [args[0].type], args)]
    name = ("llvm.smin" if is_min else "llvm.smax") if t.signed else ("llvm.umin" if is_min else "llvm.umax")
    return [L.intrinsic(name, [args[0].type], args)]


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@lowers("arith.cmp")
def _cmp(L, op, args):
    t = op.operands[0].type
    pred = _ICMP[op.attrs["pred"]]
    if t.is_float:
        if op.attrs["pred"] == "ne":
            return [L.b.fcmp_unordered("!=", *args)]
        return [L.b.fcmp_ordered(pred, *args)]
    if t.is_int and t.signed:
        return [L.b.icmp_signed(pred, *args)]
    return [L.b.icmp_unsigned(pred, *args)]


@lowers("arith.select")
def _select(L, op, args):
    return [L.b.select(*args)]


# Float -> integer bit casts go through an opaque `mov`. Without it, LLVM folds
# `store i8 (trunc (bitcast double))` into `st.global.b8 [a], %rd` of the register a float
# instruction (selp.f64, mul.f64, ...) defined, and ptxas then stores that register
# *converted* to an 8-bit integer (1.5 -> 1, -204.96 -> 0) instead of its low byte. Found
# by the fuzz corpus on an H200 (ptxas 13.0); a register defined by mov.bN is stored right.
_MOV = {16: ("mov.b16 $0, $1;", "=h,h"), 32: ("mov.b32 $0, $1;", "=r,r"), 64: ("mov.b64 $0, $1;", "=l,l")}


@lowers("arith.bitcast")
def _bitcast(L, op, args):
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(dst, PtrType):
        return [args[0]]   # opaque pointers in one address space
    bits = L.b.bitcast(args[0], lltype(dst))
    if src.is_float and not dst.is_float:
        text, constraints = _MOV[dst.bits]
        bits = L.b.asm(ll.FunctionType(lltype(dst), [lltype(dst)]), text, constraints, [bits], False)
    return [bits]


# float -> 32/64-bit integer: the NVVM conversions truncate, saturate and send NaN to 0,
# which is the language's definition (LLVM's fptosi would be poison out of range).
_F2I = {("f32", 32, True): "llvm.nvvm.f2i.rz", ("f32", 32, False): "llvm.nvvm.f2ui.rz",
        ("f32", 64, True): "llvm.nvvm.f2ll.rz", ("f32", 64, False): "llvm.nvvm.f2ull.rz",
        ("f64", 32, True): "llvm.nvvm.d2i.rz", ("f64", 32, False): "llvm.nvvm.d2ui.rz",
        ("f64", 64, True): "llvm.nvvm.d2ll.rz", ("f64", 64, False): "llvm.nvvm.d2ull.rz"}


@lowers("arith.cast")
def _cast(L, op, args):
    src, dst = op.operands[0].type, op.results[0].type
    x = args[0]
    b = L.b
    dty = lltype(dst)
    if src == dst:
        return [x]
    if dst.is_bool:
        return [b.icmp_unsigned("!=", x, ll.Constant(x.type, 0))]
    if src.is_bool:
        return [b.zext(x, dty)] if dst.is_int else [b.uitofp(x, dty)]
    if src.is_int and dst.is_int:
        if dst.bits < src.bits:
            return [b.trunc(x, dty)]
        if dst.bits > src.bits:
            return [b.sext(x, dty) if src.signed else b.zext(x, dty)]
        return [x]
    if src.is_int and dst.is_float:
        if dst.name == "bf16" and not L.L.target.has_native_bf16_convert_from_int:
            return [_int_to_bf16(L, x, src)]
        return [b.sitofp(x, dty) if src.signed else b.uitofp(x, dty)]
    if src.is_float and dst.is_int:
        if src.name in ("f16", "bf16"):
            x = b.fpext(x, FLOATS["f32"])
            src_name = "f32"
        else:
            src_name = src.name
        name = _F2I.get((src_name, dst.bits, dst.signed))
        if name is not None:
            # cvt.rzi saturates, but a NaN becomes INT64_MIN in the 64-bit forms (measured on
            # sm_90): the language says 0, so NaN is selected explicitly.
            r = L.intrinsic(name, [], [x], ret=dty)
            nan = b.fcmp_unordered("uno", x, x)
            return [b.select(nan, ll.Constant(dty, 0), r)]
        sat = "llvm.fptosi.sat" if dst.signed else "llvm.fptoui.sat"
        return [L.intrinsic(sat, [dty, x.type], [x], ret=dty)]
    # float -> float
    if _float_rank(dst) > _float_rank(src):
        return [b.fpext(x, dty)]
    if src.name == "bf16" and dst.name == "f16":
        return [b.fptrunc(b.fpext(x, FLOATS["f32"]), dty)]   # exact widening, then one rounding
    if src.name == "f16" and dst.name == "bf16":
        return [b.fptrunc(b.fpext(x, FLOATS["f32"]), dty)]
    return [b.fptrunc(x, dty)]


def _float_rank(t: ScalarType) -> int:
    return {"f16": 1, "bf16": 1, "f32": 2, "f64": 3}[t.name]


def _int_to_bf16(L, x, src: ScalarType):
    """Integer -> bf16 rounded once: round toward zero to f32, keep a sticky bit, round again.
    (Before sm_90 LLVM goes through a round-to-nearest f32 first, which rounds twice.)"""
    b = L.b
    f32 = FLOATS["f32"]
    if src.bits < 32:
        x = b.sext(x, I32) if src.signed else b.zext(x, I32)
        src_bits, signed = 32, src.signed
    else:
        src_bits, signed = src.bits, src.signed
    to_f, back = {
        (32, True): ("llvm.nvvm.i2f.rz", "llvm.nvvm.f2i.rz"),
        (32, False): ("llvm.nvvm.ui2f.rz", "llvm.nvvm.f2ui.rz"),
        (64, True): ("llvm.nvvm.ll2f.rz", "llvm.nvvm.f2ll.rz"),
        (64, False): ("llvm.nvvm.ull2f.rz", "llvm.nvvm.f2ull.rz"),
    }[(src_bits, signed)]
    f = L.intrinsic(to_f, [], [x], ret=f32)
    exact = b.icmp_unsigned("==", L.intrinsic(back, [], [f], ret=x.type), x)
    bits = b.bitcast(f, I32)
    sticky = b.select(exact, ll.Constant(I32, 0), ll.Constant(I32, 1))
    odd = b.bitcast(b.or_(bits, sticky), f32)
    return b.fptrunc(odd, FLOATS["bf16"])




@lowers("arith.dp4a")
def _dp4a(L, op, args):
    sign = "".join("s" if v.type.signed else "u" for v in (op.a, op.b))
    return [L.intrinsic(f"llvm.nvvm.idp4a.{sign[0]}.{sign[1]}", [], args, ret=I32)]
