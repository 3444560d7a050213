"""kernels_src/q4k_mma.ember in the simulator: the activation layouts bit for bit against
ember.reference.q4k, the Q8_1 GEMV against the Q8_1 emulation (its integer dot products are
exact on tensor cores), the f32 GEMV against the f64 product; M = 1..8, N not a multiple
of a block's 16 rows, super-block counts that leave warps idle, random scale bytes."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R
from ember.sim import load

from .test_q4k_in_sim import f32_tolerance, inputs

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "q4k_mma.ember"
WARPS = 4


@pytest.fixture(scope="module")
def mod():
    return load(ember.compile(SRC, defines={"WARPS": WARPS}))


def prep_grid(k: int) -> int:
    return (8 * k // 32 + WARPS - 1) // WARPS


@pytest.mark.parametrize("m, n, k", [(1, 21, 512), (3, 16, 1280), (8, 9, 256)])
def test_q8_1_on_tensor_cores(mod, m, n, k):
    rng, w, x = inputs(7000 + 10 * m + n, n, k, m)
    x[0, :32] = 0.0                                   # an all-zero block: d = 0
    x[-1, 40] = 1e4                                   # one block dominated by one value
    xb = np.zeros(k // 16 * 8 * 16, np.uint16)
    xs = np.zeros(k // 32 * 16, np.float32)
    mod.quantize_q8_1_mma(x, xb, xs, m, k, grid=prep_grid(k))
    q8 = R.quantize_q8_1(x)
    want_b, want_s = R.q8_1_mma_layout(q8)
    np.testing.assert_array_equal(xb, want_b)
    np.testing.assert_array_equal(xs, want_s)
    y = np.zeros((m, n), np.float32)
    mod.q4k_q8_mma(w.view(np.uint32), xb, xs, y, m, n, k, grid=(n + 15) // 16)
    assert (np.abs(y - R.gemv_q8_1(w, q8)) <= f32_tolerance(w, R.dequantize_q8_1(q8))).all()


@pytest.mark.parametrize("m, n, k", [(1, 21, 512), (5, 16, 1280), (8, 9, 256)])
def test_f32_on_tensor_cores(mod, m, n, k):
    _, w, x = inputs(8000 + 10 * m + n, n, k, m)
    x[0, 3] = 1e-30                                   # tiny and huge magnitudes split exactly
    x[-1, 7] = 3e7
    xb = np.zeros(k // 16 * 3 * 8 * 16, np.uint16)
    xs = np.zeros(k // 32 * 8, np.float32)
    mod.split_bf16x3(x, xb, xs, m, k, grid=prep_grid(k))
    parts = R.split_bf16x3(x)
    assert (parts.sum(0) == x.astype(np.float64)).all()
    np.testing.assert_array_equal(xb, R.bf16_bits(R.mma_b_layout(parts)))
    y = np.zeros((m, n), np.float32)
    mod.q4k_f32_mma(w.view(np.uint32), xb, xs, y, m, n, k, grid=(n + 15) // 16)
    err = np.abs(y - R.gemv(w, x))
    assert (err <= f32_tolerance(w, x)).all(), err.max()
