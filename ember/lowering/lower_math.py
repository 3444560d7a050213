"""Lowering of the native and fast math ops (the accurate ones: lower_expansion)."""

from __future__ import annotations


from .registry import lowers
from .llvm_lower import FLOATS, float_const


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
    f32 = FLOATS["f32"]
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
