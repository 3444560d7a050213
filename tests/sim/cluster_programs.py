"""Cluster kernels the simulator tests and the GPU tests share."""

# Each block of a cluster of 4 fills its shared array; after the cluster barrier every
# thread reads element 63 - t of the next block's array (distributed shared memory), adds
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
    if cluster_rank == 0u32 { sums[(block_idx.x / 4u32) * 64u32 + thread_idx.x] = acc[thread_idx.x]; }
    cluster_barrier();               // no block exits while another may still read its arrays
}
"""


def ring_reference(blocks: int):
    import numpy as np
    b = np.arange(blocks)[:, None]
    t = np.arange(64)[None, :]
    out = ((b % 4 + 1) % 4) * 1000 + 63 - t
    sums = out.reshape(blocks // 4, 4, 64).sum(axis=1)
    return out.astype(np.uint32), sums.astype(np.uint32)
