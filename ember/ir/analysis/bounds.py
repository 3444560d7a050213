"""Array accesses that are out of bounds whenever they run: a load or store of a per-thread
or shared array (mem.alloca, mem.shared), or an op's declared access (an mma's fragments,
OpDef.accesses), at elements that are constants once the pipeline has inlined, unrolled
and folded, before the array's start or past its end (or its row, through mem.row).

The type checker reports constant indices the source writes (E0216). These come later:
from const parameters and unrolled loops, through device functions whose parameter is a
pointer (`q: *mut local u32`), where the checker sees no array at all - a SwiGLU kernel
compiled with ROWS 4 wrote past its per-thread arrays and only the simulator said so. The
driver reports each as E0409. Only what is certain is reported: a pointer chosen at run
time (select, a loop-carried value, a parameter) or an index that is not a constant is
left to the simulator."""

from __future__ import annotations

from ...records import record
from ..core import Op, Value
from ..types import PtrType, ScalarType, VectorType
from .values import const_value

ARRAYS = ("mem.alloca", "mem.shared")


@record(frozen=True)
class OutOfBounds:
    access: Op        # the mem.load, mem.store, or an op declaring its accesses (OpDef.accesses)
    array: Op         # the mem.alloca or mem.shared it reads or writes
    first: int        # the first element it touches, counted from the array's start
    count: int        # the elements it touches (a vector access: several)
    start: int        # the elements it may touch: [start, end) (a row of a 2-D array, or all)
    end: int


def _signed(v: Value) -> int | None:
    """The integer constant v holds, or None. Constants are kept in their type's range
    (arith.const's verifier): a signed index's negative constant is negative here."""
    c = const_value(v)
    if c is None or isinstance(c, bool) or not isinstance(c, int):
        return None
    return c


def _window(ptr: Value) -> tuple | None:
    """(the array op, the pointer's element offset from the array's start, start, end: the
    elements accesses through it may touch), or None where that is not known exactly."""
    steps = []
    v = ptr
    while True:
        op = v.op
        if op is None:
            return None
        if op.name in ARRAYS:
            array, offset, start, end = op, 0, 0, op.attrs["length"]
            break
        if op.name not in ("mem.offset", "mem.row"):
            return None
        c = _signed(op.operands[1])
        if c is None:
            return None
        steps.append((op, c))
        v = op.operands[0]
    for op, c in reversed(steps):
        if op.name == "mem.offset":
            offset += c
        else:                                    # row c of rows of `length`: only that row
            length = op.attrs["length"]
            offset += c * length
            start, end = offset, offset + length
    return array, offset, start, end


def _accesses(op: Op):
    """(pointer, index, elements) of each array `op` reads or writes from a pointer and an
    index: a load's or store's one (a vector: several elements), or those its op declares
    (OpDef.accesses: an mma's fragments, a cp.async's destination, ...)."""
    if op.name == "mem.load":
        t = op.results[0].type
        return [(op.operands[0], op.operands[1], t.length if isinstance(t, VectorType) else 1)]
    if op.name == "mem.store":
        t = op.operands[0].type
        return [(op.operands[1], op.operands[2], t.length if isinstance(t, VectorType) else 1)]
    d = op.opdef
    if d.accesses is None:
        return []
    slot = {spec.name: v for spec, v in zip(d.operands, op.operands)}
    elem_bytes = {name: v.type.pointee.nbytes for name, v in slot.items()
                  if isinstance(v.type, PtrType) and isinstance(v.type.pointee, ScalarType)}
    return [(slot[ptr], slot[index], count) for ptr, index, count in d.accesses(op.attrs, elem_bytes)
            if ptr in slot and index in slot]


def out_of_bounds(functions) -> list[OutOfBounds]:
    """Every array access of `functions` that is certainly out of its array's bounds."""
    found = []
    windows: dict = {}
    for f in functions:
        for op in f.body.walk():
            for ptr, index, count in _accesses(op):
                c = _signed(index)
                if c is None:
                    continue
                if ptr not in windows:
                    windows[ptr] = _window(ptr)
                w = windows[ptr]
                if w is None:
                    continue
                array, offset, start, end = w
                first = offset + c
                if first < start or first + count > end:
                    found.append(OutOfBounds(op, array, first, count, start, end))
    return found
