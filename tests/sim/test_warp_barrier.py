"""warp_barrier (bar.warp.sync, CUDA's __syncwarp) in the simulator: it orders the shared
memory a warp's lanes exchange - without it the exchange is a race (S0004) - while other
warps run on; every lane of the warp must reach it (S0005 otherwise: a branch that splits
the warp, a lane that returned, a warp cut short by the block's end). The pattern of
gemm_wgmma's epilogue, a warp staging rows for its own bulk stores and reusing the
buffer, is checked too (tests/gpu/test_new_ops_gpu.py runs the exchange on a GPU)."""

import numpy as np
import pytest

import ember
from ember.sim.errors import SimError

REVERSE = """kernel k(x: *global f32, y: *mut global f32) block(96) {
    shared s: [f32; 96];
    s[thread_idx.x] = x[thread_idx.x];
    warp_barrier();
    y[thread_idx.x] = s[warp_id * 32u32 + (31u32 - lane_id)];
}"""

# Each warp stages two rows of 32 values at a time in its own 32 x 2 buffer, 4 times; lanes
# 0 and 1 store a row each with the copy engine and wait for it to be read before the next
# round overwrites the buffer.
STAGED = """kernel k(x: *global f32, y: *mut global f32 align(16)) block(64) {
    shared s: [[[f32; 32]; 2]; 2];
    for r in 0u32..4u32 {
        cp_async_bulk_wait_read(0);
        warp_barrier();
        for h in 0u32..2u32 { s[warp_id][h][lane_id] = 3.0 * x[256u32 * warp_id + 64u32 * r + 32u32 * h + lane_id]; }
        fence_proxy_async();
        warp_barrier();
        if lane_id < 2u32 {
            cp_async_bulk_store(y, 256u32 * warp_id + 64u32 * r + 32u32 * lane_id, s[warp_id][lane_id], 0, 128u32);
            cp_async_bulk_commit();
        }
    }
    cp_async_bulk_wait(0);
}"""


# Lane 0 of each warp broadcasts through shared memory, twice: every lane reads the value, so
# a byte has more readers than the race check records one by one; the warp barrier after the
# reads still orders them before the next write (a barrier of their own warp).
BROADCAST = """kernel k(x: *global f32, y: *mut global f32) block(96) {
    shared s: [f32; 3];
    var v = 0.0;
    for r in 0u32..2u32 {
        if lane_id == 0u32 { s[warp_id] = x[thread_idx.x + r]; }
        warp_barrier();
        v += s[warp_id];
        warp_barrier();
    }
    y[thread_idx.x] = v;
}"""


def _run(src: str, n: int = 96, name: str = "wb.ember"):
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    prog = ember.compile(src, name=name, stop_after="ir-opt", cache=False)
    ember.runtime.load(prog, device="sim").k(x, y, grid=1)
    return x, y


def test_a_warp_reverses_its_values():
    x, y = _run(REVERSE)
    np.testing.assert_array_equal(y, x.reshape(3, 32)[:, ::-1].reshape(-1))


def test_a_broadcast_to_the_whole_warp_and_again():
    x, y = _run(BROADCAST)
    want = np.repeat(x[0::32] + x[1::32], 32)
    np.testing.assert_array_equal(y, want)


def test_staged_bulk_stores():
    x, y = _run(STAGED, 512)
    np.testing.assert_array_equal(y, 3 * x)


@pytest.mark.parametrize("src, change, code, message", [
    (REVERSE, ("    warp_barrier();\n", ""), "S0004", "data race on shared array `s`"),
    (REVERSE, ("    warp_barrier();\n", "    if lane_id < 31u32 { warp_barrier(); }\n"), "S0005",
     "divergent warp barrier"),
    (REVERSE, ("    s[thread_idx.x]", "    if lane_id == 31u32 { return; }\n    s[thread_idx.x]"), "S0005",
     "(finished) of its warp does not reach it"),
    (REVERSE.replace("block(96)", "block(80)").replace("[f32; 96]", "[f32; 80]"), ("", ""), "S0005",
     "warp barrier in a warp of 16 threads"),
    (BROADCAST, ("        v += s[warp_id];\n        warp_barrier();\n", "        v += s[warp_id];\n"), "S0004",
     "read with nothing in between"),
    (STAGED, ("        cp_async_bulk_wait_read(0);\n", ""), "S0009", "which a bulk store or a wgmma may still be reading"),
    (STAGED, ("        fence_proxy_async();\n", ""), "S0012", "written by an ordinary store"),
    (STAGED, ("        fence_proxy_async();\n        warp_barrier();\n", "        fence_proxy_async();\n"), "S0004",
     "data race on shared array `s`"),
])
def test_misuse_is_reported(src, change, code, message):
    bad = src.replace(*change)
    assert bad != src or change == ("", "")
    with pytest.raises(SimError) as err:
        _run(bad, 512 if src is STAGED else 96)
    assert err.value.diagnostic.code == code and message in err.value.diagnostic.message, err.value.diagnostic.message


def test_the_ptx():
    assert "bar.warp.sync \t-1;" in ember.compile(REVERSE, name="wb.ember", arch="sm_80", cache=False).ptx
