"""Lowering of the cluster ops (ember.ir.ops.cluster, sm_90): the rank and size from their
special registers, the cluster barrier and distributed shared memory as inline PTX (mapa
turns this block's shared address into the same array's in the block of a rank, in the
shared::cluster window that ld/st.shared::cluster read and write). A kernel's cluster
dimensions become `.reqnctapercluster` (ember.lowering.llvm_lower.declare)."""

from __future__ import annotations

from . import llvm_ir as ll
from .llvm_lower import I32, lltype
from .lower_mbarrier import inline_ptx
from .lower_mem import element_address
from .registry import lowers

# element bytes -> (PTX type, register constraint, LLVM integer type of that width)
_ACCESS = {1: ("b8", "h", ll.IntType(16)), 2: ("b16", "h", ll.IntType(16)), 4: ("b32", "r", ll.IntType(32)),
           8: ("b64", "l", ll.IntType(64))}


@lowers("gpu.cluster_rank")
def _rank(L, op, args):
    return [L.intrinsic("llvm.nvvm.read.ptx.sreg.cluster.ctarank", [], [], ret=I32)]


@lowers("gpu.cluster_size")
def _size(L, op, args):
    return [L.intrinsic("llvm.nvvm.read.ptx.sreg.cluster.nctarank", [], [], ret=I32)]


@lowers("gpu.cluster_barrier")
def _barrier(L, op, args):
    inline_ptx(L, "barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;", "", [])
    return []


def _remote(L, op, ptr_i: int, args):
    """The shared::cluster address of ptr[index] in the block of rank `rank`."""
    local = L.b.ptrtoint(element_address(L, op.operands[ptr_i], args[ptr_i], op.operands[ptr_i + 1],
                                         args[ptr_i + 1]), I32)
    return inline_ptx(L, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", [local, args[ptr_i + 2]], I32)


@lowers("mem.dsmem_load")
def _load(L, op, args):
    t = op.results[0].type
    ptx, reg, wide = _ACCESS[t.nbytes]
    raw = inline_ptx(L, f"ld.shared::cluster.{ptx} $0, [$1];", f"={reg},r", [_remote(L, op, 0, args)], wide)
    if t.nbytes == 1:
        raw = L.b.trunc(raw, ll.IntType(8))
    return [L.b.bitcast(raw, lltype(t)) if not t.is_int else raw]


@lowers("mem.dsmem_store")
def _store(L, op, args):
    t = op.value.type
    ptx, reg, wide = _ACCESS[t.nbytes]
    v = args[3] if t.is_int else L.b.bitcast(args[3], ll.IntType(8 * t.nbytes))
    if t.nbytes == 1:
        v = L.b.zext(v, wide)
    inline_ptx(L, f"st.shared::cluster.{ptx} [$0], $1;", f"r,{reg}", [_remote(L, op, 0, args), v])
    return []
