"""Lowering of the TMA ops (ember.ir.ops.tma) to inline PTX cp.async.bulk.tensor (sm_90).
The tensor map operand is the generic address of the kernel's byval grid-constant
parameter (ember.lowering.llvm_lower.declare); PTX numbers a box's coordinates from the
innermost dimension, the language from the outermost, so they are reversed here."""

from __future__ import annotations

from . import llvm_ir as ll
from .llvm_lower import I32, I64
from .lower_mbarrier import inline_ptx, shared32
from .registry import lowers


def _coords(n: int, first: int) -> str:
    return "{" + ", ".join(f"${first + n - 1 - k}" for k in range(n)) + "}"


@lowers("mem.tma_load")
def _tma_load(L, op, args):
    rank = len(op.coords)
    dst, bar = L.b.ptrtoint(args[0], I32), shared32(L, op, 2, args)
    tmap = L.b.ptrtoint(args[1], I64)
    text = (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            f"[$0], [$1, {_coords(rank, 3)}], [$2];")
    inline_ptx(L, text, ",".join(["r", "l", "r"] + ["r"] * rank), [dst, tmap, bar, *args[4:]])
    return []


@lowers("mem.tma_store")
def _tma_store(L, op, args):
    rank = len(op.coords)
    src = L.b.ptrtoint(args[1], I32)
    tmap = L.b.ptrtoint(args[0], I64)
    text = f"cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group [$0, {_coords(rank, 2)}], [$1];"
    inline_ptx(L, text, ",".join(["l", "r"] + ["r"] * rank), [tmap, src, *args[2:]])
    return []


@lowers("mem.tma_load_multicast")
def _tma_load_multicast(L, op, args):
    rank = len(op.coords)
    dst, bar = L.b.ptrtoint(args[0], I32), shared32(L, op, 2, args)
    tmap = L.b.ptrtoint(args[1], I64)
    mask16 = L.b.trunc(args[4], ll.IntType(16))
    text = (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            f".multicast::cluster [$0], [$1, {_coords(rank, 4)}], [$2], $3;")
    inline_ptx(L, text, ",".join(["r", "l", "r", "h"] + ["r"] * rank), [dst, tmap, bar, mask16, *args[5:]])
    return []
