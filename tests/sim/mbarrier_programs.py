"""Bulk copies on mbarriers (sm_90), shared by the simulator and GPU tests."""

import numpy as np

import ember

# Each block copies its tiles of TILE floats into shared memory with the copy engine,
# STAGES at a time (one mbarrier each, reused once per round), and writes them back doubled.
PIPELINE = """
import "std/mbarrier.ember";

kernel doubled<const STAGES: u32 = 2, const ROUNDS: u32 = 3, const TILE: u32 = 512>(
        x: *global f32 align(16), y: *mut global f32) block(128) {
    shared tile: [[f32; TILE]; STAGES];
    shared full: [u64; STAGES];
    if thread_idx.x == 0u32 {
        for s in 0u32..STAGES { mbarrier_init(full, s, 1u32); }
    }
    barrier();
    let base = block_idx.x * STAGES * ROUNDS * TILE;
    for use in 0u32..STAGES * ROUNDS {
        let s = use % STAGES;
        if thread_idx.x == 0u32 {
            mbarrier_arrive(full, s, TILE * 4u32);
            cp_async_bulk(tile[s], 0, x, base + use * TILE, TILE * 4u32, full, s);
        }
        mbarrier_wait(full, s, stage_parity(use, STAGES));
        for i in thread_idx.x..TILE step 128u32 {
            y[base + use * TILE + i] = 2.0 * tile[s][i];
        }
        barrier();      // every reader is done with the stage before it is filled again
    }
}
"""

# Warp specialisation: warp 0's thread 0 fills a ring of STAGES stages with the copy engine,
# each time waiting until the consumers released the stage's previous use; warps 1..3 wait
# for a stage to be full, use it and release it (96 arrivals). In the simulator the two
# branches run concurrently, switching whenever one spins on an mbarrier.
SPECIALISED = """
import "std/mbarrier.ember";

kernel specialised<const STAGES: u32 = 2, const TILES: u32 = 6, const TILE: u32 = 256>(
        x: *global f32 align(16), y: *mut global f32) block(128) {
    shared tile: [[f32; TILE]; STAGES];
    shared full: [u64; STAGES];
    shared empty: [u64; STAGES];
    if thread_idx.x == 0u32 {
        for s in 0u32..STAGES {
            mbarrier_init(full, s, 1u32);
            mbarrier_init(empty, s, 96u32);
        }
    }
    barrier();
    let base = block_idx.x * TILES * TILE;
    if warp_id == 0u32 {
        if lane_id == 0u32 {
            for k in 0u32..TILES {
                let s = k % STAGES;
                mbarrier_wait(empty, s, stage_parity(k, STAGES) ^ 1u32);
                mbarrier_arrive(full, s, TILE * 4u32);
                cp_async_bulk(tile[s], 0, x, base + k * TILE, TILE * 4u32, full, s);
            }
        }
    } else {
        let c = thread_idx.x - 32u32;
        for k in 0u32..TILES {
            let s = k % STAGES;
            mbarrier_wait(full, s, stage_parity(k, STAGES));
            for i in c..TILE step 96u32 {
                y[base + k * TILE + i] = 2.0 * tile[s][i];
            }
            mbarrier_arrive(empty, s, 0u32);
        }
    }
}
"""

# SPECIALISED written with std/pipeline.ember: no stage or parity arithmetic in the kernel.
WITH_PIPELINE = """
import "std/pipeline.ember";

kernel specialised<const STAGES: u32 = 2, const TILES: u32 = 6, const TILE: u32 = 256>(
        x: *global f32 align(16), y: *mut global f32) block(128) {
    shared tile: [[f32; TILE]; STAGES];
    shared full: [u64; STAGES];
    shared empty: [u64; STAGES];
    if thread_idx.x == 0u32 { pipeline_init(full, empty, STAGES, 96u32); }
    barrier();
    let base = block_idx.x * TILES * TILE;
    if warp_id == 0u32 {
        if lane_id == 0u32 {
            for k in 0u32..TILES {
                producer_acquire(empty, k, STAGES);
                producer_commit(full, k, STAGES, TILE * 4u32);
                cp_async_bulk(tile[k % STAGES], 0, x, base + k * TILE, TILE * 4u32, full, k % STAGES);
            }
        }
    } else {
        for k in 0u32..TILES {
            consumer_wait(full, k, STAGES);
            for i in (thread_idx.x - 32u32)..TILE step 96u32 {
                y[base + k * TILE + i] = 2.0 * tile[k % STAGES][i];
            }
            consumer_release(empty, k, STAGES);
        }
    }
}
"""


def run_specialised(src: str, x, **defines):
    """Run a `specialised` kernel (SPECIALISED or WITH_PIPELINE, maybe broken on purpose) on
    two blocks in the simulator; y = its output."""
    prog = ember.compile(src, name="specialised.ember", defines=defines, stop_after="ir-opt", cache=False)
    y = np.zeros_like(x)
    ember.runtime.load(prog, device="sim").specialised(x, y, grid=2)
    return y

