"""Multi-dimensional arrays on the GPU: the kernels of tests/sim/arrays_2d_programs.py
give what numpy gives (as they do in the simulator)."""

import numpy as np
import pytest

import ember
from tests.sim.arrays_2d_programs import TRANSPOSE, cube_reference

pytestmark = pytest.mark.gpu


def test_transpose_and_cube():
    from ember.runtime import cuda
    mod = ember.runtime.load(ember.compile(TRANSPOSE, arch=cuda.context().arch, cache=False), device="cuda")
    n = 256
    x = np.random.default_rng(3).standard_normal(n * n).astype(np.float32)
    y = np.zeros_like(x)
    mod.transpose(x, y, n, grid=(n // 32, n // 32))
    np.testing.assert_array_equal(y.reshape(n, n), x.reshape(n, n).T)
    xi = np.random.default_rng(4).integers(-1000, 1000, 64).astype(np.int32)
    out = np.zeros(128, np.int32)
    mod.cube(xi, out, grid=1)
    np.testing.assert_array_equal(out, cube_reference(xi))
