"""Lowering of the warpgroup tensor-core ops (ember.ir.ops.wgmma) to inline PTX (sm_90a; LLVM
22's NVPTX back end has no wgmma intrinsics).

A shared operand's matrix descriptor is built here from its tile's type (the op's
swizzle and row width): the start address of the operand's first element, and the
constant LBO / SBO / layout bits of ember.ir.ops.wgmma.descriptor_bits. The accumulators
are the asm's outputs tied to its inputs (`=f` and `0`..): LLVM's SROA keeps a per-thread
accumulator array indexed by constants in registers, and ptxas sees the wgmma's
registers; the memory clobber keeps shared-memory accesses on their side of it."""

from __future__ import annotations

from . import llvm_ir as ll
from ..ir.ops.wgmma import descriptor_bits
from .llvm_lower import I32, I64, lltype
from .lower_mbarrier import inline_ptx
from .lower_mem import element_address
from .registry import lowers

_F32 = ll.FloatType()


def _at(L, base, k: int, elem):
    return L.b.gep(base, [ll.Constant(I64, k)], source_etype=elem)


def _descriptor(L, op, name: str, ptr, row, col):
    """The u64 descriptor of operand `name`: the shared address of (row, col) of its tile,
    (address mod 2^18) / 16 in bits 0-13, then the tile's constant fields."""
    width = op.attrs[f"{name}_width"]
    major, rows = op.attrs.get(f"{name}_major", "k_major"), op.attrs.get(f"{name}_rows") or 0
    t = getattr(op, name).type.pointee
    row, col = L.b.zext(row, I64), L.b.zext(col, I64)
    swizzle = op.attrs[f"{name}_swizzle"]
    if major == "mn_major" or swizzle == 0:     # row `row` of block col / width (ember.ir.ops.wgmma.tile_index)
        block = L.b.udiv(col, ll.Constant(I64, width))
        index = L.b.add(L.b.mul(L.b.add(L.b.mul(block, ll.Constant(I64, rows)), row), ll.Constant(I64, width)),
                        L.b.urem(col, ll.Constant(I64, width)))
    else:
        index = L.b.add(L.b.mul(row, ll.Constant(I64, width)), col)
    addr = L.b.ptrtoint(L.b.gep(ptr, [index], source_etype=lltype(t)), I32)
    start = L.b.lshr(L.b.and_(addr, ll.Constant(I32, 0x3FFFF)), ll.Constant(I32, 4))
    bits = descriptor_bits(swizzle, major, rows)
    return L.b.or_(L.b.zext(start, I64), ll.Constant(I64, bits))


def _mma(L, op, acc_ptr, a_operand: tuple, b_desc, accumulate):
    """wgmma.mma_async with A `a_operand` ((text, constraints, values)), B's descriptor."""
    n = op.attrs["n"]
    t = op.b.type.pointee.name
    acc = [L.b.load(_at(L, acc_ptr, j, _F32), typ=_F32) for j in range(n // 2)]
    a_text, a_cons, a_vals = a_operand
    first = n // 2                                  # the inputs follow the outputs
    a_refs = ", ".join(f"${first + i}" for i in range(len(a_vals)))
    a_ref = f"{{{a_refs}}}" if a_text == "regs" else a_refs
    nb = first + len(a_vals)
    tnsp = {p: int(op.attrs.get(f"{p}_major", "k_major") == "mn_major") for p in "ab"}
    trans = f", {tnsp['a']}, {tnsp['b']}" if a_text == "desc" else f", {tnsp['b']}"  # A in registers: no transpose
    text = ("{ .reg .pred p; setp.ne.b32 p, $%d, 0; wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s "
            "{%s}, %s, $%d, p, 1, 1%s; }" % (nb + 1, n, t, t, ", ".join(f"${j}" for j in range(n // 2)),
                                              a_ref, nb, trans))
    flag = L.b.zext(accumulate, I32)
    cons = ["=f"] * (n // 2) + a_cons + ["l", "r"] + [str(j) for j in range(n // 2)]
    d = inline_ptx(L, text, ",".join(cons), a_vals + [b_desc, flag] + acc, ll.LiteralStructType([_F32] * (n // 2)))
    for j in range(n // 2):
        L.b.store(L.b.extract_value(d, j), _at(L, acc_ptr, j, _F32))


@lowers("gpu.wgmma")
def _wgmma(L, op, args):
    acc, a, a_row, a_col, b, b_row, b_col, accumulate = args
    a_desc = _descriptor(L, op, "a", a, a_row, a_col)
    _mma(L, op, acc, ("desc", ["l"], [a_desc]), _descriptor(L, op, "b", b, b_row, b_col), accumulate)
    return []


@lowers("gpu.wgmma_rs")
def _wgmma_rs(L, op, args):
    acc, a, a_index, b, b_row, b_col, accumulate = args
    elem = lltype(op.a.type.pointee)
    first = element_address(L, op.a, a, op.a_index, a_index)
    regs = []
    for r in range(4):              # 4 registers of two 16-bit elements (low half first)
        pair = ll.Constant(ll.VectorType(elem, 2), ll.Undefined)
        for e in range(2):
            pair = L.b.insert_element(pair, L.b.load(_at(L, first, 2 * r + e, elem), typ=elem), ll.Constant(I32, e))
        regs.append(L.b.bitcast(pair, I32))
    _mma(L, op, acc, ("regs", ["r"] * 4, regs), _descriptor(L, op, "b", b, b_row, b_col), accumulate)
    return []


@lowers("gpu.wgmma_fence")
def _fence(L, op, args):
    inline_ptx(L, "wgmma.fence.sync.aligned;", "", [])
    return []


@lowers("gpu.wgmma_commit")
def _commit(L, op, args):
    inline_ptx(L, "wgmma.commit_group.sync.aligned;", "", [])
    return []


@lowers("gpu.wgmma_wait")
def _wait(L, op, args):
    inline_ptx(L, f"wgmma.wait_group.sync.aligned {op.attrs['pending']};", "", [])
    return []
