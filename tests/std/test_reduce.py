"""ember/std/reduce.ember in the simulator, for several types, against numpy."""

import numpy as np
import pytest

import ember
from ember.sim import load

SRC = """
import "std/reduce.ember";
kernel k<const T: type = f32>(x: *mut global T, ws: *mut global T, wm: *mut global T,
                              bs: *mut global T, bm: *mut global T) block(128) {
    shared partial: [T; 4];
    let i = block_idx.x * 128u32 + thread_idx.x;
    let v = x[i];
    ws[i] = warp_sum(v);
    wm[i] = warp_max(v);
    bs[i] = block_sum(v, partial, 4u32);
    bm[i] = block_max(v, partial, 4u32);     // partial reused at once
}
"""


@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("i32", np.int32), ("u32", np.uint32),
                                      ("f64", np.float64)])
def test_reductions(t, dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(256) * 100).astype(dtype) if t[0] == "f" else \
        rng.integers(0, 1000, 256).astype(dtype)
    outs = [np.zeros_like(x) for _ in range(4)]
    load(ember.compile(SRC, defines={"T": t})).k(x, *outs, grid=2)
    ws, wm, bs, bm = outs
    warps, blocks = x.reshape(-1, 32), x.reshape(-1, 128)
    tol = dict(rtol=1e-5) if t == "f32" else dict(rtol=1e-12)
    np.testing.assert_allclose(ws, np.repeat(warps.astype(np.float64).sum(1), 32), **tol)
    np.testing.assert_array_equal(wm, np.repeat(warps.max(1), 32))
    np.testing.assert_allclose(bs, np.repeat(blocks.astype(np.float64).sum(1), 128), **tol)
    np.testing.assert_array_equal(bm, np.repeat(blocks.max(1), 128))
    # every lane of a warp (thread of a block) sees bit-identical sums
    assert (ws.reshape(-1, 32) == ws.reshape(-1, 32)[:, :1]).all()
    assert (bs.reshape(-1, 128) == bs.reshape(-1, 128)[:, :1]).all()
