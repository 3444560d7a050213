"""Hopper's asynchronous barriers and bulk copies (sm_90): an mbarrier is a u64 in shared
memory that counts arrivals and transaction bytes per phase; a bulk copy (PTX
`cp.async.bulk`, the copy engine behind TMA) moves bytes from global to shared memory and
signals the bytes it delivered on an mbarrier; a thread that waits for the phase (its
parity) then sees them.

A phase completes when the arrivals its init asked for have arrived and the transaction
bytes announced (`expect_tx`) have been delivered; the barrier then starts the next phase.
The copy engine also stores from shared to global memory (`cp_async_bulk_store`, in bulk
groups the thread commits and waits for); it reads shared memory through the async proxy,
so ordinary stores to what it reads need `fence_proxy_async` (ember.sim.bulk_store).
The simulator (ember.sim.mbarrier) holds a bulk copy's bytes until its phase completes
and lets a thread read them only after it waited for that phase (S0009 otherwise), and
reports a wait that nothing can end (S0011, naming the barrier and what it lacks).
"""

from __future__ import annotations

from ..formats import Operands
from ..opdef import MAY_FAULT, READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, Attr, defop
from ..types import BOOL

_BAR = "bar: *shared B{u64}, bar_index: I"
_EFFECTS = (READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT, MAY_FAULT)


def _bulk_consts(attrs, consts):
    n = consts.get("bytes")
    if n is not None and (n <= 0 or n % 16):
        return "bytes", f"is {n}: a bulk copy moves a positive multiple of 16 bytes"
    return None


def _init_consts(attrs, consts):
    n = consts.get("count")
    if n is not None and not 0 < n < (1 << 20):
        return "count", f"is {n}: an mbarrier counts 1 to 2^20 - 1 arrivals"
    return None


defop("mem.mbarrier_init", Operands(types_of="operands"), operands=f"{_BAR}, count: u32",
      traits=_EFFECTS, check_consts=_init_consts, min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.mbarriers.init(op, args[0].offset(args[1]), args[2], mask) or [],
      example="mem.mbarrier_init %b, %i, %n : *mut shared u64, u32, u32",
      example_args="%b: *mut shared u64, %i: u32, %n: u32",
      doc="Initialize the mbarrier at bar[bar_index] to expect `count` arrivals per phase, in "
          "phase 0 (PTX mbarrier.init, then fence.mbarrier_init so that the copy engine sees it). "
          "One thread inits it; a barrier() before the others use it.")
defop("mem.mbarrier_arrive", Operands(types_of="operands"), operands=f"{_BAR}, tx_bytes: u32",
      traits=_EFFECTS, min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.mbarriers.arrive(op, args[0].offset(args[1]), args[2], mask) or [],
      example="mem.mbarrier_arrive %b, %i, %t : *mut shared u64, u32, u32",
      example_args="%b: *mut shared u64, %i: u32, %t: u32",
      doc="Arrive on the mbarrier, first announcing `tx_bytes` more transaction bytes for the "
          "current phase (PTX mbarrier.arrive, or mbarrier.arrive.expect_tx when tx_bytes may be "
          "nonzero).")
defop("mem.mbarrier_arrive_remote", Operands(types_of="operands"), operands=f"{_BAR}, rank: u32",
      traits=_EFFECTS, min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.mbarriers.arrive_remote(op, args[0].offset(args[1]), args[2], mask) or [],
      example="mem.mbarrier_arrive_remote %b, %i, %r : *mut shared u64, u32, u32",
      example_args="%b: *mut shared u64, %i: u32, %r: u32",
      doc="Arrive on the mbarrier bar[bar_index] of the cluster's block of rank `rank` (this block's "
          "own when it is its rank), releasing this thread's earlier accesses at cluster scope: how "
          "the consumers of a stage that a multicast fills tell every block's producer that they are "
          "done with it (PTX mapa.shared::cluster, mbarrier.arrive.release.cluster.shared::cluster).")
defop("mem.mbarrier_try_wait", Operands(types_of="operands"), operands=f"{_BAR}, parity: u32",
      results="result: bool", traits=_EFFECTS, min_sm=90, infer=lambda ts, attrs: [BOOL],
      attrs={"scope": Attr("enum", ("cta", "cluster"), required=False,
                           doc="whose arrivals the wait acquires: the block's (cta, when absent) or the cluster's")},
      simulate=lambda m, op, args, mask: [m.mbarriers.try_wait(op, args[0].offset(args[1]), args[2], mask,
                                                               op.attrs.get("scope", "cta"))],
      example="%done = mem.mbarrier_try_wait %b, %i, %p : *mut shared u64, u32, u32",
      example_args="%b: *mut shared u64, %i: u32, %p: u32",
      doc="Whether the phase of the given parity (0 or 1) has completed (PTX "
          "mbarrier.try_wait.parity); when it has, what the phase delivered is visible to the thread, "
          "and with scope `cluster` what the other blocks' threads did before arriving on it "
          "(mbarrier_arrive_cluster; PTX .acquire.cluster).")
defop("mem.cp_async_bulk", Operands(types_of="operands"),
      operands=f"dst: *shared T, dst_index: I, src: &global U, src_index: V{{i32,u32,i64,u64}}, bytes: u32, {_BAR}",
      traits=_EFFECTS, check_consts=_bulk_consts, min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.mbarriers.bulk_copy(op, args[0].offset(args[1]), args[2].offset(args[3]),
                                                                args[4], args[5].offset(args[6]), mask) or [],
      example="mem.cp_async_bulk %d, %i, %s, %j, %n, %b, %k : *mut shared f32, u32, *global f32, u64, u32, "
              "*mut shared u64, u32",
      example_args="%d: *mut shared f32, %i: u32, %s: *global f32, %j: u64, %n: u32, %b: *mut shared u64, %k: u32",
      doc="Start copying `bytes` (a multiple of 16; both addresses 16-byte aligned) from src[src_index] "
          "to dst[dst_index] with the copy engine; the bytes count as delivered transaction bytes of "
          "the mbarrier bar[bar_index]'s current phase (PTX cp.async.bulk.shared::cluster.global."
          "mbarrier::complete_tx::bytes).")


defop("mem.cp_async_bulk_store", Operands(types_of="operands"),
      operands="dst: *global T, dst_index: I, src: *shared U, src_index: V{i32,u32,i64,u64}, bytes: u32",
      traits=_EFFECTS, check_consts=_bulk_consts, min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.bulk_stores.start(op, args[0].offset(args[1]), args[2].offset(args[3]),
                                                              args[4], mask) or [],
      example="mem.cp_async_bulk_store %d, %i, %s, %j, %n : *mut global f32, u32, *mut shared f32, u32, u32",
      example_args="%d: *mut global f32, %i: u32, %s: *mut shared f32, %j: u32, %n: u32",
      doc="Start copying `bytes` (a multiple of 16; both addresses 16-byte aligned) from the shared "
          "src[src_index] to the global dst[dst_index] with the copy engine, in the thread's current "
          "bulk group (PTX cp.async.bulk.global.shared::cta.bulk_group). It reads shared memory "
          "through the async proxy: ordinary stores to it need fence_proxy_async first.")
defop("mem.cp_async_bulk_commit", Operands(), traits=(SIDE_EFFECT,), min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.bulk_stores.commit(mask) or [],
      example="mem.cp_async_bulk_commit",
      doc="Close the thread's bulk stores started since the last commit into a bulk group "
          "(PTX cp.async.bulk.commit_group).")
defop("mem.cp_async_bulk_wait", Operands(), attrs={"pending": Attr("int", lo=0, hi=63), "read": Attr("bool")},
      traits=(READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT), min_sm=90, min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.bulk_stores.wait(op.attrs["pending"], op.attrs["read"], mask) or [],
      example="mem.cp_async_bulk_wait {pending = 0, read = false}",
      doc="Wait until at most `pending` of the thread's bulk groups are in flight: with `read`, until "
          "their sources have been read (the shared memory may be reused), else until their writes "
          "are done (PTX cp.async.bulk.wait_group[.read]).")
defop("mem.fence_proxy_async", Operands(), traits=(READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT), min_sm=90,
      min_ptx=(8, 0),
      simulate=lambda m, op, args, mask: m.bulk_stores.fence(mask) or [],
      example="mem.fence_proxy_async",
      doc="Make the thread's ordinary writes to shared memory visible to the copy engine's reads "
          "(PTX fence.proxy.async.shared::cta): before a bulk store of what the thread wrote, with a "
          "barrier() between when another thread starts the store.")

