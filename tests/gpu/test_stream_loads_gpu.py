"""Loads through `stream` parameters (inline PTX with cache qualifiers) on the GPU give
what the simulator gives, at every width (tests/lowering/test_stream_loads.py's kernel)."""

import numpy as np
import pytest

import ember
from ember.runtime import load
from tests.lowering.test_stream_loads import SRC

pytestmark = pytest.mark.gpu


def test_streamed_loads_on_the_gpu_match_the_simulator():
    from ember.runtime import cuda
    rng = np.random.default_rng(5)
    n = 64 * 4
    args = [rng.standard_normal(n).astype(np.float32),
            rng.integers(0, 1 << 16, n, dtype=np.uint16),
            rng.integers(0, 256, n, dtype=np.uint8),
            (rng.integers(0x3e00, 0x4100, n, dtype=np.uint16)),     # bf16 bits of 0.125 .. 8
            rng.standard_normal(n),
            rng.integers(-1000, 1000, n, dtype=np.int32)]
    prog = ember.compile(SRC, arch=cuda.context().arch)
    assert "L1::no_allocate" in prog.ptx
    got, want = np.zeros(64, np.float32), np.zeros(64, np.float32)
    load(prog, device="cuda").k(*args, got, grid=1)
    load(prog, device="sim").k(*args, want, grid=1)
    np.testing.assert_array_equal(got, want)
    assert np.abs(want).max() > 0
