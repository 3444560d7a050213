"""Lowering of the mem and vec ops: addresses, loads and stores (invariant where the
memory cannot change during the kernel), arrays and constant tables (atomics and fences
are in lower_ordering.py)."""

from __future__ import annotations

from . import llvm_ir as ll

from .registry import lowers
from ..ir.analysis.pointers import streamed, unchanging
from ..ir.analysis.shared import uses_dynamic as uses_dynamic_shared
from ..ir.analysis.shared import alignment, layout as shared_layout
from ..ir.core import Value
from ..ir.types import ADDRESS_SPACES, VectorType
from .llvm_lower import I1, I8, I32, I64, const_int, lltype


def _index64(L, idx_value: Value, idx):
    t = idx_value.type
    if t.bits == 64:
        return idx
    return L.b.sext(idx, I64) if t.signed else L.b.zext(idx, I64)


def element_address(L, ptr_value: Value, ptr, idx_value: Value, idx):
    elem = lltype(ptr_value.type.pointee)
    # an opaque pointer in ptr's address space: loaded from and stored to as any type
    return L.b.gep(ptr, [_index64(L, idx_value, idx)], source_etype=elem)


@lowers("mem.load")
def _load(L, op, args):
    addr = element_address(L, op.operands[0], args[0], op.operands[1], args[1])
    t = op.results[0].type
    align = op.attrs.get("align") or _natural(t)
    if isinstance(t, VectorType):
        addr = L.b.bitcast(addr, ll.PointerType(lltype(t), addr.type.addrspace))
    fixed = unchanging(op.operands[0])      # memory nothing writes during the kernel
    if fixed and streamed(op.operands[0]) and L.L.target.ptx >= STREAM_PTX:
        return [_streamed_load(L, addr, t, L.L.target.sm)]
    v = L.b.load(addr, typ=lltype(t), align=align)
    if fixed:
        v.set_metadata("invariant.load", L.L.ll.add_metadata([]))
    return [v]


# A load through a kernel parameter declared `stream` (data read once, as a GEMV's weights):
# `ld.global.nc` that does not allocate in L1 (which keeps the data read again, such as the
# activations, there) and asks L2 to fetch the 256 bytes around a miss. Measured on an
# H100 (Q4_K GEMVs at 14336x4096, M = 1): each qualifier 1-1.5% faster, both 2-2.5%. LLVM
# has no way to ask for these qualifiers, so the load is inline PTX (which LLVM treats as a
# pure value, as it treats an invariant load). They need PTX ISA 7.4, and .L2::256B sm_80;
# below PTX 7.4 the load is the plain `ld.global.nc`.
STREAM_PTX = (7, 4)


def _streamed_load(L, addr, t, sm: int):
    ld = "ld.global.nc.L1::no_allocate" + (".L2::256B" if sm >= 80 else "")
    bits = _natural(t) * 8
    if bits <= 16:          # one 8- or 16-bit value, in a 16-bit register
        kind, words, reg = (".u8" if bits == 8 else ".b16"), 1, ll.IntType(16)
    elif bits == 64 and not isinstance(t, VectorType):
        kind, words, reg = ".b64", 1, I64
    else:                   # 32, 64 or 128 bits as 1, 2 or 4 words
        words = bits // 32
        kind, reg = (f".v{words}" if words > 1 else "") + ".b32", I32
    letter = {16: "h", 32: "r", 64: "l"}[reg.width]
    outs = ", ".join(f"${i}" for i in range(words))
    text = f"{ld}{kind} {{{outs}}}, [${words}];" if words > 1 else f"{ld}{kind} $0, [$1];"
    ret = reg if words == 1 else ll.LiteralStructType([reg] * words)
    raw = L.b.asm(ll.FunctionType(ret, [addr.type]), text, ",".join([f"={letter}"] * words + ["l"]), [addr], False)
    if words > 1:
        vec = ll.Constant(ll.VectorType(reg, words), ll.Undefined)
        for i in range(words):
            vec = L.b.insert_element(vec, L.b.extract_value(raw, i), ll.Constant(I32, i))
        raw = vec
    elif bits == 8:
        raw = L.b.trunc(raw, I8)
    return L.b.bitcast(raw, lltype(t))


@lowers("mem.store")
def _store(L, op, args):
    val = op.operands[0]
    addr = element_address(L, op.operands[1], args[1], op.operands[2], args[2])
    align = op.attrs.get("align") or _natural(val.type)
    if isinstance(val.type, VectorType):
        addr = L.b.bitcast(addr, ll.PointerType(lltype(val.type), addr.type.addrspace))
    L.b.store(args[0], addr, align=align)
    return []


def _natural(t) -> int:
    if isinstance(t, VectorType):
        return t.elem.nbytes * t.length   # the vectorizer proved this alignment
    return t.nbytes


@lowers("vec.pack")
def _vec_pack(L, op, args):
    t = op.results[0].type
    v = ll.Constant(lltype(t), ll.Undefined)
    for i, x in enumerate(args):
        v = L.b.insert_element(v, x, ll.Constant(I32, i))
    return [v]


@lowers("vec.extract")
def _vec_extract(L, op, args):
    return [L.b.extract_element(args[0], ll.Constant(I32, op.attrs["index"]))]


@lowers("mem.offset")
def _offset(L, op, args):
    return [element_address(L, op.operands[0], args[0], op.operands[1], args[1])]


@lowers("mem.row")
def _row(L, op, args):
    idx = _index64(L, op.operands[1], args[1])
    elem = lltype(op.operands[0].type.pointee)
    start = L.b.mul(idx, ll.Constant(I64, op.attrs["length"]))
    return [L.b.gep(args[0], [start], source_etype=elem)]


@lowers("mem.alloca")
def _alloca(L, op, args):
    t = op.results[0].type
    n = op.attrs["length"]
    entry = L.llf.entry_basic_block
    saved = L.b.block
    # allocas belong in the entry block (so SROA can promote them to registers)
    with L.b.goto_entry_block():
        first = entry.instructions[0] if entry.instructions else None
        if first is not None:
            L.b.position_before(first)
        # `alloca [n x T]`, not `alloca T, n`: SROA skips array allocations, and the
        # cleanup pipeline's instcombine turns them into this form only after SROA ran, so
        # arrays of 32 or more elements stayed in local memory
        arr = L.b.alloca(ll.ArrayType(lltype(t.pointee), n))
        arr.align = max(_natural(t.pointee), 4)
        slot = L.b.bitcast(arr, lltype(t.pointee).as_pointer())
    L.b.position_at_end(saved)
    nbytes = ll.Constant(I64, n * _natural(t.pointee))
    # (pointer-to-pointer casts are no-ops, written out as the typed-pointer IR of llvmlite
    # had them, which keeps -O0's PTX unchanged)
    raw = L.b.bitcast(slot, I8.as_pointer())
    L.intrinsic("llvm.memset", [ll.PointerType(), I64], [raw, ll.Constant(I8, 0), nbytes, ll.Constant(I1, 0)],
                ret=ll.VoidType())
    return [slot]


@lowers("mem.global")
def _global(L, op, args):
    return [L.L.globals[op.attrs["name"]]]


def _in_dynamic(L, op):
    """The op's place in the kernel's dynamic shared buffer, or None (a static array)."""
    if L.dynamic_shared is None:
        L.dynamic_shared = shared_layout(L.f)[0] if uses_dynamic_shared(L.f) else {}
    if op not in L.dynamic_shared:
        return None
    base = L.L.dynamic_shared_base()
    base.align = max(base.align, alignment(op))       # the buffer's start aligns its tiles
    return L.b.gep(L.L.dynamic_shared_base(), [ll.Constant(I32, L.dynamic_shared[op])], source_etype=I8)


@lowers("mem.shared_sized")
def _shared_sized(L, op, args):
    return [_in_dynamic(L, op)]


@lowers("mem.shared")
def _shared(L, op, args):
    t = op.results[0].type
    placed = _in_dynamic(L, op)      # more than a block may declare, or beside a launch-sized array
    if placed is not None:
        return [placed]
    name = f"{L.f.name}.{op.attrs.get('name', 'shared')}"
    n = 0
    while name in L.L.ll.globals:
        n += 1
        name = f"{L.f.name}.{op.attrs.get('name', 'shared')}.{n}"
    gv = ll.GlobalVariable(L.L.ll, ll.ArrayType(lltype(t.pointee), op.attrs["length"]), name,
                           addrspace=ADDRESS_SPACES["shared"])
    gv.linkage = "internal"
    gv.align = alignment(op)
    gv.initializer = ll.Constant(gv.value_type, ll.Undefined)
    return [gv.gep([ll.Constant(I32, 0), ll.Constant(I32, 0)])]   # a pointer to element 0


@lowers("mem.cp_async")
def _cp_async(L, op, args):
    n, cache = op.attrs["bytes"], op.attrs["cache"]
    dst = element_address(L, op.dst, args[0], op.dst_index, args[1])
    src = element_address(L, op.src, args[2], op.src_index, args[3])
    name = f"llvm.nvvm.cp.async.{cache}.shared.global.{n}"
    if const_int(op.src_bytes) == n:       # the whole copy from the source: no zero fill
        L.intrinsic(name, [], [dst, src], ret=ll.VoidType())
    else:
        L.intrinsic(name + ".s", [], [dst, src, args[4]], ret=ll.VoidType())
    return []


@lowers("mem.cp_async_commit")
def _cp_async_commit(L, op, args):
    L.intrinsic("llvm.nvvm.cp.async.commit.group", [], [], ret=ll.VoidType())
    return []


@lowers("mem.cp_async_wait")
def _cp_async_wait(L, op, args):
    L.intrinsic("llvm.nvvm.cp.async.wait.group", [], [ll.Constant(I32, op.attrs["pending"])], ret=ll.VoidType())
    return []
