"""The Q6_K GEMVs on dp4a (kernels_src/q6k_dp4a.ember) in the simulator: Q6_K weights with
random quant bits and signed scales against Q8_1 or digit activations in the split layout
the quantisers store (made on the host here, ember.reference.q4k: the same words, checked
against the kernels in test_q4k_in_sim.py), against the f64 products of
ember.reference.q6k; N not a multiple of a block's rows, M = 1..8."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R4
from ember.reference import q6k as R6
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "q6k_dp4a.ember"
WARPS = 4


def grid(n: int, rows: int) -> int:
    return (n + WARPS * rows - 1) // (WARPS * rows)


def inputs(seed: int, n: int, k: int, m: int):
    rng = np.random.default_rng(seed)
    w = R6.random_q6k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    return w, x


def f32_bound(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """f32 rounding of a K-term dot product: K * eps * sum |w x|."""
    mag = np.abs(np.asarray(x, np.float64)) @ np.abs(R6.dequantize_q6k(w)).T
    return x.shape[1] * 2.0 ** -23 * mag + 1e-30


@pytest.mark.parametrize("quarters", [True, False])
@pytest.mark.parametrize("m, n, k, rows", [(1, 7, 768, 1), (3, 9, 256, 2), (8, 5, 512, 1), (2, 11, 1280, 2)])
def test_q6k_q8_gemv(m, n, k, rows, quarters):
    """Both ways lanes share a super-block (QUARTERS: 8 weights of four quarters a lane, or
    16 of two)."""
    check_q8(m, n, k, rows, {"QUARTERS": quarters})


# STAGED: the warp's super-blocks copied whole into a ring in shared memory (K a multiple of
# 1024), its lanes' words read there; STAGES 2 and 3, more steps than stages. BIAS false: the
# quants made signed bytes q - 32 in each row instead of -32 sum(a) once for all rows.
STAGED = ([{"QUARTERS": q, "STAGED": True, "STAGES": s} for q in (True, False) for s in (2, 3)]
          + [{"QUARTERS": q, "STAGED": st, "BIAS": False} for q in (True, False) for st in (True, False)])


@pytest.mark.parametrize("consts", STAGED, ids=str)
@pytest.mark.parametrize("m, n, k, rows", [(1, 7, 1024, 1), (3, 9, 4096, 2), (8, 5, 2048, 2)])
def test_q6k_q8_gemv_staged(m, n, k, rows, consts):
    check_q8(m, n, k, rows, consts)


def check_q8(m, n, k, rows, consts):
    w, x = inputs(100 * m + n, n, k, m)
    q8 = R4.quantize_q8_1(x)
    aq, ads = R4.split_q8_1(q8)
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": WARPS, "ROWS": rows, **consts}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_q8_gemv(w.view(np.uint16), aq, ads, y, n, k, grid=grid(n, rows))
    xq = R4.dequantize_q8_1(q8)
    err = np.abs(y - R6.gemv_q8_1(w, q8))
    assert (err <= f32_bound(w, xq)).all(), (err / f32_bound(w, xq)).max()


@pytest.mark.parametrize("quarters", [True, False])
@pytest.mark.parametrize("m, n, k, rows, planes", [(1, 7, 768, 1, 3), (3, 9, 256, 2, 3), (8, 5, 512, 1, 3),
                                                   (2, 6, 512, 2, 2), (1, 10, 1024, 1, 2)])
def test_q6k_digits_gemv(m, n, k, rows, planes, quarters):
    """Three digits: within the f32 rounding bound of the product with x itself (the
    digits stand for x within 2^-23 of its block's largest); two: of the product with the
    values two digits stand for."""
    check_digits(m, n, k, rows, planes, {"QUARTERS": quarters})


@pytest.mark.parametrize("consts", STAGED, ids=str)
@pytest.mark.parametrize("m, n, k, rows, planes", [(1, 7, 2048, 2, 3), (2, 6, 1024, 1, 2), (5, 9, 1024, 2, 3)])
def test_q6k_digits_gemv_staged(m, n, k, rows, planes, consts):
    check_digits(m, n, k, rows, planes, consts)


def check_digits(m, n, k, rows, planes, consts):
    w, x, aq, ds = digit_inputs(6000 + 10 * m + n, n, k, m)
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": WARPS, "ROWS": rows, "PLANES": planes, **consts}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_digits_gemv(w.view(np.uint16), aq, ds, y, n, k, grid=grid(n, rows))
    assert_digits_product(y, w, x, planes)


def digit_inputs(seed: int, n: int, k: int, m: int):
    """(w, x, aq, ds): inputs() with an all-zero block (s = 0) and a block dominated by one
    value, x as digits in the split layout."""
    w, x = inputs(seed, n, k, m)
    x[0, :32] = 0.0
    x[-1, 40] = 1e4
    x[-1, 41] = 3e-7
    aq, ds = R4.split_digits(*R4.quantize_digits(x))
    return w, x, aq, ds


def assert_digits_product(y, w, x, planes: int) -> None:
    """Three digits: y within the f32 rounding bound of the product with x itself; two: of
    the product with the values two digits stand for."""
    want = np.asarray(x, np.float64) @ R6.dequantize_q6k(w).T if planes == 3 else R6.gemv_digits(w, x, planes)
    err = np.abs(y - want)
    assert (err <= f32_bound(w, x)).all(), (err / f32_bound(w, x)).max()


@pytest.mark.parametrize("quarters", [True, False])
def test_q6k_digits_gemv_extreme_digits_do_not_overflow(quarters):
    """The digit dots meet in integers and f32: t = dot1 254 + dot2 in an i32 (and as an
    exact f32), dot3 beside it. Every quant 0 (q - 32 = -32) and every digit -127 make each
    16-weight dot (QUARTERS false) 65024 in magnitude and |t| = 65024 * 255, just below 2^24
    (all three in one i32 would pass 2^31). y must still be the f64 product with the values the digits
    stand for."""
    m, n, k = 1, 5, 512
    w, aq, ds, want, bound = extreme_digits(m, n, k, 77)
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": WARPS, "QUARTERS": quarters}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_digits_gemv(w.view(np.uint16), aq, ds, y, n, k, grid=grid(n, 1))
    assert np.abs(y - want).max() <= bound
    assert np.abs(want).min() > 0


def extreme_digits(m: int, n: int, k: int, seed: int):
    """Weights whose quants are all 0 (q - 32 = -32) and digits all -127: (w, aq, ds, the f64
    product with the values the digits stand for, its f32 rounding bound)."""
    rng = np.random.default_rng(seed)
    w = R6.random_q6k(rng, n, k).reshape(n, -1, 210)
    w[..., :192] = 0
    w = w.reshape(n, -1)
    digits = np.full((3, m, k), -127, np.int64)
    s = np.full((m, k // 32), 0.5, np.float32)
    aq, ds = R4.split_digits(digits, s, np.zeros((m, k // 32), np.float32))
    xhat = R4.dequantize_digits(digits, s)
    return w, aq, ds, xhat @ R6.dequantize_q6k(w).T, f32_bound(w, xhat).max()


@pytest.mark.parametrize("kernel", ["q6k_q8_gemv", "q6k_digits_gemv"])
def test_staged_outside_its_contract_gives_nan_rows(kernel):
    """STAGED needs K a multiple of 1024 (whole 8-byte pieces of four super-blocks); at
    K = 768 it stores NaN in every row and reads no weight (the simulator reports stray
    or misaligned reads)."""
    m, n, k = 2, 7, 768
    w, x = inputs(31, n, k, m)
    if kernel == "q6k_q8_gemv":
        aq, act = R4.split_q8_1(R4.quantize_q8_1(x))
    else:
        aq, act = R4.split_digits(*R4.quantize_digits(x))
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": WARPS, "STAGED": True}))
    y = np.zeros((m, n), np.float32)
    getattr(mod, kernel)(w.view(np.uint16), aq, act, y, n, k, grid=grid(n, 1))
    assert np.isnan(y).all()
