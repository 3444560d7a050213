"""Lowering of the tensor-core ops (ember/ir/ops/tensor.py) to LLVM's NVVM intrinsics. A
fragment's 16-bit elements travel in 32-bit registers two at a time (element 2r in the low
half of register r), which is how the per-thread arrays are read and written here.

ldmatrix stores each register as one `<2 x T>` (align 2: the pair may start at an odd
element): LLVM's SROA then keeps the pair in one 32-bit register, also where it lives
across a loop's back edge (gemm_bf16 loads the next tile's first fragments before the loop
turns); stored as two 16-bit elements, the pair became two 16-bit values there, unpacked
after ldmatrix and packed again before mma (a PRMT each in the SASS). mma reads its
operands element by element: fragments a kernel writes itself, element by element
(q4k_mma's dequantized weights), would otherwise be read by a wider access than they were
written with, which SROA splits into shifts and masks (1.8x the PRMTs of q4k_mma's SASS)."""

from __future__ import annotations

from . import llvm_ir as ll

from .registry import lowers
from .llvm_lower import I32, I64, lltype
from .lower_mbarrier import inline_ptx
from .lower_mem import element_address
from ..ir.ops.tensor import mma_i8_k


def _at(L, base, k: int, elem):
    """The address of element k after `base` (an element address of type `elem`)."""
    return L.b.gep(base, [ll.Constant(I64, k)], source_etype=elem)


def _pairs(L, base, count: int, elem) -> list:
    """`count` registers, each two consecutive 16-bit elements from base (low half first)."""
    regs = []
    for r in range(count):
        pair = ll.Constant(ll.VectorType(elem, 2), ll.Undefined)
        for e in range(2):
            v = L.b.load(_at(L, base, 2 * r + e, elem), typ=elem)
            pair = L.b.insert_element(pair, v, ll.Constant(I32, e))
        regs.append(pair)
    return regs


@lowers("gpu.mma")
def _mma(L, op, args):
    t = op.a.type.pointee
    elem, f32 = lltype(t), ll.FloatType()
    acc = element_address(L, op.acc, args[0], op.acc_index, args[1])
    a = _pairs(L, element_address(L, op.a, args[2], op.a_index, args[3]), 4, elem)
    b = _pairs(L, element_address(L, op.b, args[4], op.b_index, args[5]), 2, elem)
    c = [L.b.load(_at(L, acc, i, f32), typ=f32) for i in range(4)]
    if t.name == "bf16":      # bf16 fragments are declared as i32 registers
        name = "llvm.nvvm.mma.m16n8k16.row.col.bf16"
        a, b = [L.b.bitcast(x, I32) for x in a], [L.b.bitcast(x, I32) for x in b]
    else:
        name = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
    d = L.intrinsic(name, [], a + b + c, ret=ll.LiteralStructType([f32] * 4))
    for i in range(4):
        L.b.store(L.b.extract_value(d, i), _at(L, acc, i, f32))
    return []


@lowers("gpu.mma_i8")
def _mma_i8(L, op, args):
    acc = element_address(L, op.acc, args[0], op.acc_index, args[1])
    a = element_address(L, op.a, args[2], op.a_index, args[3])
    b = element_address(L, op.b, args[4], op.b_index, args[5])
    k = mma_i8_k(op.attrs)
    words = [L.b.load(_at(L, a, r, I32), typ=I32) for r in range(k // 8)] + [L.b.load(_at(L, b, r, I32), typ=I32)
                                                                              for r in range(k // 16)]
    c = [L.b.load(_at(L, acc, i, I32), typ=I32) for i in range(4)]
    sa, sb = ("s8" if x.type.pointee.name == "i32" else "u8" for x in (op.a, op.b))
    name = f"llvm.nvvm.mma.m16n8k{k}.row.col.{sa}" + ("" if sa == sb else f".{sb}")
    d = L.intrinsic(name, [], words + c, ret=ll.LiteralStructType([I32] * 4))
    for i in range(4):
        L.b.store(L.b.extract_value(d, i), _at(L, acc, i, I32))
    return []


@lowers("gpu.ldmatrix")
def _ldmatrix(L, op, args):
    n, trans = op.attrs["count"], op.attrs["trans"]
    elem = lltype(op.dst.type.pointee)
    src = element_address(L, op.src, args[2], op.src_index, args[3])
    name = f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{n}{'.trans' if trans else ''}.b16"
    r = L.intrinsic(name, [], [src], ret=I32 if n == 1 else ll.LiteralStructType([I32] * n))
    regs = [r] if n == 1 else [L.b.extract_value(r, j) for j in range(n)]
    dst = element_address(L, op.dst, args[0], op.dst_index, args[1])
    for j, reg in enumerate(regs):
        L.b.store(L.b.bitcast(reg, ll.VectorType(elem, 2)), _at(L, dst, 2 * j, elem), align=2)
    return []


@lowers("gpu.stmatrix")
def _stmatrix(L, op, args):
    n, trans = op.attrs["count"], op.attrs["trans"]
    elem = lltype(op.src.type.pointee)
    src = element_address(L, op.src, args[2], op.src_index, args[3])
    regs = [L.b.bitcast(pair, I32) for pair in _pairs(L, src, n, elem)]     # element by element, as mma
    dst = L.b.ptrtoint(element_address(L, op.dst, args[0], op.dst_index, args[1]), I32)
    text = (f"stmatrix.sync.aligned.m8n8.x{n}{'.trans' if trans else ''}.shared.b16 [$0], "
            "{" + ", ".join(f"${1 + j}" for j in range(n)) + "};")
    inline_ptx(L, text, ",".join(["r"] * (n + 1)), [dst, *regs])
    return []
