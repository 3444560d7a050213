"""The IR generator's part for shared tiles the tensor cores and TMA use: where an element
of a swizzled tile lies (the XOR order, applied to the index of every access), and the
alignment TMA tiles need."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import Function, Value
from ..ir.types import ArrayType, array_scalar


def swizzle_index(b: Builder, rows: dict, ty, ptr: Value, index: Value) -> Value:
    """Where element `index` of a swizzled tile (or of one of its rows) lies, for an
    access within one 16-byte chunk: a row's by `swizzle`; a whole tile's (or one block
    of it) from the index's byte offset, the tile aligned to its atom: chunk bits 4..
    XOR bits 7.. (the hardware's Swizzle<log2(N / 16), 4, 3>)."""
    if not (isinstance(ty, ArrayType) and ty.swizzle):
        return index
    if not isinstance(ty.elem, ArrayType):
        return swizzle(b, rows, ty, ptr, index)
    n, es = ty.swizzle, array_scalar(ty).nbytes
    t = index.type
    byte = b.binary("arith.mul", index, b.const(t, es))
    g = b.binary("arith.and", b.binary("arith.shr", byte, b.const(t, 7)),
                      b.const(t, n // 16 - 1))
    return b.binary("arith.xor", index, b.binary("arith.mul", g, b.const(t, 16 // es)))

def swizzle(b: Builder, rows: dict, base_ty, ptr: Value, col: Value) -> Value:
    """Element `col` of a row of a swizzled tile: where the tile's XOR order puts it.
    Row r's 16-byte chunk c lies at chunk c ^ (r * N / 128 mod N / 16) of the same row
    (the hardware's Swizzle<log2(N / 16), 4, 3> on byte addresses, the tile aligned to
    its 8-row atom; ember.frontend.check_stmts admits rows of exactly N bytes)."""
    if not (isinstance(base_ty, ArrayType) and base_ty.swizzle) or isinstance(base_ty.elem, ArrayType):
        return col
    n, es = base_ty.swizzle, array_scalar(base_ty).nbytes
    t = col.type
    row = b.cast(rows[ptr], t)
    shift = {128: 0, 64: 1, 32: 2}[n]
    g = b.binary("arith.and", b.binary("arith.shr", row, b.const(t, shift)),
                      b.const(t, n // 16 - 1))
    return b.binary("arith.xor", col, b.binary("arith.mul", g, b.const(t, 16 // es)))


TMA_TILE_ALIGN = 128


def align_tma_tiles(f: Function) -> None:
    """The copy engine moves a TMA box to or from a 128-byte aligned shared address: the
    arrays TMA copies use (declared in the kernel, as every shared array is) are aligned so,
    and their blocks start at multiples of 128 bytes (the checker admits whole tiles only)."""
    for op in f.walk():
        if op.name in ("mem.tma_load", "mem.tma_store"):
            p = op.operands[0] if op.name == "mem.tma_load" else op.operands[1]
            while p.op is not None and p.op.name in ("mem.row", "mem.offset"):
                p = p.op.operands[0]
            if p.op is not None and p.op.name == "mem.shared":
                p.op.attrs["align"] = max(p.op.attrs.get("align") or 0, TMA_TILE_ALIGN)


class AnyBytes(dict):
    """Element bytes for an op's `accesses` where only the operand names matter."""

    def __missing__(self, key):
        return 1


def swizzle_operands(b: Builder, rows: dict, d, attrs, types: list, args: list) -> list:
    """The operands of op `d` with each index into a swizzled tile (an access of at most 16
    bytes, ember.frontend.check_calls) moved to where the XOR order puts it."""
    if d.accesses is None:
        return args
    args = list(args)
    names = [s.name for s in d.operands]
    for ptr, index, _ in d.accesses(attrs or {}, AnyBytes()):
        i, j = names.index(ptr), names.index(index)
        args[j] = swizzle_index(b, rows, types[i], args[i], args[j])
    return args
