"""Asynchronous copies from global to shared memory (PTX cp.async, sm_80+): a thread starts
copies, closes them into a group (commit), and later waits until all but its newest N
groups have landed (wait). Until its group is waited for, what a copy writes is not there:
the simulator reports a read or write of those bytes before the wait, like a race
(ember.sim.async_copy). Only the waiting thread sees the data at once; other threads of
the block see it after a barrier that follows the wait, as for its ordinary stores."""

from __future__ import annotations

from ..formats import Operands
from ..opdef import MAY_FAULT, READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, Attr, defop, enum

CP_ASYNC_BYTES = (4, 8, 16)


def _cp_async_verify(op):
    n = op.attrs["bytes"]
    if n not in CP_ASYNC_BYTES:
        return f"bytes must be 4, 8 or 16, not {n}"
    if op.attrs["cache"] == "cg" and n != 16:
        return "cache `cg` (L2 only) copies 16 bytes"
    return None


def _cp_async_consts(attrs, consts):
    n = consts.get("src_bytes")
    if n is not None and n > attrs["bytes"]:
        return "src_bytes", f"is {n}: a {attrs['bytes']}-byte copy takes at most {attrs['bytes']} source bytes"
    return None


def _cp_async_sim(m, op, args, mask):
    dst, di, src, si, src_bytes = args
    m.cp_async(op, dst.offset(di), src.offset(si), op.attrs["bytes"], src_bytes, mask)
    return []


defop("mem.cp_async", Operands(types_of="operands"),
      operands="dst: *shared T, dst_index: I, src: &global U, src_index: V{i32,u32,i64,u64}, src_bytes: u32",
      attrs={"bytes": Attr("int"), "cache": enum("ca", "cg")},
      traits=(READS_MEMORY, WRITES_MEMORY, MAY_FAULT), verify=_cp_async_verify, check_consts=_cp_async_consts,
      accesses=lambda attrs, elem_bytes: [("dst", "dst_index", max(1, attrs["bytes"] // elem_bytes["dst"])),
                                          ("src", "src_index", max(1, attrs["bytes"] // elem_bytes["src"]))],
      simulate=_cp_async_sim,
      min_sm=80,
      example="mem.cp_async %d, %i, %s, %j, %n {bytes = 16, cache = cg} : *mut shared f32, u32, *global f32, u64, u32",
      example_args="%d: *mut shared f32, %i: u32, %s: *global f32, %j: u64, %n: u32",
      doc="Start copying `bytes` (4, 8 or 16) bytes from src[src_index] to dst[dst_index], both "
          "aligned to `bytes`: the first `src_bytes` from src, the rest zeros (src_bytes 0 reads "
          "nothing). `ca` caches in L1 and L2, `cg` in L2 only (16 bytes). The bytes land when the "
          "thread waits for the copy's group (mem.cp_async_wait).")

defop("mem.cp_async_commit", Operands(), traits=(SIDE_EFFECT,),
      simulate=lambda m, op, args, mask: m.cp_async_commit(mask) or [], min_sm=80,
      example="mem.cp_async_commit",
      doc="Close the thread's copies started since the last commit into a group.")

defop("mem.cp_async_wait", Operands(), attrs={"pending": Attr("int", lo=0, hi=255)},
      traits=(READS_MEMORY, WRITES_MEMORY, SIDE_EFFECT), min_sm=80,
      simulate=lambda m, op, args, mask: m.cp_async_wait(op, op.attrs["pending"], mask) or [],
      example="mem.cp_async_wait {pending = 1}",
      doc="Wait until at most `pending` of the thread's committed groups are still in flight: "
          "the bytes of every older group are in shared memory (for this thread; for the block "
          "after a barrier).")
