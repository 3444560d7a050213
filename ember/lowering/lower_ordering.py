"""Lowering of atomics and memory ordering (ember.ir.ops.ordering): read-modify-write
atomics, compare-and-swap, fences, atomic loads and stores.

Fences, atomic loads and stores, and compare-and-swap are LLVM's own instructions with a
synchronization scope (NVPTX: "block" is .cta, "cluster", "device" is .gpu, none is
.sys). LLVM 22 drops the order and scope of `atomicrmw` on NVPTX (an acq_rel block-scoped
add becomes a plain `atom.global.add`), so those are inline PTX `atom.sem.scope.space`,
which also keeps LLVM from moving memory accesses across them (a memory clobber)."""

from __future__ import annotations

from . import llvm_ir as ll
from .llvm_lower import lltype
from .lower_mem import element_address
from .registry import lowers
from ..ir.ops.ordering import DEFAULT_ORDER, DEFAULT_SCOPE, order_of, scope_of
from ..ir.types import ADDRESS_SPACES

LLVM_SCOPE = {"cta": "block", "cluster": "cluster", "gpu": "device", "sys": None}
LLVM_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel",
              "sc": "seq_cst"}
# cmpxchg's failure ordering: the success ordering without its release half
_FAIL_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire"}


@lowers("mem.fence")
def _fence(L, op, args):
    L.b.fence(LLVM_ORDER[op.attrs.get("order", "sc")], LLVM_SCOPE[scope_of(op)])
    return []


@lowers("mem.atomic_load")
def _atomic_load(L, op, args):
    addr = element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    t = op.results[0].type
    return [L.b.load_atomic(addr, lltype(t), LLVM_ORDER[order_of(op)], LLVM_SCOPE[scope_of(op)], t.nbytes)]


@lowers("mem.atomic_store")
def _atomic_store(L, op, args):
    addr = element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    L.b.store_atomic(args[2], addr, LLVM_ORDER[order_of(op)], LLVM_SCOPE[scope_of(op)], op.operands[2].type.nbytes)
    return []


_ATOMIC = {"add": ("add", "fadd"), "and": ("and", None), "or": ("or", None), "xor": ("xor", None),
           "exch": ("xchg", "xchg")}


def _default_order(op) -> bool:
    return order_of(op) == DEFAULT_ORDER and scope_of(op) == DEFAULT_SCOPE


@lowers("mem.atomic")
def _atomic(L, op, args):
    t = op.results[0].type
    addr = element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    kind = op.attrs["op"]
    if not _default_order(op):
        return [_ordered_rmw(L, op, addr, args[2], kind)]
    if kind in ("min", "max"):
        name = kind if t.signed else "u" + kind
    else:
        name = _ATOMIC[kind][1 if t.is_float else 0]
    return [L.b.atomic_rmw(name, addr, args[2], "monotonic")]


@lowers("mem.cas")
def _cas(L, op, args):
    addr = element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    order = order_of(op)
    pair = L.b.cmpxchg(addr, args[2], args[3], LLVM_ORDER[order], _FAIL_ORDER[order],
                       None if _default_order(op) else LLVM_SCOPE[scope_of(op)])
    return [L.b.extract_value(pair, 0)]


def _ordered_rmw(L, op, addr, value, kind: str):
    """`atom.sem.scope.space.kind.type` as inline PTX (kind: add, min, max, and, or, xor, exch)."""
    t = op.results[0].type
    if t.is_float:
        ptype = f".f{t.bits}"
    elif kind in ("and", "or", "xor", "exch"):
        ptype = f".b{t.bits}"
    elif kind in ("min", "max"):
        ptype = (".s" if t.signed else ".u") + str(t.bits)
    else:                      # add: two's complement, the same bits signed or not
        ptype = f".u{t.bits}"
    space = ".shared" if addr.type.addrspace == ADDRESS_SPACES["shared"] else ".global"
    text = f"atom.{order_of(op)}.{scope_of(op)}{space}.{kind}{ptype} $0, [$1], $2;"
    reg = {("f", 32): "f", ("f", 64): "d"}.get(("f" if t.is_float else "i", t.bits), "l" if t.bits == 64 else "r")
    ptr_reg = "r" if addr.type.addrspace == ADDRESS_SPACES["shared"] else "l"   # shared pointers are 32-bit
    ftype = ll.FunctionType(lltype(t), [addr.type, lltype(t)])
    return L.b.asm(ftype, text, f"={reg},{ptr_reg},{reg},~{{memory}}", [addr, value], True)

