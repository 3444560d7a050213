"""Lowering of mem.prefetch_l2 (ember.ir.ops.prefetch) to PTX prefetch.global.L2, as inline
PTX without a memory clobber: the hint orders no access, so LLVM may keep moving loads and
stores around it."""

from __future__ import annotations

from . import llvm_ir as ll
from .llvm_lower import I64
from .lower_mem import element_address
from .registry import lowers


@lowers("mem.prefetch_l2")
def _prefetch_l2(L, op, args):
    addr = L.b.ptrtoint(element_address(L, op.operands[0], args[0], op.operands[1], args[1]), I64)
    L.b.asm(ll.FunctionType(ll.VoidType(), [I64]), "prefetch.global.L2 [$0];", "l", [addr], True)
    return []
