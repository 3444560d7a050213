"""Kernels whose correctness depends on memory ordering (docs/memory_model.md), each with
a `variant` const parameter: the correct forms and the broken ones (a missing fence, a
scope too narrow, relaxed where acquire/release is needed). Shared by the simulator
tests, which check that the broken ones are reported whatever the batching, and the GPU
tests, which run the correct ones there."""

import numpy as np

# The last block merges: a grid-wide sum in one launch. VARIANT 0: fences at gpu scope;
# 1: the ticket is an acq_rel atomic; 2: no fence; 3: fences at cta scope.
LAST_BLOCK = """
import "std/reduce.ember";

kernel total<const VARIANT: u32 = 0>(x: *global f32, partial: *mut global f32, count: *mut global u32,
                                     out: *mut global f32, n: u32) block(128) {
    shared last: [u32; 1];
    shared warp_sums: [f32; 4];
    let i = block_idx.x * 128u32 + thread_idx.x;
    var v = 0.0;
    if i < n { v = x[i]; }
    let s = block_sum(v, warp_sums, 4u32);
    if thread_idx.x == 0u32 {
        partial[block_idx.x] = s;
        var ticket = 0u32;
        if VARIANT == 0u32 {
            fence(acq_rel, gpu);
            ticket = atomic_add(count, 0, 1u32);
            fence(acq_rel, gpu);
        } else if VARIANT == 1u32 {
            ticket = atomic_add(count, 0, 1u32, acq_rel, gpu);
        } else if VARIANT == 2u32 {
            ticket = atomic_add(count, 0, 1u32);
        } else {
            fence(acq_rel, cta);
            ticket = atomic_add(count, 0, 1u32);
            fence(acq_rel, cta);
        }
        last[0] = select(ticket == grid_dim.x - 1u32, 1u32, 0u32);
    }
    barrier();
    if last[0] == 1u32 && thread_idx.x == 0u32 {
        var t = 0.0;
        for b in 0u32..grid_dim.x {
            t += partial[b];
        }
        out[0] = t;
        count[0] = 0u32;
    }
}
"""
LAST_BLOCK_READ_LINE = LAST_BLOCK.splitlines().index("            t += partial[b];") + 1

# The last cluster merges (decode_attention_mma.ember's cluster_settle): every thread of
# every block writes its partial, a cluster barrier, rank 0's thread 0 takes the ticket and
# tells the cluster's blocks through their shared `last`, a cluster barrier, and in the last
# cluster rank 1 - a block that took no ticket, and learned of the others' writes only from
# rank 0 through the barrier - reads them all. VARIANT 0: fences at gpu scope around the
# ticket; 1: no fence; 2: fences at cluster scope.
LAST_CLUSTER = """
kernel columns<const VARIANT: u32 = 0>(x: *global f32, partial: *mut global f32, count: *mut global u32,
                                       out: *mut global f32) block(64) cluster(2) {
    shared last: [u32; 1];
    partial[block_idx.x * 64u32 + thread_idx.x] = x[block_idx.x * 64u32 + thread_idx.x] * 2.0;
    cluster_barrier();
    if cluster_rank == 0u32 && thread_idx.x == 0u32 {
        var ticket = 0u32;
        if VARIANT == 0u32 {
            fence(acq_rel, gpu);
            ticket = atomic_add(count, 0, 1u32);
            fence(acq_rel, gpu);
        } else if VARIANT == 1u32 {
            ticket = atomic_add(count, 0, 1u32);
        } else {
            fence(acq_rel, cluster);
            ticket = atomic_add(count, 0, 1u32);
            fence(acq_rel, cluster);
        }
        let mine = select(ticket == grid_dim.x / 2u32 - 1u32, 1u32, 0u32);
        if mine == 1u32 { atomic_store(count, 0, 0u32); }
        dsmem_store(last, 0u32, 0u32, mine);
        dsmem_store(last, 0u32, 1u32, mine);
    }
    cluster_barrier();
    if last[0] == 1u32 && cluster_rank == 1u32 {
        var t = 0.0;
        for b in 0u32..grid_dim.x {
            t += partial[b * 64u32 + thread_idx.x];
        }
        out[thread_idx.x] = t;
    }
}
"""
LAST_CLUSTER_READ_LINE = LAST_CLUSTER.splitlines().index("            t += partial[b * 64u32 + thread_idx.x];") + 1


# A lock around a read-modify-write of plain memory. VARIANT 0: acquire to take it,
# release to give it back; 1: both relaxed.
LOCK = """
kernel locked<const VARIANT: u32 = 0>(lock: *mut global u32, acc: *mut global f32, x: *global f32) block(32) {
    if thread_idx.x == 0u32 {
        if VARIANT == 0u32 {
            while atomic_cas(lock, 0, 0u32, 1u32, acquire, gpu) != 0u32 {}
        } else {
            while atomic_cas(lock, 0, 0u32, 1u32) != 0u32 {}
        }
        acc[0] = acc[0] + x[block_idx.x];
        if VARIANT == 0u32 {
            atomic_exch(lock, 0, 0u32, release, gpu);
        } else {
            atomic_exch(lock, 0, 0u32);
        }
    }
}
"""

# Warp 0 fills a shared array and every one of its lanes releases its part by one add to
# a counter; warp 1 reads the array only once the counter says all 32 did (an acquire of
# the whole release sequence). VARIANT 0: release and acquire at cta scope; 1: relaxed.
HANDOFF = """
kernel handoff<const VARIANT: u32 = 0>(x: *global u32, out: *mut global u32) block(64) {
    shared data: [u32; 32];
    shared ready: [u32; 1];
    if thread_idx.x == 0u32 { atomic_store(ready, 0, 0u32, relaxed, cta); }
    barrier();
    let lane = lane_id;
    if warp_id == 0u32 {
        data[lane] = x[lane] * 3u32;
        if VARIANT == 0u32 {
            atomic_add(ready, 0, 1u32, release, cta);
        } else {
            atomic_add(ready, 0, 1u32, relaxed, cta);
        }
    } else {
        var seen = 0u32;
        if VARIANT == 0u32 {
            seen = atomic_load(ready, 0, acquire, cta);
        } else {
            seen = atomic_load(ready, 0, relaxed, cta);
        }
        if seen == 32u32 {
            out[lane] = data[(lane + 1u32) % 32u32];
        }
    }
}
"""


def last_block_inputs(seed: int, n: int = 1000):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    blocks = (n + 127) // 128
    return x, blocks


def last_block_reference(x: np.ndarray) -> float:
    return float(x.astype(np.float64).sum())
