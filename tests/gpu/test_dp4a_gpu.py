"""dp4a on the GPU, all four signedness combinations, against the byte-by-byte reference
and the simulator (the same kernel as tests/ir/test_dp4a.py)."""

import numpy as np
import pytest

import ember
from ember.runtime import load
from tests.ir.test_dp4a import KERNEL, arguments, expected

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("opt", [0, 3])
def test_dp4a_on_the_gpu_matches_the_definition(opt):
    from ember.runtime import cuda
    n = 4099
    s, u, y, z = arguments(n, seed=23)
    want_y, want_z = expected(s, u, y, z, n)
    load(ember.compile(KERNEL, arch=cuda.context().arch, opt=opt), device="cuda").k(s, u, y, z, n,
                                                                                     grid=(n + 63) // 64)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_z)
