"""The Q4_K kernels and the row-in-registers RMSNorm on the GPU: the simulator's bits
(every operation in them is exactly specified, and the reduction orders are fixed),
Q8_1 bit-exact against the reference, and the f64 references within f32 rounding."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R
from ember.runtime import load
from ember.tuning.workload import imma_grid
from tests.kernels.test_kernels_in_sim import _io
from tests.kernels.test_q4k_in_sim import f32_tolerance

pytestmark = pytest.mark.gpu
SRC = Path(__file__).resolve().parents[2] / "kernels_src"


def both(path, defines, kernel, make_args, grid, outs):
    """Run on the GPU and in the simulator; returns {device: [output arrays]}."""
    from ember.runtime import cuda
    prog = ember.compile(path, arch=cuda.context().arch, defines=defines)
    got = {}
    for device in ("cuda", "sim"):
        args = make_args()
        getattr(load(prog, device=device), kernel)(*args, grid=grid)
        got[device] = [args[i] for i in outs]
    return got


@pytest.mark.parametrize("m", [1, 2])
def test_q4k_staged_and_fused_gpu_equal_sim(m):
    from ember.reference.rmsnorm import rmsnorm
    rng = np.random.default_rng(10 + m)
    n, k = 29, 768
    w = R.random_q4k(rng, n, k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    wv = w.view(np.uint32)
    got = both(SRC / "q4k_gemv_smem.ember", {"M": m, "K": k, "WARPS": 8}, "q4k_gemv_smem",
               lambda: [wv, x, np.zeros((m, n), np.float32), n], (n + 7) // 8, [2])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    assert (np.abs(got["cuda"][0] - R.gemv(w, x)) <= f32_tolerance(w, x)).all()
    gamma = rng.uniform(0.5, 1.5, k).astype(np.float32)
    got = both(SRC / "rmsnorm_q4k.ember", {"K": k, "WARPS": 8}, "rmsnorm_q4k_gemv",
               lambda: [x[0], gamma, wv, np.zeros(n, np.float32), n, 1e-6], (n + 7) // 8, [3])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    normed = rmsnorm(x[:1], gamma, 1e-6)
    assert (np.abs(got["cuda"][0] - R.gemv(w, normed)[0]) <= 4 * f32_tolerance(w, normed)[0]).all()


@pytest.mark.parametrize("m, rows", [(1, 1), (1, 4), (4, 2), (8, 1)])
def test_q4k_f32_and_dp4a_gpu_equal_sim(m, rows):
    rng = np.random.default_rng(m)
    n, k = 37, 1280
    w = R.random_q4k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10, (m, 1))).astype(np.float32)
    wv = w.view(np.uint32)
    grid = (n + 4 * rows - 1) // (4 * rows)
    got = both(SRC / "q4k_gemv.ember", {"M": m, "ROWS": rows}, "q4k_gemv",
               lambda: [wv, x, np.zeros((m, n), np.float32), n, k], grid, [2])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    assert (np.abs(got["cuda"][0] - R.gemv(w, x)) <= f32_tolerance(w, x)).all()
    blocks = m * k // 32
    q = both(SRC / "q4k_dp4a.ember", {"M": m}, "quantize_q8_1",
             lambda: [x, np.zeros(blocks * 8, np.uint32), np.zeros(blocks, np.uint32), blocks], (blocks + 3) // 4,
             [1, 2])
    want = R.quantize_q8_1(x)
    for a, b in zip(q["cuda"], R.split_q8_1(want)):
        np.testing.assert_array_equal(a, b)
    aq, ads = q["cuda"]
    got = both(SRC / "q4k_dp4a.ember", {"M": m, "ROWS": rows}, "q4k_q8_gemv",
               lambda: [wv, aq, ads, np.zeros((m, n), np.float32), n, k], grid, [3])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    assert (np.abs(got["cuda"][0] - R.gemv_q8_1(w, want)) <= f32_tolerance(w, R.dequantize_q8_1(want))).all()


@pytest.mark.parametrize("t", ["f32", "bf16"])
def test_rmsnorm_rows_gpu_equals_sim(t):
    rng = np.random.default_rng(4)
    rows, cols = 6, 3584
    x = _io(t, rng.standard_normal((rows, cols)) * 5)
    gamma = _io(t, rng.uniform(0.5, 1.5, cols))
    got = both(SRC / "rmsnorm.ember", {"T": t, "COLS": cols, "BLOCK": 256, "VEC": 8 if t == "bf16" else 4},
               "rmsnorm_rows",
               lambda: [x, gamma, np.zeros_like(x), 1e-6], rows, [2])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])


@pytest.mark.parametrize("m", [1, 5, 8])
def test_q4k_tensor_core_gemvs_gpu(m):
    """q4k_mma.ember: the activation layouts bit for bit the reference's; the Q8_1 GEMV bit for
    bit the simulator's (its mma sums are integers below 2^24: exact in any order); the f32
    GEMV (whose mma sums round as the hardware rounds) within f32 rounding of f64."""
    rng = np.random.default_rng(70 + m)
    n, k = 45, 1280
    w = R.random_q4k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10, (m, 1))).astype(np.float32)
    wv = w.view(np.uint32)
    src = SRC / "q4k_mma.ember"
    pgrid = (8 * k // 32 + 3) // 4
    defines = {"WARPS": 4}
    q = both(src, defines, "quantize_q8_1_mma",
             lambda: [x, np.zeros(k // 16 * 128, np.uint16), np.zeros(k // 32 * 16, np.float32), m, k], pgrid, [1, 2])
    q8 = R.quantize_q8_1(x)
    for a, b in zip(q["cuda"], R.q8_1_mma_layout(q8)):
        np.testing.assert_array_equal(a, b)
    xb, xs = q["cuda"]
    got = both(src, defines, "q4k_q8_mma", lambda: [wv, xb, xs, np.zeros((m, n), np.float32), m, n, k],
               (n + 15) // 16, [3])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    assert (np.abs(got["cuda"][0] - R.gemv_q8_1(w, q8)) <= f32_tolerance(w, R.dequantize_q8_1(q8))).all()
    s = both(src, defines, "split_bf16x3",
             lambda: [x, np.zeros(k // 16 * 384, np.uint16), np.zeros(k // 32 * 8, np.float32), m, k], pgrid, [1, 2])
    np.testing.assert_array_equal(s["cuda"][0], R.bf16_bits(R.mma_b_layout(R.split_bf16x3(x))))
    np.testing.assert_array_equal(s["cuda"][1], s["sim"][1])
    xb3, xs3 = s["cuda"]
    got = both(src, defines, "q4k_f32_mma", lambda: [wv, xb3, xs3, np.zeros((m, n), np.float32), m, n, k],
               (n + 15) // 16, [3])
    assert (np.abs(got["cuda"][0] - R.gemv(w, x)) <= f32_tolerance(w, x)).all()
    assert (np.abs(got["sim"][0] - R.gemv(w, x)) <= f32_tolerance(w, x)).all()


@pytest.mark.parametrize("m, rows", [(1, 2), (3, 1), (8, 2)])
def test_q4k_f32_digits_gpu_equals_sim(m, rows):
    """q4k_digits.ember: the digits (computed in f64) bit for bit the reference's, and the
    GEMV bit for bit the simulator's (dp4a is exact, the rest fixed-order f32)."""
    rng = np.random.default_rng(90 + m)
    n, k = 37, 1280
    w = R.random_q4k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10, (m, 1))).astype(np.float32)
    blocks = m * k // 32
    src = SRC / "q4k_digits.ember"
    q = both(src, {"ROWS": rows}, "quantize_digits",
             lambda: [x, np.zeros(3 * blocks * 8, np.uint32), np.zeros(2 * blocks, np.float32), blocks],
             (blocks + 3) // 4, [1, 2])
    for a, b in zip(q["cuda"], R.split_digits(*R.quantize_digits(x))):
        np.testing.assert_array_equal(a, b)
    aq, ds = q["cuda"]
    got = both(src, {"M": m, "ROWS": rows}, "q4k_digits_gemv",
               lambda: [w.view(np.uint32), aq, ds, np.zeros((m, n), np.float32), n, k], (n + 4 * rows - 1) // (4 * rows),
               [3])
    np.testing.assert_array_equal(got["cuda"][0], got["sim"][0])
    assert (np.abs(got["cuda"][0] - R.gemv(w, x)) <= f32_tolerance(w, x)).all()


@pytest.mark.parametrize("m, defines", [(1, {"ROWS": 1}), (3, {"WARPS": 8, "STAGES": 3}), (8, {}),
                                        (8, {"SHARE_X": True, "STAGES": 3}), (2, {"SHARE_X": True, "WARPS": 8})])
def test_q4k_int8_tensor_core_gemvs_gpu_equal_sim(m, defines):
    """q4k_imma.ember on the DP4A kernels' own activations: both GEMVs bit for bit the
    simulator's (the mma sums are exact integers, the rest fixed-order f32) and within f32
    rounding of the exact products; the SwiGLU pairs within the bound of their silu."""
    rng = np.random.default_rng(110 + m)
    n, k = 75, 2816                      # 11 super-blocks: not a multiple of the warps
    w, wu = R.random_q4k(rng, n, k), R.random_q4k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10, (m, 1))).astype(np.float32)
    q8 = R.quantize_q8_1(x)
    aq8, ads8 = R.split_q8_1(q8)
    aqd, dsd = R.split_digits(*R.quantize_digits(x))
    src, d = SRC / "q4k_imma.ember", {"M": m, **defines}
    grid = imma_grid(n)({"ROWS": 2, "WARPS": 4, **d})[0]           # the GEMVs' defaults: ROWS 2, WARPS 4
    y8 = both(src, d, "q4k_q8_imma", lambda: [w.view(np.uint32), aq8, ads8, np.zeros((m, n), np.float32), n, k],
              grid, [3])
    np.testing.assert_array_equal(y8["cuda"][0], y8["sim"][0])
    assert (np.abs(y8["cuda"][0] - R.gemv_q8_1(w, q8)) <= f32_tolerance(w, R.dequantize_q8_1(q8))).all()
    yd = both(src, d, "q4k_digits_imma",
              lambda: [w.view(np.uint32), aqd, dsd.view(np.uint32), np.zeros((m, n), np.float32), n, k], grid, [3])
    np.testing.assert_array_equal(yd["cuda"][0], yd["sim"][0])
    assert (np.abs(yd["cuda"][0] - R.gemv(w, x)) <= f32_tolerance(w, x)).all()
    grid = imma_grid(n)({"ROWS": 1, "WARPS": 4, **d})[0]           # the SwiGLU pairs': ROWS 1
    for name, aq, ads, g, u, xx in (("q4k_q8_swiglu_imma", aq8, ads8, R.gemv_q8_1(w, q8), R.gemv_q8_1(wu, q8),
                                     R.dequantize_q8_1(q8)),
                                    ("q4k_digits_swiglu_imma", aqd, dsd.view(np.uint32), R.gemv(w, x), R.gemv(wu, x),
                                     x)):
        ys = both(src, d, name, lambda: [w.view(np.uint32), wu.view(np.uint32), aq, ads,
                                         np.zeros((m, n), np.float32), n, k], grid, [4])
        tol = 1e-5 * (np.abs(g) + 1) * (np.abs(u) + 1) + f32_tolerance(w, xx) * np.abs(u) + \
            f32_tolerance(wu, xx) * np.abs(g)
        for dev in ("cuda", "sim"):
            assert (np.abs(ys[dev][0] - g / (1 + np.exp(-g)) * u) <= tol).all(), (name, dev)
