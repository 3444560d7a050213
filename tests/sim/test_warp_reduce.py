"""The simulator's warp reductions and matches (redux_*, match_*) against numpy, over
partial and divergent warps: only the lanes that run the op take part."""

import numpy as np
import pytest

import ember

SRC = """kernel k(x: *mut global u32, s: *mut global i32, w: *mut global u64, o: *mut global u32, n: u32) block(64) {
    let i = thread_idx.x;
    if i % 3u32 != n {
        o[i * 8u32] = redux_add(x[i]);
        o[i * 8u32 + 1u32] = redux_max(x[i]);
        o[i * 8u32 + 2u32] = bitcast<u32>(redux_min(s[i]));
        o[i * 8u32 + 3u32] = redux_and(x[i]);
        o[i * 8u32 + 4u32] = redux_or(x[i]);
        o[i * 8u32 + 5u32] = redux_xor(x[i]);
        o[i * 8u32 + 6u32] = match_any(w[i]);
        o[i * 8u32 + 7u32] = match_all(w[i] & 1u64);
    }
}
"""


def reference(x, s, w, n):
    o = np.zeros((64, 8), np.uint32)
    lanes = np.arange(64)
    for warp in (0, 1):
        act = lanes[(lanes // 32 == warp) & (lanes % 3 != n)]
        bits = {int(j): 1 << int(j % 32) for j in act}
        for i in act:
            o[i, 0] = int(x[act].astype(np.uint64).sum()) & 0xFFFFFFFF
            o[i, 1] = x[act].max()
            o[i, 2] = np.int32(s[act].min()).view(np.uint32)
            o[i, 3] = np.bitwise_and.reduce(x[act])
            o[i, 4] = np.bitwise_or.reduce(x[act])
            o[i, 5] = np.bitwise_xor.reduce(x[act])
            o[i, 6] = sum(bits[int(j)] for j in act if w[j] == w[i])
            same = len({int(w[j]) & 1 for j in act}) == 1
            o[i, 7] = sum(bits.values()) if same else 0
    return o.reshape(-1)


def inputs(n: int):
    """x, s, w for SRC: random, w with few distinct values (lanes match); for n = 5 every
    lane's low bit of w is set, so match_all holds."""
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2**32, 64, dtype=np.uint32)
    s = rng.integers(-2**31, 2**31, 64, dtype=np.int32)
    w = rng.integers(0, 4, 64).astype(np.uint64) << np.uint64(40)
    if n == 5:
        w |= np.uint64(1)
    return x, s, w


@pytest.mark.parametrize("n", [0, 1, 5])
def test_redux_and_match_over_the_lanes_that_run_them(n):
    x, s, w = inputs(n)
    o = np.zeros(64 * 8, np.uint32)
    prog = ember.compile(SRC, stop_after="ir-opt", cache=False)
    ember.runtime.load(prog, device="sim").k(x, s, w, o, n, grid=1)
    assert (o == reference(x, s, w, n)).all()
