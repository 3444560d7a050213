"""mem: loads, stores, atomics, pointer offsets, arrays and the addresses of constant
tables. Their simulation goes through the machine (`ember.ir.interp.Machine`), which
keeps the memory and checks bounds, alignment, initialization and races."""

from __future__ import annotations

from ..formats import Atomic, Load, Operands, Store, Symbol
from ..opdef import (ALLOCATES, MAY_FAULT, READS_MEMORY, WRITES_MEMORY, Attr, defop, enum)
from ..types import PtrType, ScalarType, VectorType
from .ordering import ORDERS, SCOPE_ATTR, order_attr, scope_min_sm


def _element_ok(ptr_t: PtrType, t) -> str | None:
    if t == ptr_t.pointee:
        return None
    if isinstance(t, VectorType) and t.elem == ptr_t.pointee:
        return None
    return f"type {t} does not match the pointee type {ptr_t.pointee}"


defop("mem.load", Load(), operands="ptr: ptr, index: I", results="result: any", attrs={"align": Attr("int", required=False)},
      traits=(READS_MEMORY, MAY_FAULT), verify=lambda op: _element_ok(op.ptr.type, op.result.type),
      simulate=lambda m, op, args, mask: [m.load(op, args[0], args[1], op.results[0].type, mask)],
      example="%v = mem.load %p[%i] : f32", example_args="%p: *global f32, %i: u32",
      doc="Load element `index` of a pointer (a vector type loads that many consecutive elements).")


def _store_verify(op):
    if not op.ptr.type.mut:
        return "store through a read-only pointer"
    return _element_ok(op.ptr.type, op.value.type)


def _store_sim(m, op, args, mask):
    m.store(op, args[1], args[2], op.operands[0].type, args[0], mask)
    return []


defop("mem.store", Store(), operands="value: any, ptr: ptr, index: I", attrs={"align": Attr("int", required=False)},
      traits=(WRITES_MEMORY, MAY_FAULT), verify=_store_verify, simulate=_store_sim,
      example="mem.store %v, %p[%i] : f32", example_args="%v: f32, %p: *mut global f32, %i: u32",
      doc="Store to element `index` of a mutable pointer.")


def _offset_verify(op):
    want = op.ptr.type.with_align(None)
    if op.result.type != want:
        return (f"result must be {want}: a pointer plus an offset claims no alignment of its own "
                "(what it keeps is derived by ember.ir.analysis.pointers, never inherited)")
    return None


defop("mem.offset", Operands(), operands="ptr: ptr, index: I", results="result: ptr", verify=_offset_verify,
      infer=lambda ts, attrs: [ts[0].with_align(None)] if isinstance(ts[0], PtrType) else None,
      simulate=lambda m, op, args, mask: [args[0].offset(args[1])],
      example="%q = mem.offset %p, %i : *global f32", example_args="%p: *global f32 align(16), %i: i64",
      doc="Pointer plus an element count (signed for signed index types). The result claims no "
          "alignment beyond its element's: what it keeps is derived from the pointer's and the "
          "offset's (ember.ir.analysis.pointers), never inherited from the pointer's type.")


def _row_verify(op):
    want = op.ptr.type.with_align(None)
    if op.result.type != want:
        return f"result must be {want}"
    if op.attrs["length"] <= 0 or op.attrs["rows"] <= 0:
        return "length and rows must be positive"
    return None


def _row_text(op) -> str:
    return f"[[{op.ptr.type.pointee}; {op.attrs['length']}]; {op.attrs['rows']}]"


defop("mem.row", Operands(), operands="ptr: ptr, index: I", results="result: ptr",
      attrs={"length": Attr("int", lo=1), "rows": Attr("int", lo=1)}, traits=(MAY_FAULT,),
      verify=_row_verify, infer=lambda ts, attrs: [ts[0].with_align(None)] if isinstance(ts[0], PtrType) else None,
      simulate=lambda m, op, args, mask: [m.row(op, args[0], args[1], op.attrs["length"], op.attrs["rows"],
                                                _row_text(op), mask)],
      example="%r = mem.row %p, %i {length = 33, rows = 32} : *mut shared f32",
      example_args="%p: *mut shared f32, %i: u32",
      doc="Row `index` of a multi-dimensional array laid out row by row: the pointer plus index x "
          "length elements. The simulator checks 0 <= index < rows, and that accesses through the "
          "result stay in the row (`a[r][c]` with c past the row is out of bounds, not the next row); "
          "since a row out of range is an error there, it may fault and is never speculated.")


def _array_verify(space: str):
    """mem.alloca and mem.shared: a `*mut SPACE T` to `length` (> 0) elements."""
    def verify(op):
        t = op.results[0].type
        if not (isinstance(t, PtrType) and t.space == space and t.mut and isinstance(t.pointee, ScalarType)):
            return f"result must be a `*mut {space} T` pointer"
        if op.length <= 0:
            return "length must be a positive integer"
        return None
    return verify


def _alloc_sim(space):
    def sim(m, op, args, mask):
        t = op.results[0].type
        return [m.allocate(op, space, t.pointee, op.length, op.attrs.get("name"))]
    return sim


defop("mem.alloca", Operands(), results="result: ptr", attrs={"length": Attr("int")}, traits=(ALLOCATES,),
      verify=_array_verify("local"), simulate=_alloc_sim("local"),
      example="%a = mem.alloca {length = 4} : *mut local f32",
      doc="A zero-initialized per-thread array of `length` elements (kept in registers when every "
          "index is a constant after unrolling, in local memory otherwise).")
defop("mem.shared", Operands(), results="result: ptr",
      attrs={"length": Attr("int"), "name": Attr("symbol"), "align": Attr("int", required=False, lo=16)},
      traits=(ALLOCATES,), verify=_array_verify("shared"), simulate=_alloc_sim("shared"),
      example="%t = mem.shared {length = 256, name = tile} : *mut shared f32",
      doc="A block's shared array of `length` elements (uninitialized), one per kernel declaration, "
          "16-byte aligned or `align` (a swizzled tile: its 8-row atom).")


def _sized_verify(op):
    t = op.results[0].type
    if not (isinstance(t, PtrType) and t.space == "shared" and t.mut and isinstance(t.pointee, ScalarType)):
        return "result must be a `*mut shared T` pointer"
    return None


def _sized_sim(m, op, args, mask):
    n = args[0][mask]
    if n.size and (n != n[0]).any():
        m.fail("S0001", "a launch-sized shared array needs one length for the whole block", op)
    length = int(n[0]) if n.size else 0
    return [m.allocate(op, "shared", op.results[0].type.pointee, length, op.attrs.get("name"))]


defop("mem.shared_sized", Operands(), operands="length: u32", results="result: ptr",
      attrs={"name": Attr("symbol")}, traits=(ALLOCATES,), verify=_sized_verify, simulate=_sized_sim,
      example="%row = mem.shared_sized %n {name = row} : *mut shared f32", example_args="%n: u32",
      doc="A block's shared array of `length` elements sized at launch: `length` is a kernel "
          "parameter, the array lies after the kernel's other shared arrays in its dynamic shared "
          "memory, and each launch gives the bytes for the length it passes (at most one per kernel).")

# Atomic read-modify-write operations: kind -> (the arith op that combines the old value
# with the operand, or None for exchange; the element types it is defined for).
_INTS = ("i32", "u32", "i64", "u64")
ATOMIC_KINDS = {
    "add": ("arith.add", _INTS + ("f32", "f64")),
    "min": ("arith.min", _INTS),
    "max": ("arith.max", _INTS),
    "and": ("arith.and", _INTS),
    "or": ("arith.or", _INTS),
    "xor": ("arith.xor", _INTS),
    "exch": (None, _INTS + ("f32",)),
}
CAS_TYPES = _INTS


def _atomic_verify(op):
    kind = op.attrs.get("op")
    t = op.result.type
    if kind in ATOMIC_KINDS and t.name not in ATOMIC_KINDS[kind][1]:
        return f"atomic {kind} is not defined for {t}"
    return None


def _atomic_sim(m, op, args, mask):
    """Applied lane by lane in lane order (the GPU's order is unspecified); each update
    is the combining op's own semantics."""
    from . import OPS
    value = args[2]
    combine = ATOMIC_KINDS[op.attrs["op"]][0]
    if combine is None:
        def update(old, lane):
            return value[lane:lane + 1]
    else:
        ev = OPS[combine].eval

        def update(old, lane):
            return ev(op, old, value[lane:lane + 1])[0]
    return [m.atomic(op, args[0], args[1], op.result.type, mask, update)]


def _cas_sim(m, op, args, mask):
    expected, new = args[2], args[3]

    def update(old, lane):
        return new[lane:lane + 1] if old[0] == expected[lane] else old

    def wrote(old, lane):
        return old[0] == expected[lane]
    return [m.atomic(op, args[0], args[1], op.result.type, mask, update, wrote)]


defop("mem.atomic", Atomic("op", 1), operands="ptr: *T, index: I, value: T", results="result: T",
      attrs={"op": enum(*ATOMIC_KINDS), "order": order_attr(*ORDERS), "scope": SCOPE_ATTR},
      traits=(READS_MEMORY, WRITES_MEMORY, MAY_FAULT), verify=_atomic_verify, simulate=_atomic_sim,
      min_sm_for=scope_min_sm,
      example="%old = mem.atomic add %p[%i], %v : u32", example_args="%p: *mut global u32, %i: u32, %v: u32",
      doc="Atomically p[i] = op(p[i], v) (add, min, max, and, or, xor, exch); the result is the old "
          "value. Lanes are applied in lane order by the simulator (the GPU's order is unspecified). "
          "`order` and `scope` as in ember.ir.ops.ordering (relaxed at gpu scope when absent).")
defop("mem.cas", Atomic(None, 2), operands=f"ptr: *T{{{','.join(CAS_TYPES)}}}, index: I, expected: T, new: T",
      results="result: T", attrs={"order": order_attr(*ORDERS), "scope": SCOPE_ATTR},
      traits=(READS_MEMORY, WRITES_MEMORY, MAY_FAULT), simulate=_cas_sim, min_sm_for=scope_min_sm,
      example="%old = mem.cas %p[%i], %e, %n : u32",
      example_args="%p: *mut global u32, %i: u32, %e: u32, %n: u32",
      doc="Atomically: if p[i] == expected then p[i] = new; the result is the old value.")


def _global_verify(op):
    t = op.results[0].type
    if not (isinstance(t, PtrType) and t.space == "const" and isinstance(t.pointee, ScalarType)):
        return "result must be a `*const T` pointer"
    return None


defop("mem.global", Symbol(), results="result: ptr", attrs={"name": Attr("symbol")}, verify=_global_verify,
      simulate=lambda m, op, args, mask: [m.table(op.attrs["name"], op.results[0].type.pointee)],
      example="global @table : [u32; 2] = [7, 9]\n\nfunc @f() {\n  %t = mem.global @table : *const u32\n  return\n}\n",
      doc="The address of a module-level constant table.")
