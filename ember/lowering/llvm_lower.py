"""Ember IR -> LLVM IR (llvmlite.ir), for the NVPTX back end.

Structured control flow becomes a CFG here (scf.if -> branches and phis, scf.for and
scf.while -> header/body/exit blocks). Each op is lowered by one entry of `LOWER`, keyed
by op name. The semantics the language promises (see ember.ir.semantics) are made
explicit where LLVM's would differ: wrapping integer ops without nsw/nuw, guarded
division, masked shifts, saturating float->int conversion, no FMA contraction.

Kernels use the `ptx_kernel` calling convention; their block size becomes `.maxntid`
(through nvvm.annotations, which LLVM upgrades to the `nvvm.maxntid` attribute).
Read-only global pointers are `noalias` and their loads `!invariant.load`, which lets
the back end use the non-coherent load path (`ld.global.nc`).
"""

from __future__ import annotations

import llvmlite.ir as ll

from .. import floats
from ..diagnostics import InternalError
from ..ir.core import Function, Module, Region, Value
from ..ir.types import ADDRESS_SPACES, ArrayType, PtrType, ScalarType, Type, VectorType
from ..targets import Target


class BFloatType(ll.types._BaseFloatType):
    """LLVM's `bfloat` (llvmlite has no class for it)."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"


BFloatType._create_instance()

I1, I8, I16, I32, I64 = (ll.IntType(n) for n in (1, 8, 16, 32, 64))
_FLOATS = {"f16": ll.HalfType(), "bf16": BFloatType(), "f32": ll.FloatType(), "f64": ll.DoubleType()}


def lltype(t: Type):
    if isinstance(t, ScalarType):
        if t.is_bool:
            return I1
        if t.is_int:
            return ll.IntType(t.bits)
        return _FLOATS[t.name]
    if isinstance(t, PtrType):
        # Per-thread arrays are allocas, which NVPTX keeps in the generic address space
        # (the back end moves them to registers or local memory).
        return ll.PointerType(addrspace=0 if t.space == "local" else ADDRESS_SPACES[t.space])
    if isinstance(t, VectorType):
        return ll.VectorType(lltype(t.elem), t.length)
    if isinstance(t, ArrayType):
        return ll.ArrayType(lltype(t.elem), t.length)
    raise InternalError("lower", f"no LLVM type for {t}")


def float_const(t: ScalarType, bits: int):
    """An exact LLVM constant for a float bit pattern (NaN payloads included)."""
    if t.name == "f16":
        return ll.FormattedConstant(_FLOATS["f16"], f"0xH{bits:04X}")
    if t.name == "bf16":
        return ll.FormattedConstant(_FLOATS["bf16"], f"0xR{bits:04X}")
    if t.name == "f64":
        return ll.FormattedConstant(_FLOATS["f64"], f"0x{bits:016X}")
    # f32 constants are written as the double of the same value.
    sign, exp, man = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exp == 0xFF:
        d = (sign << 63) | (0x7FF << 52) | (man << 29)
    else:
        d = floats.to_bits(floats.from_bits(bits, "f32"), "f64")
    return ll.FormattedConstant(_FLOATS["f32"], f"0x{d:016X}")


def const(t: ScalarType, value):
    if t.is_float:
        return float_const(t, value)
    if t.is_bool:
        return ll.Constant(I1, 1 if value else 0)
    return ll.Constant(ll.IntType(t.bits), value & ((1 << t.bits) - 1))


class FunctionLowering:
    def __init__(self, lowering: "ModuleLowering", f: Function, llf: ll.Function):
        self.L = lowering
        self.f = f
        self.llf = llf
        self.values: dict[Value, object] = {}
        self.b: ll.IRBuilder | None = None
        self._blocks = 0

    def block(self, name: str) -> ll.Block:
        self._blocks += 1
        return self.llf.append_basic_block(f"{name}{self._blocks}")

    def v(self, value: Value):
        return self.values[value]

    def run(self) -> None:
        self.b = ll.IRBuilder(self.llf.append_basic_block("entry"))
        for arg, llarg in zip(self.f.args, self.llf.args):
            self.values[arg] = llarg
        rets = self.region(self.f.body)
        if not rets:
            self.b.ret_void()
        elif len(rets) == 1:
            self.b.ret(rets[0])
        else:   # several results travel as a literal struct (device functions are inlined)
            agg = ll.Constant(_result_type(self.f.result_types), ll.Undefined)
            for i, v in enumerate(rets):
                agg = self.b.insert_value(agg, v, i)
            self.b.ret(agg)

    def region(self, r: Region) -> list:
        """Lower the ops of a region; returns the terminator's operands (lowered)."""
        for op in r.ops:
            if op.opdef.terminator:
                return [self.v(x) for x in op.operands]
            handler = LOWER.get(op.name)
            if handler is None:
                raise InternalError("lower", f"no lowering for `{op.name}`"
                                    + (" (run the expand-math pass first)" if op.name.startswith("math.") else ""),
                                    op.loc)
            results = handler(self, op, [self.v(x) for x in op.operands])
            for res, llv in zip(op.results, results or []):
                self.values[res] = llv
        raise InternalError("lower", "region without a terminator")

    def bind_args(self, r: Region, values) -> None:
        for a, v in zip(r.args, values):
            self.values[a] = v

    def intrinsic(self, name: str, types: list, args: list, ret=None):
        fn = self.L.intrinsic(name, types, [a.type for a in args], ret)
        return self.b.call(fn, args)


class ModuleLowering:
    def __init__(self, m: Module, target: Target, data_layout: str):
        self.m = m
        self.target = target
        self.ll = ll.Module(name="ember")
        self.ll.triple = "nvptx64-nvidia-cuda"
        self.ll.data_layout = data_layout
        self.functions: dict[str, ll.Function] = {}
        self.globals: dict[str, ll.GlobalVariable] = {}
        self._intrinsics: dict[str, ll.Function] = {}

    def intrinsic(self, name: str, overload: list, arg_types: list, ret=None) -> ll.Function:
        """`llvm.foo` overloaded on `overload` types, or a fixed `llvm.nvvm.*` name."""
        full = name + "".join("." + _suffix(t) for t in overload)
        fn = self._intrinsics.get(full)
        if fn is None:
            ret = ret or (arg_types[0] if arg_types else ll.VoidType())
            fn = ll.Function(self.ll, ll.FunctionType(ret, arg_types), full)
            self._intrinsics[full] = fn
        return fn

    def global_table(self, g) -> None:
        ty = ll.ArrayType(lltype(g.elem), len(g.values))
        gv = ll.GlobalVariable(self.ll, ty, g.name, addrspace=ADDRESS_SPACES["const"])
        gv.global_constant = True
        gv.linkage = "internal"
        gv.initializer = ll.Constant(ty, [const(g.elem, v) for v in g.values])
        self.globals[g.name] = gv

    def declare(self, f: Function) -> None:
        fnty = ll.FunctionType(_result_type(f.result_types), [lltype(a.type) for a in f.args])
        llf = ll.Function(self.ll, fnty, f.name)
        for a, lla in zip(f.args, llf.args):
            lla.name = a.name or ""
            t = a.type
            if isinstance(t, PtrType):
                if f.kind == "kernel" and not t.mut and t.space == "global":
                    lla.add_attribute("noalias")
                if t.align is not None:
                    lla.attributes.align = t.align
        if f.kind == "kernel":
            llf.calling_convention = "ptx_kernel"
            block = f.attrs.get("block")
            if block:
                for dim, n in zip("xyz", block):
                    md = self.ll.add_metadata([llf, f"maxntid{dim}", ll.Constant(I32, n)])
                    self.ll.add_named_metadata("nvvm.annotations", md)
        else:
            llf.linkage = "internal"
            llf.attributes.add("noinline" if f.attrs.get("noinline") else "alwaysinline")
        self.functions[f.name] = llf


def _suffix(t) -> str:
    if isinstance(t, ll.PointerType):
        return f"p{t.addrspace}"
    if isinstance(t, ll.IntType):
        return f"i{t.width}"
    if isinstance(t, ll.VectorType):
        return f"v{t.count}{_suffix(t.element)}"
    return {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64"}[str(t)]


# ---------------------------------------------------------------------------- op lowering

LOWER: dict = {}


def lowers(*names):
    def reg(fn):
        for n in names:
            LOWER[n] = fn
        return fn
    return reg


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


def _const_int(v: Value):
    d = v.op
    if d is not None and d.name == "arith.const":
        return d.attrs["value"]
    return None


@lowers("arith.div", "arith.rem")
def _divrem(L, op, args):
    t = op.results[0].type
    a, b = args
    if t.is_float:
        if op.name == "arith.rem":
            raise InternalError("lower", "float remainder is not part of the language", op.loc)
        return [L.b.fdiv(a, b)]
    ty = a.type
    known = _const_int(op.operands[1])
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
            x = b.fpext(x, _FLOATS["f32"])
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
        return [b.fptrunc(b.fpext(x, _FLOATS["f32"]), dty)]   # exact widening, then one rounding
    if src.name == "f16" and dst.name == "bf16":
        return [b.fptrunc(b.fpext(x, _FLOATS["f32"]), dty)]
    return [b.fptrunc(x, dty)]


def _float_rank(t: ScalarType) -> int:
    return {"f16": 1, "bf16": 1, "f32": 2, "f64": 3}[t.name]


def _int_to_bf16(L, x, src: ScalarType):
    """Integer -> bf16 rounded once: round toward zero to f32, keep a sticky bit, round again.
    (Before sm_90 LLVM goes through a round-to-nearest f32 first, which rounds twice.)"""
    b = L.b
    f32 = _FLOATS["f32"]
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
    return b.fptrunc(odd, _FLOATS["bf16"])


_NATIVE_MATH = {"math.sqrt": "llvm.sqrt", "math.floor": "llvm.floor", "math.ceil": "llvm.ceil",
                "math.trunc": "llvm.trunc", "math.rint": "llvm.roundeven", "math.fma": "llvm.fma",
                "math.copysign": "llvm.copysign"}


@lowers(*_NATIVE_MATH)
def _native(L, op, args):
    return [L.intrinsic(_NATIVE_MATH[op.name], [args[0].type], args)]


_FAST = {"math.fast_sin": "llvm.nvvm.sin.approx.f", "math.fast_cos": "llvm.nvvm.cos.approx.f",
         "math.fast_exp2": "llvm.nvvm.ex2.approx.f", "math.fast_log2": "llvm.nvvm.lg2.approx.f",
         "math.fast_rsqrt": "llvm.nvvm.rsqrt.approx.f", "math.fast_sqrt": "llvm.nvvm.sqrt.approx.f",
         "math.fast_tanh": "llvm.nvvm.tanh.approx.f32", "math.fast_div": "llvm.nvvm.div.approx.f"}
_LOG2E = 0x3FB8AA3B   # f32 log2(e)
_LN2 = 0x3F317218     # f32 ln(2)


@lowers(*_FAST, "math.fast_exp", "math.fast_log", "math.fast_rcp")
def _fast(L, op, args):
    f32 = _FLOATS["f32"]
    if op.name == "math.fast_exp":
        x = L.b.fmul(args[0], float_const(op.results[0].type, _LOG2E))
        return [L.intrinsic("llvm.nvvm.ex2.approx.f", [], [x], ret=f32)]
    if op.name == "math.fast_log":
        y = L.intrinsic("llvm.nvvm.lg2.approx.f", [], args, ret=f32)
        return [L.b.fmul(y, float_const(op.results[0].type, _LN2))]
    if op.name == "math.fast_rcp":
        one = float_const(op.results[0].type, 0x3F800000)
        return [L.intrinsic("llvm.nvvm.div.approx.f", [], [one, args[0]], ret=f32)]
    return [L.intrinsic(_FAST[op.name], [], args, ret=f32)]


def _index64(L, idx_value: Value, idx):
    t = idx_value.type
    if t.bits == 64:
        return idx
    return L.b.sext(idx, I64) if t.signed else L.b.zext(idx, I64)


def _element_address(L, ptr_value: Value, ptr, idx_value: Value, idx):
    elem = lltype(ptr_value.type.pointee)
    addr = L.b.gep(ptr, [_index64(L, idx_value, idx)], source_etype=elem)
    # llvmlite gives the address the type of `ptr`, typed (`float addrspace(3)*`) when ptr is
    # a shared array or an alloca; Ember's pointers are opaque, so that a pointer bit-cast to
    # another element type can be loaded from and stored to as that type.
    addr.type = ll.PointerType(addrspace=ptr.type.addrspace)
    return addr


@lowers("mem.load")
def _load(L, op, args):
    ptr_t = op.operands[0].type
    addr = _element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    t = op.results[0].type
    align = op.attrs.get("align") or _natural(t)
    if isinstance(t, VectorType):
        addr = L.b.bitcast(addr, ll.PointerType(lltype(t), addr.type.addrspace))
    v = L.b.load(addr, typ=lltype(t), align=align)
    if not ptr_t.mut and ptr_t.space in ("global", "const"):
        v.set_metadata("invariant.load", L.L.ll.add_metadata([]))
    return [v]


@lowers("mem.store")
def _store(L, op, args):
    val = op.operands[0]
    addr = _element_address(L, op.operands[1], args[1], op.operands[2], args[2])
    align = op.attrs.get("align") or _natural(val.type)
    if isinstance(val.type, VectorType):
        addr = L.b.bitcast(addr, ll.PointerType(lltype(val.type), addr.type.addrspace))
    L.b.store(args[0], addr, align=align)
    return []


def _natural(t) -> int:
    if isinstance(t, VectorType):
        return t.elem.nbytes * t.length   # the vectorizer proved this alignment
    return t.nbytes


@lowers("vec.pack")
def _vec_pack(L, op, args):
    t = op.results[0].type
    v = ll.Constant(lltype(t), ll.Undefined)
    for i, x in enumerate(args):
        v = L.b.insert_element(v, x, ll.Constant(I32, i))
    return [v]


@lowers("vec.extract")
def _vec_extract(L, op, args):
    return [L.b.extract_element(args[0], ll.Constant(I32, op.attrs["index"]))]


@lowers("mem.offset")
def _offset(L, op, args):
    return [_element_address(L, op.operands[0], args[0], op.operands[1], args[1])]


@lowers("mem.alloca")
def _alloca(L, op, args):
    t = op.results[0].type
    n = op.attrs["length"]
    entry = L.llf.entry_basic_block
    saved = L.b.block
    # allocas belong in the entry block (so SROA can promote them to registers)
    with L.b.goto_entry_block():
        first = entry.instructions[0] if entry.instructions else None
        if first is not None:
            L.b.position_before(first)
        slot = L.b.alloca(lltype(t.pointee), size=ll.Constant(I32, n))
        slot.align = max(_natural(t.pointee), 4)
    L.b.position_at_end(saved)
    nbytes = ll.Constant(I64, n * _natural(t.pointee))
    # llvmlite types pointers by their element; the one memset declaration takes i8*
    raw = L.b.bitcast(slot, I8.as_pointer())
    L.intrinsic("llvm.memset", [ll.PointerType(), I64], [raw, ll.Constant(I8, 0), nbytes, ll.Constant(I1, 0)],
                ret=ll.VoidType())
    return [slot]


@lowers("mem.global")
def _global(L, op, args):
    return [L.L.globals[op.attrs["name"]]]


_SREG = {"gpu.thread_idx": "tid", "gpu.block_idx": "ctaid", "gpu.block_dim": "ntid", "gpu.grid_dim": "nctaid"}


def _sreg_value(L, reg: str):
    return L.intrinsic(f"llvm.nvvm.read.ptx.sreg.{reg}", [], [], ret=I32)


@lowers("gpu.lane_id")
def _lane_id(L, op, args):
    return [_sreg_value(L, "laneid")]


@lowers("gpu.warp_id")
def _warp_id(L, op, args):
    """The linear thread index / 32 (%warpid is a hardware slot, not this)."""
    b = L.b
    block = L.f.attrs.get("block")
    linear = _sreg_value(L, "tid.x")
    if not (block and block[1] == 1 and block[2] == 1):
        y, z = _sreg_value(L, "tid.y"), _sreg_value(L, "tid.z")
        nx, ny = _sreg_value(L, "ntid.x"), _sreg_value(L, "ntid.y")
        linear = b.add(linear, b.mul(nx, b.add(y, b.mul(ny, z))))
    return [b.lshr(linear, ll.Constant(I32, 5))]


@lowers("gpu.exited")
def _exited(L, op, args):
    return []   # the structured control flow already skips the rest; this only informs the simulator


@lowers("gpu.barrier")
def _barrier(L, op, args):
    L.intrinsic("llvm.nvvm.barrier0", [], [], ret=ll.VoidType())
    return []


_SHFL_MODE = {"down": "down", "xor": "bfly", "idx": "idx"}


def _shfl32(L, mode: str, v, lane):
    """One 32-bit shuffle among the active lanes (c = 31: a whole warp)."""
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    suffix = "f32" if str(v.type) == "float" else "i32"
    return L.intrinsic(f"llvm.nvvm.shfl.sync.{_SHFL_MODE[mode]}.{suffix}", [],
                       [mask, v, lane, ll.Constant(I32, 31)], ret=v.type)


@lowers("gpu.shfl")
def _shfl(L, op, args):
    b = L.b
    v, lane = args
    t = op.results[0].type
    mode = op.attrs["mode"]
    if t.bits == 32:
        return [_shfl32(L, mode, v, lane)]
    if t.bits == 64:   # two 32-bit halves
        bits = b.bitcast(v, I64) if t.is_float else v
        lo = _shfl32(L, mode, b.trunc(bits, I32), lane)
        hi = _shfl32(L, mode, b.trunc(b.lshr(bits, ll.Constant(I64, 32)), I32), lane)
        r = b.or_(b.zext(lo, I64), b.shl(b.zext(hi, I64), ll.Constant(I64, 32)))
        return [b.bitcast(r, lltype(t)) if t.is_float else r]
    # 8- and 16-bit values travel in a 32-bit register
    narrow = ll.IntType(t.bits)
    bits = b.bitcast(v, narrow) if t.is_float else v
    r = b.trunc(_shfl32(L, mode, b.zext(bits, I32), lane), narrow)
    return [b.bitcast(r, lltype(t)) if t.is_float else r]


@lowers("gpu.vote")
def _vote(L, op, args):
    mask = L.intrinsic("llvm.nvvm.activemask", [], [], ret=I32)
    mode = op.attrs["mode"]
    ret = I32 if mode == "ballot" else I1
    return [L.intrinsic(f"llvm.nvvm.vote.{mode}.sync", [], [mask, args[0]], ret=ret)]


@lowers("mem.shared")
def _shared(L, op, args):
    t = op.results[0].type
    name = f"{L.f.name}.{op.attrs.get('name', 'shared')}"
    n = 0
    while name in L.L.ll.globals:
        n += 1
        name = f"{L.f.name}.{op.attrs.get('name', 'shared')}.{n}"
    gv = ll.GlobalVariable(L.L.ll, ll.ArrayType(lltype(t.pointee), op.attrs["length"]), name,
                           addrspace=ADDRESS_SPACES["shared"])
    gv.linkage = "internal"
    gv.align = 16
    gv.initializer = ll.Constant(gv.value_type, ll.Undefined)
    return [gv.gep([ll.Constant(I32, 0), ll.Constant(I32, 0)])]   # a pointer to element 0


_ATOMIC = {"add": ("add", "fadd"), "and": ("and", None), "or": ("or", None), "xor": ("xor", None),
           "exch": ("xchg", "xchg")}


@lowers("mem.atomic")
def _atomic(L, op, args):
    t = op.results[0].type
    addr = _element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    kind = op.attrs["op"]
    if kind in ("min", "max"):
        name = kind if t.signed else "u" + kind
    else:
        name = _ATOMIC[kind][1 if t.is_float else 0]
    return [L.b.atomic_rmw(name, addr, args[2], "monotonic")]


@lowers("mem.cas")
def _cas(L, op, args):
    addr = _element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    pair = L.b.cmpxchg(addr, args[2], args[3], "monotonic", "monotonic")
    return [L.b.extract_value(pair, 0)]


@lowers(*_SREG)
def _sreg(L, op, args):
    name = f"llvm.nvvm.read.ptx.sreg.{_SREG[op.name]}.{op.attrs['dim']}"
    return [L.intrinsic(name, [], [], ret=I32)]


@lowers("func.call")
def _call(L, op, args):
    callee = L.L.functions[op.attrs["callee"]]
    r = L.b.call(callee, args)
    if len(op.results) > 1:
        return [L.b.extract_value(r, i) for i in range(len(op.results))]
    return [r] if op.results else []


def _result_type(types):
    if not types:
        return ll.VoidType()
    if len(types) == 1:
        return lltype(types[0])
    return ll.LiteralStructType([lltype(t) for t in types])


@lowers("func.return")
def _return(L, op, args):  # pragma: no cover - terminators are handled in region()
    return []


@lowers("scf.if")
def _if(L, op, args):
    b = L.b
    then_bb, else_bb, merge_bb = L.block("then"), L.block("else"), L.block("endif")
    b.cbranch(args[0], then_bb, else_bb)
    incoming = []
    for bb, region in ((then_bb, op.regions[0]), (else_bb, op.regions[1])):
        b.position_at_end(bb)
        vals = L.region(region)
        incoming.append((vals, b.block))
        b.branch(merge_bb)
    b.position_at_end(merge_bb)
    results = []
    for i, r in enumerate(op.results):
        phi = b.phi(lltype(r.type))
        for vals, bb in incoming:
            phi.add_incoming(vals[i], bb)
        results.append(phi)
    return results


@lowers("scf.for")
def _for(L, op, args):
    b = L.b
    lo, hi, step, *inits = args
    t = op.operands[0].type
    pre = b.block
    header, body_bb, exit_bb = L.block("for.head"), L.block("for.body"), L.block("for.end")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lo.type)
    iv.add_incoming(lo, pre)
    carried = []
    for v in inits:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        carried.append(p)
    cond = b.icmp_signed("<", iv, hi) if t.signed else b.icmp_unsigned("<", iv, hi)
    b.cbranch(cond, body_bb, exit_bb)
    b.position_at_end(body_bb)
    body = op.regions[0]
    L.bind_args(body, [iv] + carried)
    yielded = L.region(body)
    nxt = b.add(iv, step)
    latch = b.block
    b.branch(header)
    iv.add_incoming(nxt, latch)
    for p, v in zip(carried, yielded):
        p.add_incoming(v, latch)
    b.position_at_end(exit_bb)
    return carried


@lowers("scf.while")
def _while(L, op, args):
    b = L.b
    pre = b.block
    before_bb, after_bb, exit_bb = L.block("while.cond"), L.block("while.body"), L.block("while.end")
    b.branch(before_bb)
    b.position_at_end(before_bb)
    phis = []
    for v in args:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    before, after = op.regions
    L.bind_args(before, phis)
    cond, *forwarded = L.region(before)
    b.cbranch(cond, after_bb, exit_bb)
    b.position_at_end(after_bb)
    L.bind_args(after, forwarded)
    yielded = L.region(after)
    latch = b.block
    b.branch(before_bb)
    for p, v in zip(phis, yielded):
        p.add_incoming(v, latch)
    b.position_at_end(exit_bb)
    return forwarded


def lower_module(m: Module, target: Target, data_layout: str) -> ll.Module:
    ml = ModuleLowering(m, target, data_layout)
    for g in m.globals:
        ml.global_table(g)
    for f in m.functions:
        ml.declare(f)
    for f in m.functions:
        FunctionLowering(ml, f, ml.functions[f.name]).run()
    return ml.ll
