"""Thread-block clusters (sm_90): a kernel declared `cluster(x, y, z)` runs its blocks in
clusters of x y z blocks that are resident on the GPU together. A block knows its rank in
its cluster (x fastest, as blocks are numbered), the cluster's blocks wait for each
other at `cluster_barrier()` (which orders memory across them, as `barrier()` does within
a block), and a thread reads and writes the shared arrays of the other blocks of its
cluster (distributed shared memory: PTX mapa and ld/st.shared::cluster) by rank.

The simulator (ember.sim.cluster) runs a cluster's blocks in one batch, gives each access
to another block's shared array that block's memory, and orders the cluster's blocks at
its barriers; an access to another block's array that no cluster barrier orders against
that block's own accesses is a race (S0004). (Not checked: an access after the other
block may have exited - a kernel ends with a cluster barrier for that.)
"""

from __future__ import annotations

from ...lazy_numpy import np
from ..formats import Operands
from ..opdef import CONVERGENT, MAY_FAULT, READS_MEMORY, SIDE_EFFECT, WRITES_MEMORY, defop

_SM90 = dict(min_sm=90, min_ptx=(8, 0))

defop("gpu.cluster_rank", Operands(), results="result: u32", **_SM90,
      simulate=lambda m, op, args, mask: [m.cluster_rank().astype(np.uint32)],
      example="%r = gpu.cluster_rank : u32",
      doc="The block's rank in its cluster, 0 .. cluster_size - 1 (x fastest; PTX %cluster_ctarank).")
defop("gpu.cluster_size", Operands(), results="result: u32", **_SM90,
      simulate=lambda m, op, args, mask: [np.full(m.lanes, m.cluster_blocks(), dtype=np.uint32)],
      example="%n = gpu.cluster_size : u32",
      doc="The number of blocks in the cluster (PTX %cluster_nctarank): 1 for a kernel without `cluster`.")
defop("gpu.cluster_barrier", Operands(), traits=(CONVERGENT, SIDE_EFFECT), **_SM90,
      simulate=lambda m, op, args, mask: m.cluster_barrier(op, mask) or [],
      example="gpu.cluster_barrier",
      doc="Every thread of every block of the cluster waits here; shared and global memory written "
          "before it is visible after it to them all (PTX barrier.cluster.arrive.release, "
          "barrier.cluster.wait.acquire).")
defop("mem.dsmem_load", Operands(types_of="operands"), operands="ptr: *shared T, index: I, rank: u32",
      results="result: T", traits=(READS_MEMORY, MAY_FAULT), **_SM90,
      infer=lambda ts, attrs: [ts[0].pointee] if hasattr(ts[0], "pointee") else None,
      simulate=lambda m, op, args, mask: [m.remote(op, args[0], args[1], args[2], op.results[0].type, mask)],
      example="%v = mem.dsmem_load %p, %i, %r : *mut shared f32, u32, u32",
      example_args="%p: *mut shared f32, %i: u32, %r: u32",
      doc="Element `index` of the shared array at `ptr` in the block of rank `rank` of the cluster (PTX "
          "mapa.shared::cluster, ld.shared::cluster).")


def _dsmem_store_sim(m, op, args, mask):
    m.remote(op, args[0], args[1], args[2], op.value.type, mask, args[3])
    return []


defop("mem.dsmem_store", Operands(types_of="operands"), operands="ptr: *shared T, index: I, rank: u32, value: T",
      traits=(WRITES_MEMORY, MAY_FAULT), **_SM90, simulate=_dsmem_store_sim,
      verify=lambda op: None if op.ptr.type.mut else "store through a read-only pointer",
      example="mem.dsmem_store %p, %i, %r, %v : *mut shared f32, u32, u32, f32",
      example_args="%v: f32, %p: *mut shared f32, %i: u32, %r: u32",
      doc="Store to element `index` of the shared array at `ptr` in the block of rank `rank` of the "
          "cluster (PTX mapa.shared::cluster, st.shared::cluster).")
