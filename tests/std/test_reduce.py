"""ember/std/reduce.ember in the simulator, for several types, against numpy."""

import numpy as np
import pytest

import ember
from ember.sim import load

SRC = """
import "std/reduce.ember";
kernel k<const T: type = f32, const B: u32 = 128>(x: *mut global T, ws: *mut global T, wm: *mut global T,
                                                 bs: *mut global T, bm: *mut global T) block(B) {
    shared partial: [T; B / 32u32];
    let i = block_idx.x * B + thread_idx.x;
    let v = x[i];
    ws[i] = warp_sum(v);
    wm[i] = warp_max(v);
    bs[i] = block_sum(v, partial, B / 32u32);
    bm[i] = block_max(v, partial, B / 32u32);     // partial reused at once
}
"""


# 128 and 1024 threads: the warp sums combined by a butterfly; 96: in index order
@pytest.mark.parametrize("t, dtype, block", [("f32", np.float32, 128), ("i32", np.int32, 128),
                                             ("u32", np.uint32, 128), ("f64", np.float64, 128),
                                             ("f32", np.float32, 96), ("i32", np.int32, 1024)])
def test_reductions(t, dtype, block):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(2 * block) * 100).astype(dtype) if t[0] == "f" else \
        rng.integers(-1000 if t == "i32" else 0, 1000, 2 * block).astype(dtype)
    outs = [np.zeros_like(x) for _ in range(4)]
    load(ember.compile(SRC, defines={"T": t, "B": block})).k(x, *outs, grid=2)
    ws, wm, bs, bm = outs
    warps, blocks = x.reshape(-1, 32), x.reshape(-1, block)
    tol = dict(rtol=1e-5) if t == "f32" else dict(rtol=1e-12)
    np.testing.assert_allclose(ws, np.repeat(warps.astype(np.float64).sum(1), 32), **tol)
    np.testing.assert_array_equal(wm, np.repeat(warps.max(1), 32))
    np.testing.assert_allclose(bs, np.repeat(blocks.astype(np.float64).sum(1), block), **tol)
    np.testing.assert_array_equal(bm, np.repeat(blocks.max(1), block))
    # every lane of a warp (thread of a block) sees bit-identical sums
    assert (ws.reshape(-1, 32) == ws.reshape(-1, 32)[:, :1]).all()
    assert (bs.reshape(-1, block) == bs.reshape(-1, block)[:, :1]).all()
