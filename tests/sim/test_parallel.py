"""Parallel kernels in the simulator against numpy models: shared memory with barriers,
shuffles, votes, atomics (including a compare-and-swap loop), lane and warp ids in a 2-D
block, at -O0 and -O3."""

import numpy as np
import pytest

import ember
from ember.sim import load

from .programs import cases


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("index", range(3))
def test_parallel_kernel_matches_model(index, opt):
    src, kernel, args, grid, expected = list(cases(np.random.default_rng(7)))[index]
    prog = ember.compile(src, opt=opt)
    load(prog).kernels[kernel](*args, grid=grid)
    for i, want in expected.items():
        np.testing.assert_array_equal(args[i], want)
