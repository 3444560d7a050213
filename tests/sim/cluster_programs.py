"""Cluster kernels the simulator tests and the GPU tests share."""

# Each block of a cluster of 4 (ring(n): of n) fills its shared array; after the cluster
# barrier every thread reads element 63 - t of the next block's array (distributed shared memory), adds
# it to a sum in rank 0's array with a remote store from thread t of each block in turn
# (ordered by cluster barriers), and rank 0 writes the sums.
RING = """kernel k(out: *mut global u32, sums: *mut global u32) block(64) cluster(4) {
    shared s: [u32; 64];
    shared acc: [u32; 64];
    s[thread_idx.x] = cluster_rank * 1000u32 + thread_idx.x;
    acc[thread_idx.x] = 0u32;
    cluster_barrier();
    let next = (cluster_rank + 1u32) % cluster_size;
    let v = dsmem_load(s, 63u32 - thread_idx.x, next);
    out[block_idx.x * 64u32 + thread_idx.x] = v;
    for r in 0u32..cluster_size {
        if cluster_rank == r {
            dsmem_store(acc, thread_idx.x, 0u32, dsmem_load(acc, thread_idx.x, 0u32) + v);
        }
        cluster_barrier();
    }
    if cluster_rank == 0u32 { sums[(block_idx.x / cluster_size) * 64u32 + thread_idx.x] = acc[thread_idx.x]; }
    cluster_barrier();               // no block exits while another may still read its arrays
}
"""


def ring(n: int) -> str:
    """RING in clusters of n blocks (past 8: a non-portable cluster, up to 16 on sm_90)."""
    return RING.replace("cluster(4)", f"cluster({n})")


def ring_reference(blocks: int, n: int = 4):
    import numpy as np
    b = np.arange(blocks)[:, None]
    t = np.arange(64)[None, :]
    out = ((b % n + 1) % n) * 1000 + 63 - t
    sums = out.reshape(blocks // n, n, 64).sum(axis=1)
    return out.astype(np.uint32), sums.astype(np.uint32)
