"""mem: loads, stores, pointer offsets and the addresses of constant tables."""

from __future__ import annotations

from ..formats import Load, Operands, Store, Symbol
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


def _alloca_verify(op):
    t = op.results[0].type if op.results else None
    if not (isinstance(t, PtrType) and t.space == "local" and t.mut and isinstance(t.pointee, ScalarType)):
        return "result must be a `*mut local T` pointer"
    n = op.attrs.get("length")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return "length must be a positive integer"
    return None


defop("mem.alloca", Operands(), _alloca_verify, pure=False,
      doc="A zero-initialized per-thread array of `length` elements (kept in registers when every "
          "index is a constant after unrolling, in local memory otherwise).")


def _global_verify(op):
    t = op.results[0].type if op.results else None
    if not (isinstance(t, PtrType) and t.space == "const" and isinstance(t.pointee, ScalarType)):
        return "result must be a `*const T` pointer"
    return None


defop("mem.global", Symbol(), _global_verify, doc="The address of a module-level constant table.")
