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



@pytest.mark.parametrize("staged", [False, True])
@pytest.mark.parametrize("quarters", [True, False])
@pytest.mark.parametrize("m, n, k, rows, planes", [(1, 4096, 14336, 1, 0), (8, 1024, 4096, 2, 0),
                                                   (1, 4096, 14336, 1, 3), (8, 4096, 14336, 2, 3),
                                                   (3, 777, 2304, 1, 2)])
def test_q6k_dp4a_gemvs(m, n, k, rows, planes, quarters, staged):
    """q6k_dp4a.ember on the GPU: Q8_1 (planes 0) and digit activations against the f64
    products of the simulator's test (tests/kernels/test_q6k_dp4a_in_sim.py); STAGED (K a
    multiple of 1024) with rings of 2 stages (ROWS 1) and 3 (ROWS 2)."""
    if staged and k % 1024:
        pytest.skip("STAGED takes K a multiple of 1024")
    from ember.reference import q4k as R4
    from ember.reference import q6k as R6
    from ember.runtime import cuda
    from tests.kernels.test_q6k_dp4a_in_sim import SRC as DP4A, f32_bound, grid, inputs
    w, x = inputs(7 * m + n, n, k, m)
    defines = {"M": m, "WARPS": WARPS, "ROWS": rows, "QUARTERS": quarters, **({"PLANES": planes} if planes else {}),
               **({"STAGED": True, "STAGES": 1 + rows} if staged else {})}
    mod = ember.runtime.load(ember.compile(DP4A, arch=cuda.context().arch, defines=defines), device="cuda")
    y = np.full((m, n), np.nan, np.float32)
    if planes:
        aq, ds = R4.split_digits(*R4.quantize_digits(x))
        mod.q6k_digits_gemv(w.view(np.uint16), aq, ds, y, n, k, grid=grid(n, rows))
        want, xv = R6.gemv_digits(w, x, planes), x
    else:
        q8 = R4.quantize_q8_1(x)
        mod.q6k_q8_gemv(w.view(np.uint16), *R4.split_q8_1(q8), y, n, k, grid=grid(n, rows))
        want, xv = R6.gemv_q8_1(w, q8), R4.dequantize_q8_1(q8)
    assert (np.abs(y - want) <= f32_bound(w, xv)).all()


@pytest.mark.parametrize("warps, stages, stage_x", [(4, 2, False), (2, 3, True)])
@pytest.mark.parametrize("m, n, k, planes", [(1, 4096, 14336, 0), (8, 4096, 14336, 0), (8, 4096, 14336, 3),
                                             (4, 1024, 4096, 2), (5, 777, 3072, 3)])
def test_q6k_imma_gemvs(m, n, k, planes, warps, stages, stage_x):
    """q6k_imma.ember on the GPU (int8 m16n8k16, the activations from global memory or staged):
    Q8_1 (planes 0) and digit activations against the f64 products of
    tests/kernels/test_q6k_imma_in_sim.py, and bit for bit the simulator's result at a small
    shape (the same fragments, the same f32 order)."""
    from ember.reference import q4k as R4
    from ember.reference import q6k as R6
    from ember.runtime import cuda
    from tests.kernels.test_q6k_dp4a_in_sim import f32_bound, inputs
    from tests.kernels.test_q6k_imma_in_sim import SRC as IMMA, grid
    w, x = inputs(11 * m + n, n, k, m)
    defines = {"M": m, "WARPS": warps, "STAGES": stages, "STAGE_X": stage_x, **({"PLANES": planes} if planes else {})}
    prog = ember.compile(IMMA, arch=cuda.context().arch, defines=defines)
    if planes:
        aq, ds = R4.split_digits(*R4.quantize_digits(x))
        args, name = (aq, ds.view(np.uint32)), "q6k_digits_imma"
        want, xv = R6.gemv_digits(w, x, planes), x
    else:
        q8 = R4.quantize_q8_1(x)
        args, name = R4.split_q8_1(q8), "q6k_q8_imma"
        want, xv = R6.gemv_q8_1(w, q8), R4.dequantize_q8_1(q8)
    y = np.full((m, n), np.nan, np.float32)
    getattr(ember.runtime.load(prog, device="cuda"), name)(w.view(np.uint16), *args, y, n, k, grid=grid(n, 1))
    assert (np.abs(y - want) <= f32_bound(w, xv)).all()
    if n < 1000:                                      # and the simulator's bits
        ys = np.full((m, n), np.nan, np.float32)
        getattr(ember.runtime.load(prog, device="sim"), name)(w.view(np.uint16), *args, ys, n, k, grid=grid(n, 1))
        np.testing.assert_array_equal(y, ys)
