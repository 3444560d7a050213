"""mem: loads, stores, pointer offsets and the addresses of constant tables."""

from __future__ import annotations

from ..formats import Atomic, Load, Operands, Store, Symbol
from ..types import PtrType, ScalarType, VectorType
from . import checks as C
from . import defop


def _ptr_index(op, ptr_i: int) -> str | None:
    ptr, idx = op.operands[ptr_i], op.operands[ptr_i + 1]
    if not isinstance(ptr.type, PtrType):
        return f"expects a pointer, not {ptr.type}"
    return C.integer(idx.type, "index")


def _element_ok(ptr_t: PtrType, t) -> str | None:
    if t == ptr_t.pointee:
        return None
    if isinstance(t, VectorType) and t.elem == ptr_t.pointee:
        return None
    return f"type {t} does not match the pointee type {ptr_t.pointee}"


def _load_verify(op):
    return C.first(lambda: C.arity(op, 2, 1),
                   lambda: _ptr_index(op, 0),
                   lambda: _element_ok(op.operands[0].type, op.results[0].type))


def _store_verify(op):
    return C.first(lambda: C.arity(op, 3, 0),
                   lambda: _ptr_index(op, 1),
                   lambda: None if op.operands[1].type.mut else "store through a read-only pointer",
                   lambda: _element_ok(op.operands[1].type, op.operands[0].type))


defop("mem.load", Load(), _load_verify, speculatable=False, reads_memory=True,
      doc="Load element `index` of a pointer (a vector type loads that many consecutive elements).")
defop("mem.store", Store(), _store_verify, pure=False, speculatable=False,
      doc="Store to element `index` of a mutable pointer.")


def _offset_verify(op):
    return C.first(lambda: C.arity(op, 2, 1),
                   lambda: _ptr_index(op, 0),
                   lambda: C.same([op.operands[0].type, op.results[0].type]))


defop("mem.offset", Operands(), _offset_verify, infer=lambda ts, attrs: [ts[0]],
      doc="Pointer plus an element count (signed for signed index types).")


def _array_verify(space: str):
    """mem.alloca and mem.shared: a `*mut SPACE T` to `length` (> 0) elements."""
    def verify(op):
        t = op.results[0].type if op.results else None
        if not (isinstance(t, PtrType) and t.space == space and t.mut and isinstance(t.pointee, ScalarType)):
            return f"result must be a `*mut {space} T` pointer"
        n = op.attrs.get("length")
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            return "length must be a positive integer"
        return None
    return verify


defop("mem.alloca", Operands(), _array_verify("local"), pure=False,
      doc="A zero-initialized per-thread array of `length` elements (kept in registers when every "
          "index is a constant after unrolling, in local memory otherwise).")


defop("mem.shared", Operands(), _array_verify("shared"), pure=False,
      doc="A block's shared array of `length` elements (uninitialized), one per kernel declaration.")

ATOMIC_OPS = ("add", "min", "max", "and", "or", "xor", "exch")


def _atomic_verify(op):
    return C.first(lambda: C.arity(op, 3, 1),
                   lambda: _ptr_index(op, 0),
                   lambda: None if op.attrs.get("op") in ATOMIC_OPS else f"unknown atomic op {op.attrs.get('op')}",
                   lambda: None if op.operands[0].type.mut and op.operands[0].type.space in ("global", "shared")
                   else "atomics need a mutable global or shared pointer",
                   lambda: C.same([op.operands[0].type.pointee, op.operands[2].type, op.results[0].type]))


defop("mem.atomic", Atomic("op", 1), _atomic_verify, pure=False, speculatable=False,
      doc="Atomically p[i] = op(p[i], v) (add, min, max, and, or, xor, exch); the result is the old "
          "value. Lanes are applied in lane order by the simulator (the GPU's order is unspecified).")


def _cas_verify(op):
    return C.first(lambda: C.arity(op, 4, 1),
                   lambda: _ptr_index(op, 0),
                   lambda: None if op.operands[0].type.mut and op.operands[0].type.space in ("global", "shared")
                   else "atomics need a mutable global or shared pointer",
                   lambda: C.same([op.operands[0].type.pointee, op.operands[2].type, op.operands[3].type,
                                   op.results[0].type]))


defop("mem.cas", Atomic(None, 2), _cas_verify, pure=False, speculatable=False,
      doc="Atomically: if p[i] == expected then p[i] = new; the result is the old value.")


def _global_verify(op):
    t = op.results[0].type if op.results else None
    if not (isinstance(t, PtrType) and t.space == "const" and isinstance(t.pointee, ScalarType)):
        return "result must be a `*const T` pointer"
    return None


defop("mem.global", Symbol(), _global_verify, doc="The address of a module-level constant table.")
