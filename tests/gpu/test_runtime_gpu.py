"""Launch arguments on the GPU: numpy arrays that overlap are staged as one allocation,
so the GPU and the simulator see the same aliasing; numpy integers for the grid."""

import numpy as np
import pytest

import ember
from ember.runtime import LaunchError, load

pytestmark = pytest.mark.gpu

ALIAS = """
kernel twice(a: *mut global f32 align(16), b: *mut global f32 align(16)) block(32) {
    let i = thread_idx.x;
    if i == 0 { a[0] = a[0] + 1.0; }
    barrier();
    if i == 0 { b[0] = b[0] * 10.0; }
}
"""


@pytest.mark.parametrize("device", ["cuda", "sim"])
def test_one_array_for_two_mut_parameters_is_one_buffer(device):
    from ember.runtime import cuda
    prog = ember.compile(ALIAS, arch=cuda.context().arch)
    k = load(prog, device=device).twice
    x = np.full(4, 2.0, np.float32)
    k(x, x, grid=np.int64(1))
    assert x[0] == 30.0
    base = np.zeros(12, np.float32)
    k(base[:8], base[4:], grid=1)
    assert base[0] == 1.0 and base[4] == 0.0
    with pytest.raises(LaunchError, match="16-byte aligned"):
        k(base[:8], base[1:], grid=1)
