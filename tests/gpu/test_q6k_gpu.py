"""The Q6_K GEMV on the GPU at Llama-3-8B's shapes against the f64 product of ggml's
dequantised weights (as tests/kernels/test_q6k_in_sim.py checks it in the simulator)."""

import numpy as np
import pytest

import ember
from tests.kernels.test_q6k_in_sim import SRC, WARPS, check, gemv_inputs

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("m, n, k, rows", [(1, 4096, 14336, 1), (8, 1024, 4096, 2), (3, 777, 2304, 1)])
def test_q6k_gemv(m, n, k, rows):
    from ember.runtime import cuda
    w, x = gemv_inputs(m + n, n, k, m)
    mod = ember.runtime.load(ember.compile(SRC / "q6k_gemv.ember", arch=cuda.context().arch,
                                           defines={"M": m, "WARPS": WARPS, "ROWS": rows}), device="cuda")
    y = np.full((m, n), np.nan, np.float32)
    mod.q6k_gemv(w.view(np.uint16), x, y, n, k, grid=(n + WARPS * rows - 1) // (WARPS * rows))
    check(y, w, x)

