"""Shared memory above 48 KB on the GPU: the runtime opts the kernel in to its dynamic
shared memory and sizes each launch; every byte of the arrays is written and read back,
as the simulator computes it."""

import numpy as np
import pytest

import ember
from ember.runtime import load

pytestmark = pytest.mark.gpu

SRC = """
kernel roomy<const A: u32, const B: u32>(x: *mut global f32) block(256) {
    shared a: [f32; A];
    shared odd: [u8; 3];
    shared b: [f32; B];
    let t = thread_idx.x;
    for i in t..A step 256 { a[i] = f32(i) + f32(block_idx.x); }
    for i in t..B step 256 { b[i] = f32(i) * 2.0; }
    if t < 3 { odd[t] = u8(t + 1); }
    barrier();
    var s: f32 = 0.0;
    for i in t..A step 256 { s += a[A - 1 - i]; }
    for i in t..B step 256 { s += b[B - 1 - i]; }
    x[block_idx.x * 256 + t] = s + f32(odd[2]);
}
"""


@pytest.mark.parametrize("a, b", [(4096, 4096), (16384, 8192), (40000, 16000)])
def test_big_shared_arrays_run_as_simulated(a, b):
    from ember.runtime import cuda
    prog = ember.compile(SRC, arch=cuda.context().arch, defines={"A": a, "B": b}, cache=False)
    info = prog.kernels["roomy"]
    assert (info.dynamic_shared > 0) == ((a + b) * 4 > 48 * 1024)
    x_gpu = np.zeros(4 * 256, np.float32)
    x_sim = np.zeros_like(x_gpu)
    load(prog).roomy(x_gpu, grid=4)
    load(prog, device="sim").roomy(x_sim, grid=4)
    np.testing.assert_array_equal(x_gpu, x_sim)
    assert x_gpu[3 * 256] != 0.0
