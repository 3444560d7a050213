"""A shared array sized at launch on the GPU: the softmax of tests/sim/sized_shared_programs.py
at widths from one element to past 48 KB of shared memory (where the kernel must have
opted in to dynamic shared memory) matches the f64 reference, as in the simulator."""

import numpy as np
import pytest

import ember
from ember.abi import LaunchError
from tests.sim import sized_shared_programs as P

pytestmark = pytest.mark.gpu


def test_softmax_of_any_width():
    from ember.runtime import cuda
    mod = ember.runtime.load(ember.compile(P.SOFTMAX, name="sized.ember", arch=cuda.context().arch, cache=False),
                             device="cuda")
    for cols in (1, 255, 1000, 12289, 50000):       # 12289 f32: past 48 KB; 50000: 200 KB
        rows = 4
        x = P.inputs(rows, cols, seed=cols)
        y = np.zeros_like(x)
        mod.softmax(x, y, cols, grid=rows)
        np.testing.assert_allclose(y, P.reference(x, rows, cols), rtol=2e-6, atol=1e-9)
    too_many = cuda.context().max_shared_bytes // 4
    with pytest.raises(LaunchError, match="above the"):
        mod.softmax(np.zeros(too_many, np.float32), np.zeros(too_many, np.float32), too_many, grid=1)
