"""Ember IR -> LLVM IR (text, built with ember.lowering.llvm_ir), for the NVPTX back end: the machinery (types,
constants, functions, the region walk) that the per-dialect lowerings (`lower_*.py`,
registered by op name in `ember.lowering.registry.LOWER`) use.

Structured control flow becomes a CFG here (scf.if -> branches and phis, scf.for and
scf.while -> header/body/exit blocks); a lowering of an op with regions is a generator
that yields `L.region(r)` for each region it lowers (run by ember.trampoline, so nesting
depth costs no recursion). The semantics the language promises (see ember.ir.semantics)
are made explicit where LLVM's would differ: wrapping integer ops without nsw/nuw,
guarded division, masked shifts, saturating float->int conversion, no FMA contraction.

Kernels use the `ptx_kernel` calling convention; their block size becomes `.maxntid`
(through nvvm.annotations, which LLVM upgrades to the `nvvm.maxntid` attribute).
Read-only global pointers are `noalias` and their loads `!invariant.load`, which lets
the back end use the non-coherent load path (`ld.global.nc`).
"""

from __future__ import annotations

from . import llvm_ir as ll

from .. import floats
from ..diagnostics import InternalError
from ..ir.analysis.pointers import SHARED_ALIGN
from ..ir.core import Function, Module, Region, Value
from ..ir.types import ADDRESS_SPACES, ArrayType, PtrType, ScalarType, TensorMapType, Type, VectorType
from ..targets import Target
from ..trampoline import run
from .registry import LOWER


I1, I8, I16, I32, I64 = (ll.IntType(n) for n in (1, 8, 16, 32, 64))
FLOATS = {"f16": ll.HalfType(), "bf16": ll.BFloatType(), "f32": ll.FloatType(), "f64": ll.DoubleType()}


def lltype(t: Type):
    if isinstance(t, ScalarType):
        if t.is_bool:
            return I1
        if t.is_int:
            return ll.IntType(t.bits)
        return FLOATS[t.name]
    if isinstance(t, PtrType):
        # Per-thread arrays are allocas, which NVPTX keeps in the generic address space
        # (the back end moves them to registers or local memory).
        return ll.PointerType(addrspace=0 if t.space == "local" else ADDRESS_SPACES[t.space])
    if isinstance(t, VectorType):
        return ll.VectorType(lltype(t.elem), t.length)
    if isinstance(t, ArrayType):
        return ll.ArrayType(lltype(t.elem), t.length)
    if isinstance(t, TensorMapType):     # the address of the kernel parameter (see `declare`)
        return ll.PointerType(addrspace=0)
    raise InternalError("lower", f"no LLVM type for {t}")


def float_const(t: ScalarType, bits: int):
    """An exact LLVM constant for a float bit pattern (NaN payloads included)."""
    if t.name == "f16":
        return ll.FormattedConstant(FLOATS["f16"], f"0xH{bits:04X}")
    if t.name == "bf16":
        return ll.FormattedConstant(FLOATS["bf16"], f"0xR{bits:04X}")
    if t.name == "f64":
        return ll.FormattedConstant(FLOATS["f64"], f"0x{bits:016X}")
    # f32 constants are written as the double of the same value.
    sign, exp, man = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exp == 0xFF:
        d = (sign << 63) | (0x7FF << 52) | (man << 29)
    else:
        d = floats.to_bits(floats.from_bits(bits, "f32"), "f64")
    return ll.FormattedConstant(FLOATS["f32"], f"0x{d:016X}")


def const(t: ScalarType, value):
    if t.is_float:
        return float_const(t, value)
    if t.is_bool:
        return ll.Constant(I1, 1 if value else 0)
    return ll.Constant(ll.IntType(t.bits), value & ((1 << t.bits) - 1))


class FunctionLowering:
    def __init__(self, lowering: "ModuleLowering", f: Function, llf: ll.Function, split: bool = False):
        self.L = lowering
        self.f = f
        self.llf = llf
        self.values: dict[Value, object] = {}
        self.b: ll.IRBuilder | None = None
        self._blocks = 0
        self.dynamic_shared: dict | None = None   # mem.shared op -> offset in the dynamic buffer
        self.split = split                        # cut straight-line code into blocks (LARGE_FUNCTION)
        self._since_split = 0

    def block(self, name: str) -> ll.Block:
        self._blocks += 1
        return self.llf.append_basic_block(f"{name}{self._blocks}")

    def v(self, value: Value):
        return self.values[value]

    def run(self) -> None:
        self.b = ll.IRBuilder(self.llf.append_basic_block("entry"))
        lines = self.L.lines
        if lines is not None:
            self.subprogram = lines.subprogram(self.llf, self.f.name.split("$", 1)[0], self.f.loc)
            if self.f.loc is not None:
                self.b.dbg = lines.location(self.f.loc, self.subprogram)
        for arg, llarg in zip(self.f.args, self.llf.args):
            self.values[arg] = llarg
        rets = run(self.region(self.f.body))
        if not rets:
            self.b.ret_void()
        elif len(rets) == 1:
            self.b.ret(rets[0])
        else:   # several results travel as a literal struct (device functions are inlined)
            agg = ll.Constant(_result_type(self.f.result_types), ll.Undefined)
            for i, v in enumerate(rets):
                agg = self.b.insert_value(agg, v, i)
            self.b.ret(agg)

    def region(self, r: Region):
        """Lower the ops of a region (a generator); returns the terminator's operands."""
        for op in r.ops:
            if op.opdef.terminator:
                return [self.v(x) for x in op.operands]
            if self.L.lines is not None and op.loc is not None:
                self.b.dbg = self.L.lines.location(op.loc, self.subprogram)
            if self.split:
                self._since_split += 1
                if self._since_split >= SPLIT_EVERY:
                    self._since_split = 0
                    nxt = self.block("split")
                    self.b.branch(nxt)
                    self.b.position_at_end(nxt)
            handler = LOWER.get(op.name)
            if handler is None:
                raise InternalError("lower", f"no lowering for `{op.name}`", op.loc)
            results = handler(self, op, [self.v(x) for x in op.operands])
            if op.regions:
                results = yield results
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
    def __init__(self, m: Module, target: Target, data_layout: str, library_definition: str | None = None,
                 line_info: bool = False):
        self.m = m
        self.library_definition = library_definition
        self.target = target
        self.ll = ll.Module(name="ember")
        self.ll.triple = "nvptx64-nvidia-cuda"
        self.ll.data_layout = data_layout
        self.functions: dict[str, ll.Function] = {}
        self.globals: dict[str, ll.GlobalVariable] = {}
        self._intrinsics: dict[str, ll.Function] = {}
        self.lines = None
        if line_info:
            from .line_info import LineInfo
            self.lines = LineInfo(self.ll)

    def intrinsic(self, name: str, overload: list, arg_types: list, ret=None) -> ll.Function:
        """`llvm.foo` overloaded on `overload` types, or a fixed `llvm.nvvm.*` name."""
        full = name + "".join("." + _suffix(t) for t in overload)
        fn = self._intrinsics.get(full)
        if fn is None:
            ret = ret or (arg_types[0] if arg_types else ll.VoidType())
            fn = ll.Function(self.ll, ll.FunctionType(ret, arg_types), full)
            self._intrinsics[full] = fn
        return fn

    def dynamic_shared_base(self):
        """The module's dynamic shared buffer (PTX `.extern .shared .align 16 .b8 ember_dynamic_shared[]`:
        every kernel's starts at the same address, sized by its launch)."""
        gv = self.globals.get("ember_dynamic_shared")
        if gv is None:
            gv = ll.GlobalVariable(self.ll, ll.ArrayType(I8, 0), "ember_dynamic_shared",
                                   addrspace=ADDRESS_SPACES["shared"])
            gv.linkage = "external"
            gv.align = SHARED_ALIGN
            self.globals["ember_dynamic_shared"] = gv
        return gv

    def global_table(self, g) -> None:
        ty = ll.ArrayType(lltype(g.elem), len(g.values))
        gv = ll.GlobalVariable(self.ll, ty, g.name, addrspace=ADDRESS_SPACES["const"])
        gv.global_constant = True
        gv.linkage = "internal"
        gv.initializer = ll.Constant(ty, [const(g.elem, v) for v in g.values])
        self.globals[g.name] = gv

    def declare(self, f: Function) -> None:
        fnty = ll.FunctionType(result_type(f.result_types), [lltype(a.type) for a in f.args])
        llf = ll.Function(self.ll, fnty, f.name)
        for a, lla in zip(f.args, llf.args):
            lla.name = a.name or ""
            t = a.type
            if isinstance(t, PtrType):
                if f.kind == "kernel" and not t.mut and t.space == "global":
                    lla.add_attribute("noalias")
                if t.align is not None:
                    lla.attributes.align = t.align
            elif isinstance(t, TensorMapType):
                # a CUtensorMap: 128 bytes passed by value, used in place (a grid constant: the
                # address of the parameter itself, never a copy in local memory)
                lla.add_attribute("byval([128 x i8])")
                lla.add_attribute('"nvvm.grid_constant"')
                lla.attributes.align = 64
        if f.kind == "kernel":
            llf.calling_convention = "ptx_kernel"
            block = f.attrs.get("block")
            if block:
                for dim, n in zip("xyz", block):
                    md = self.ll.add_metadata([llf, f"maxntid{dim}", ll.Constant(I32, n)])
                    self.ll.add_named_metadata("nvvm.annotations", md)
            cluster = f.attrs.get("cluster")
            if cluster:        # PTX .explicitcluster and .reqnctapercluster
                fields = [x for dim, n in zip("xyz", cluster) for x in (f"cluster_dim_{dim}", ll.Constant(I32, n))]
                self.ll.add_named_metadata("nvvm.annotations", self.ll.add_metadata([llf, *fields]))
            if f.attrs.get("min_blocks"):
                # launch bound: PTX .minnctapersm (LLVM upgrades the annotation to nvvm.minctasm)
                md = self.ll.add_metadata([llf, "minctasm", ll.Constant(I32, f.attrs["min_blocks"])])
                self.ll.add_named_metadata("nvvm.annotations", md)
        elif f.attrs.get("library"):
            # Linked in as compiled on its own (ember.lowering.library): external linkage on
            # both sides, so that caller and callee agree on the calling convention (NVPTX
            # widens the parameter alignment of internal functions).
            if f.name == self.library_definition:
                llf.attributes.add("noinline")
            else:
                self.ll.library.append(f.name)
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


def result_type(types):
    if not types:
        return ll.VoidType()
    if len(types) == 1:
        return lltype(types[0])
    return ll.LiteralStructType([lltype(t) for t in types])


_result_type = result_type


def const_int(v: Value):
    d = v.op
    if d is not None and d.name == "arith.const":
        return d.attrs["value"]
    return None


# LLVM instructions an accurate math op's expansion may add (its templates are ~200 ops): the
# size hint of a function counts them, so that it bounds the function's LLVM size.
EXPANSION_SIZE = 256
# A function larger than this (ember.lowering.ptx compiles it without LLVM's straight-line
# optimisations and at codegen -O0) has its straight-line code cut into blocks of SPLIT_EVERY
# ops: instruction selection works a block at a time and is superlinear in a block's size
# (a 40,000-instruction block: 11 s; cut every 1,000: 0.4 s).
LARGE_FUNCTION = 10_000
SPLIT_EVERY = 512


def lower_module(m: Module, target: Target, data_layout: str, library_definition: str | None = None,
                 line_info: bool = False) -> ll.Module:
    """The module's kernels and device functions; its library functions (those in the module,
    and those the math templates that lower_expansion emits call) are only declared and
    listed in the result's `library` (ember.lowering.library compiles them once and links
    them into the PTX), but for the one named by `library_definition`, which that uses to
    compile one on its own."""
    from ..ir.passes.expand_math import library_needed
    ml = ModuleLowering(m, target, data_layout, library_definition, line_info)
    defined = [f for f in m.functions if not f.attrs.get("library") or f.name == library_definition]
    used, expanded = set(), set()        # one walk: the tables read, the math ops left to expand,
    sizes = {}
    for f in defined:                    # and each function's size (ops, and expansions' ops)
        size = 0
        for op in f.walk():
            size += 1
            if op.name == "mem.global":
                used.add(op.attrs["name"])
            elif op.opdef.expanded_by == "expand-math":
                expanded.add((op.name, op.operands[0].type))
                size += EXPANSION_SIZE
        ml.ll.size_hint = max(ml.ll.size_hint, size)
        sizes[f.name] = size
    for g in m.globals:
        if g.name in used:      # a table only library functions read comes with them
            ml.global_table(g)
    for f in m.functions:
        ml.declare(f)
    for f in library_needed(expanded):
        if f.name not in ml.functions:
            ml.declare(f)
    ml.ll.library.sort()
    for f in defined:
        FunctionLowering(ml, f, ml.functions[f.name], split=sizes[f.name] > LARGE_FUNCTION).run()
    return ml.ll
