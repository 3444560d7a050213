"""Bulk copies on mbarriers (sm_90), shared by the simulator and GPU tests."""

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
