"""elect_sync: one active lane per warp, the lowest, in each branch of a divergent warp; the
GPU gives the same lanes (tests/gpu/test_new_ops_gpu.py)."""

import numpy as np

import ember

ELECT = """kernel k(out: *mut global u32, n: u32) block(96) {
    var v = 0u32;
    if thread_idx.x % n != 0u32 {
        if elect_sync() { v = 1u32; }
    } else {
        if elect_sync() { v = 2u32; }
    }
    out[thread_idx.x] = v;
}"""


def expected(n: int) -> np.ndarray:
    t = np.arange(96)
    out = np.zeros(96, np.uint32)
    for w in range(3):
        lanes = t[32 * w:32 * w + 32]
        for mask, value in ((lanes % n != 0, 1), (lanes % n == 0, 2)):
            if mask.any():
                out[lanes[mask][0]] = value
    return out


def test_one_lane_per_warp_and_branch():
    prog = ember.compile(ELECT, stop_after="ir-opt", cache=False)
    for n in (1, 3, 7, 40):
        out = np.zeros(96, np.uint32)
        ember.runtime.load(prog, device="sim").k(out, n, grid=1)
        np.testing.assert_array_equal(out, expected(n))
