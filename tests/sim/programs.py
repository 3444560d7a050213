"""Parallel kernels with a numpy model of what they compute, shared by the simulator tests
and the GPU tests (which run each on both devices through the same call)."""

import numpy as np

BLOCK_SUM = """
// Sum of each block's 256 values: a shared-memory tree down to one warp, then shuffles.
kernel block_sum(x: *global i32, out: *mut global i32) block(256) {
    shared t: [i32; 256];
    let i = block_idx.x * 256 + thread_idx.x;
    t[thread_idx.x] = x[i];
    barrier();
    var width: u32 = 128;
    while width >= 32 {
        if thread_idx.x < width {
            t[thread_idx.x] = t[thread_idx.x] + t[thread_idx.x + width];
        }
        barrier();
        width = width / 2;
    }
    if warp_id == 0 {
        var v = t[lane_id];
        for k in 0..5u32 {
            v += shfl_down(v, 16u32 >> k);
        }
        if lane_id == 0 { out[block_idx.x] = v; }
    }
}
"""


def block_sum_model(x):
    return x.reshape(-1, 256).sum(axis=1, dtype=np.int64).astype(np.int32)


VOTES = """
// Per warp: all/any of (x > 0), the ballot, and a reversal of the warp by shfl_idx,
// over a 2-D block of 32 x 4.
kernel votes(x: *global f32, out: *mut global u32) block(32, 4) {
    let t = thread_idx.y * 32 + thread_idx.x;
    let i = block_idx.x * 128 + t;
    let p = x[i] > 0.0;
    let all = vote_all(p);
    let any = vote_any(p);
    let bits = ballot(p);
    out[4 * i] = u32(all);
    out[4 * i + 1] = u32(any);
    out[4 * i + 2] = bits;
    out[4 * i + 3] = shfl_idx(t, 31 - lane_id) + 1000 * warp_id;
}
"""


def votes_model(x):
    p = (x > 0).reshape(-1, 32)
    bits = (p.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    warp = np.tile(np.arange(4, dtype=np.uint32), len(p) // 4)
    out = np.zeros((len(p), 32, 4), np.uint32)
    out[:, :, 0] = p.all(axis=1)[:, None]
    out[:, :, 1] = p.any(axis=1)[:, None]
    out[:, :, 2] = bits[:, None]
    out[:, :, 3] = warp[:, None] * 32 + np.arange(31, -1, -1, dtype=np.uint32)[None, :] + 1000 * warp[:, None]
    return out.reshape(-1)


HISTOGRAM = """
// A 16-bin histogram: per-block counts in shared memory, then merged with global atomics;
// the maximum with atomic_max, and a lock-free increment of out[16] with atomic_cas.
kernel histogram(x: *global u32, hist: *mut global u32, n: u32) block(128) {
    shared bins: [u32; 16];
    if thread_idx.x < 16 { bins[thread_idx.x] = 0; }
    barrier();
    let i = block_idx.x * 128 + thread_idx.x;
    if i < n {
        atomic_add(bins, x[i] % 16, 1u32);
        atomic_max(hist, 17u32, x[i]);
    }
    barrier();
    if thread_idx.x < 16 {
        atomic_add(hist, thread_idx.x, bins[thread_idx.x]);
    }
    if thread_idx.x == 0 {
        var done = false;
        while !done {
            let old = hist[16];
            done = atomic_cas(hist, 16u32, old, old + 1) == old;
        }
    }
}
"""


def histogram_model(x, n_blocks):
    h = np.zeros(18, np.uint32)
    h[:16] = np.bincount(x % 16, minlength=16)
    h[16] = n_blocks
    h[17] = x.max()
    return h


def cases(rng):
    """(source, kernel, args, grid, expected {arg index: array})"""
    x = rng.integers(-1000, 1000, 4 * 256, dtype=np.int32)
    yield BLOCK_SUM, "block_sum", [x, np.zeros(4, np.int32)], (4,), {1: block_sum_model(x)}
    v = rng.standard_normal(3 * 128).astype(np.float32)
    v[:32] = np.abs(v[:32]) + 1        # a warp where all hold
    v[32:64] = -np.abs(v[32:64])       # a warp where none holds
    yield VOTES, "votes", [v, np.zeros(4 * len(v), np.uint32)], (3,), {1: votes_model(v)}
    h = rng.integers(0, 1 << 20, 1000, dtype=np.uint32)
    yield HISTOGRAM, "histogram", [h, np.zeros(18, np.uint32), len(h)], (8,), {1: histogram_model(h, 8)}
