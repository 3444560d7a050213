"""TMA: the copy engine moving boxes of a tensor between global memory and shared tiles
(PTX cp.async.bulk.tensor, sm_90). The tensor is described by a tensor map, a kernel
parameter of type `tensormap<T, [d0, .., dn], swizzle(S)>` that the host encodes from a
tensor's address, shape and strides (CUtensorMap, cuTensorMapEncodeTiled): a box is
d0 x .. x dn elements (outermost first), at coordinates c0 .. cn (signed, outermost
first) of the tensor; elements outside the tensor read as zeros and are not written.

A box lands in shared memory row by row, as the tile `[[T; dn]; ..; d0]` is laid out, its
16-byte chunks in the map's swizzle order (the order `swizzle(S)` tiles have, so that
`wgmma` reads it); its bytes count as delivered transaction bytes of an mbarrier's
current phase (ember.ir.ops.mbarrier), as a bulk copy's do. A store goes the other way, in
the thread's bulk groups (cp_async_bulk_commit / wait); shared bytes it reads that ordinary
stores wrote need `fence_proxy_async` first. The simulator (ember.sim.tensor_copy) does
both with the same layout and checks.
"""

from __future__ import annotations

from ..formats import Operands
from ..opdef import MAY_FAULT, READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, defop
from ..types import TensorMapType

_EFFECTS = (READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT, MAY_FAULT)


def _verify(tile: str):
    def verify(op):
        t = op.map.type
        if not isinstance(t, TensorMapType):
            return f"`map` must be a tensor map, not {t}"
        if len(op.coords) != t.rank:
            return f"a rank-{t.rank} tensor map takes {t.rank} coordinates, not {len(op.coords)}"
        if getattr(op, tile).type.pointee != t.elem:
            return f"the tile holds {getattr(op, tile).type.pointee}, the tensor map {t.elem}"
        return None
    return verify


def swizzled_byte(offset, swizzle: int):
    """Where byte `offset` of a box (row-major, from an address aligned to the swizzle's
    8-row atom) lies in shared memory: chunk bits 4.. XOR bits 7.. (Swizzle<log2(S/16), 4, 3>)."""
    if not swizzle:
        return offset
    return offset ^ (((offset >> 7) & (swizzle // 16 - 1)) << 4)


defop("mem.tma_load", Operands(types_of="operands"),
      operands="dst: *shared T, map: any, bar: *shared B{u64}, bar_index: I, *coords: i32",
      traits=_EFFECTS, verify=_verify("dst"), min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.mbarriers.tensor_copy(op, args[0], args[1], args[4:],
                                                                  args[2].offset(args[3]), mask) or [],
      example="mem.tma_load %t, %a, %b, %i, %r, %c : *mut shared bf16, tensormap<bf16, [128, 64], swizzle(128)>, "
              "*mut shared u64, u32, i32, i32",
      example_args="%t: *mut shared bf16, %a: tensormap<bf16, [128, 64], swizzle(128)>, %b: *mut shared u64, "
                   "%i: u32, %r: i32, %c: i32",
      doc="Start copying the box of `map` at `coords` (outermost first) into the shared tile at `dst` (128-byte "
          "aligned; a swizzled tile, its 8-row atom) with the copy engine; its bytes (the whole box, zeros "
          "outside the tensor) count as delivered transaction bytes of mbarrier bar[bar_index] (PTX "
          "cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes).")

defop("mem.tma_store", Operands(types_of="operands"), operands="map: any, src: *shared T, *coords: i32",
      traits=_EFFECTS, verify=_verify("src"), min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.bulk_stores.tensor_store(op, args[0], args[1], args[2:], mask) or [],
      example="mem.tma_store %a, %t, %r, %c : tensormap<bf16, [128, 64], swizzle(128)>, *mut shared bf16, i32, i32",
      example_args="%a: tensormap<bf16, [128, 64], swizzle(128)>, %t: *mut shared bf16, %r: i32, %c: i32",
      doc="Start copying the shared tile at `src` to the box of `map` at `coords` with the copy engine, in "
          "the thread's current bulk group; elements outside the tensor are not written (PTX "
          "cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group).")

defop("mem.tma_load_multicast", Operands(types_of="operands"),
      operands="dst: *shared T, map: any, bar: *shared B{u64}, bar_index: I, cta_mask: u32, *coords: i32",
      traits=_EFFECTS, verify=_verify("dst"), min_sm=90, arch_specific=True, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.mbarriers.tensor_copy(op, args[0], args[1], args[5:],
                                                                  args[2].offset(args[3]), mask, args[4]) or [],
      example="mem.tma_load_multicast %t, %a, %b, %i, %k, %r, %c : *mut shared bf16, "
              "tensormap<bf16, [128, 64], swizzle(128)>, *mut shared u64, u32, u32, i32, i32",
      example_args="%t: *mut shared bf16, %a: tensormap<bf16, [128, 64], swizzle(128)>, %b: *mut shared u64, "
                   "%i: u32, %k: u32, %r: i32, %c: i32",
      doc="As mem.tma_load, into the tile at the same place in every block of the cluster whose rank's bit "
          "is set in `cta_mask` (bits 0..15), each delivery counting on that block's mbarrier at the same "
          "place (PTX cp.async.bulk.tensor...multicast::cluster; sm_90a): one read of global memory feeds "
          "several blocks.")
