"""Lowering of the mbarrier ops and bulk copies (ember.ir.ops.mbarrier) to inline PTX
(sm_90): LLVM has intrinsics for some of them, but the same text for all keeps the four
in one place, and the memory clobber keeps LLVM from moving shared-memory accesses across
them (what they synchronize)."""

from __future__ import annotations

from . import llvm_ir as ll
from .llvm_lower import I32, I64
from .lower_mem import element_address
from .registry import lowers


def shared32(L, op, ptr_i: int, args):
    """The shared-memory address of operand ptr_i[ptr_i + 1] as a 32-bit value."""
    addr = element_address(L, op.operands[ptr_i], args[ptr_i], op.operands[ptr_i + 1], args[ptr_i + 1])
    return L.b.ptrtoint(addr, I32)


def inline_ptx(L, text: str, constraints: str, args: list, ret=None):
    ftype = ll.FunctionType(ret or ll.VoidType(), [a.type for a in args])
    return L.b.asm(ftype, text, ",".join(filter(None, [constraints, "~{memory}"])), args, True)


@lowers("mem.mbarrier_init")
def _init(L, op, args):
    # the fence makes the initialized barrier visible to the copy engine (the async proxy),
    # which a bulk copy completing on it updates (as CUDA's TMA examples fence after init)
    inline_ptx(L, "mbarrier.init.shared::cta.b64 [$0], $1; fence.mbarrier_init.release.cluster;", "r,r",
               [shared32(L, op, 0, args), args[2]])
    return []


@lowers("mem.mbarrier_arrive")
def _arrive(L, op, args):
    inline_ptx(L, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r", [shared32(L, op, 0, args), args[2]])
    return []


@lowers("mem.mbarrier_arrive_remote")
def _arrive_remote(L, op, args):
    text = ("{ .reg .b32 a; mapa.shared::cluster.u32 a, $0, $1; "
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a]; }")
    inline_ptx(L, text, "r,r", [shared32(L, op, 0, args), args[2]])
    return []


@lowers("mem.mbarrier_try_wait")
def _try_wait(L, op, args):
    # an mbarrier in the module means PTX 8.0 (mbarrier_init's), which has .acquire.cluster
    sem = ".acquire.cluster" if op.attrs.get("scope") == "cluster" else ""
    text = (f"{{ .reg .pred p; mbarrier.try_wait.parity{sem}.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }}")
    done = inline_ptx(L, text, "=r,r,r", [shared32(L, op, 0, args), args[2]], I32)
    return [L.b.icmp_unsigned("!=", done, ll.Constant(I32, 0))]


@lowers("mem.cp_async_bulk")
def _bulk(L, op, args):
    dst = shared32(L, op, 0, args)
    src = element_address(L, op.operands[2], args[2], op.operands[3], args[3])
    src = L.b.ptrtoint(src, I64)
    bar = shared32(L, op, 5, args)
    inline_ptx(L, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];",
               "r,l,r,r", [dst, src, args[4], bar])
    return []


@lowers("mem.cp_async_bulk_store")
def _bulk_store(L, op, args):
    dst = L.b.ptrtoint(element_address(L, op.operands[0], args[0], op.operands[1], args[1]), I64)
    src = shared32(L, op, 2, args)
    inline_ptx(L, "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], $2;", "l,r,r", [dst, src, args[4]])
    return []


@lowers("mem.cp_async_bulk_commit")
def _bulk_commit(L, op, args):
    inline_ptx(L, "cp.async.bulk.commit_group;", "", [])
    return []


@lowers("mem.cp_async_bulk_wait")
def _bulk_wait(L, op, args):
    read = ".read" if op.attrs["read"] else ""
    inline_ptx(L, f"cp.async.bulk.wait_group{read} {op.attrs['pending']};", "", [])
    return []


@lowers("mem.fence_proxy_async")
def _fence_proxy(L, op, args):
    inline_ptx(L, "fence.proxy.async.shared::cta;", "", [])
    return []

