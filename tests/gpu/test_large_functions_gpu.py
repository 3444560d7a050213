"""A function past the large-function bound (cut into blocks, code generated at -O0)
computes on the GPU what its reference computes."""

import numpy as np
import pytest

import ember
from tests.lowering.test_large_functions import TERMS, array_sum, array_sum_case, long_sum

pytestmark = pytest.mark.gpu


def test_a_huge_function_on_the_gpu():
    from ember.runtime import cuda
    prog = ember.compile(long_sum(TERMS), cache=False)
    x = np.arange(TERMS + 8, dtype=np.uint32) * np.uint32(2654435761)
    want = 0
    for k in range(TERMS):
        want = (want + (int(x[3 + k]) ^ k)) & 0xFFFFFFFF
    y = x.copy()
    cuda.load(prog).k(y, 3, grid=1)
    assert int(y[0]) == want


def test_a_huge_function_with_an_array_on_the_gpu():
    """Its per-thread array in registers (sccp before sroa), the sum the reference's."""
    from ember.runtime import cuda
    prog = ember.compile(array_sum(TERMS), arch=cuda.context().arch, cache=False)
    assert ".local" not in prog.ptx
    x, want = array_sum_case(TERMS)
    y = x.copy()
    cuda.load(prog).k(y, 3, grid=1)
    assert int(y[0]) == int(want)
