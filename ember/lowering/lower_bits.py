"""Lowering of the bit operations (ember/ir/ops/bits.py) to LLVM's intrinsics, which NVPTX
selects as popc, clz and brev; bfind as the width less one less the leading zeros."""

from __future__ import annotations

from . import llvm_ir as ll
from .llvm_lower import I1, I32
from .registry import lowers


def _to_u32(L, v):
    if v.type.width == 32:
        return v
    return L.b.trunc(v, I32) if v.type.width > 32 else L.b.zext(v, I32)


@lowers("arith.popc")
def _popc(L, op, args):
    return [_to_u32(L, L.intrinsic("llvm.ctpop", [args[0].type], args))]


@lowers("arith.clz")
def _clz(L, op, args):
    return [_to_u32(L, L.intrinsic("llvm.ctlz", [args[0].type], [args[0], ll.Constant(I1, 0)], ret=args[0].type))]


@lowers("arith.bfind")
def _bfind(L, op, args):
    x = args[0]
    if op.value.type.signed:             # the most significant bit that differs from the sign
        x = L.b.select(L.b.icmp_signed("<", x, ll.Constant(x.type, 0)), L.b.not_(x), x)
    clz = _to_u32(L, L.intrinsic("llvm.ctlz", [x.type], [x, ll.Constant(I1, 0)], ret=x.type))
    return [L.b.sub(ll.Constant(I32, op.value.type.bits - 1), clz)]


@lowers("arith.brev")
def _brev(L, op, args):
    return [L.intrinsic("llvm.bitreverse", [args[0].type], args)]
