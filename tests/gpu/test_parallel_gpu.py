"""The same parallel kernels (shared memory, barriers, shuffles, votes, atomics) launched
with one call on the GPU and in the simulator: identical results, and equal to the
numpy model."""

import numpy as np
import pytest

import ember
from ember.runtime import load
from tests.sim.programs import cases

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("index", range(3))
def test_same_call_same_results_on_both_devices(index):
    from ember.runtime import cuda
    src, kernel, args, grid, expected = list(cases(np.random.default_rng(11)))[index]
    prog = ember.compile(src, arch=cuda.context().arch)
    outs = {}
    for device in ("cuda", "sim"):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        load(prog, device=device).kernels[kernel](*a, grid=grid)
        outs[device] = a
    for i, want in expected.items():
        np.testing.assert_array_equal(outs["cuda"][i], want)
        np.testing.assert_array_equal(outs["sim"][i], want)
