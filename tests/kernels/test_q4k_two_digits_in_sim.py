"""The digits kernels with PLANES = 2 in the simulator (q4k_digits.ember, q4k_digits_swiglu.ember,
q4k_imma.ember): they read the first two of quantize_digits's three planes, each x then
s (a1 + a2 / 254), within s / 508 of its value - and y within that bound of the f64 product
with the f32 activations, where three planes stay within the f32 rounding bound. The
bound: sum over k of |d sc q_k| s_k / 508 (the min terms use the block's exact sum)."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R
from ember.sim import load
from tests.kernels.test_q4k_in_sim import f32_tolerance, grid, inputs

SRC = Path(__file__).resolve().parents[2] / "kernels_src"


def two_digit_bound(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y2 - y| bound [m, n]: the quants' weights d sc q (the super-blocks' dmin zeroed)
    against each x's s / 508, plus the f32 rounding bound."""
    dscq = np.abs(R.dequantize_q4k_scaled(w))
    _, s, _ = R.quantize_digits(x)
    step = np.repeat(np.asarray(s, np.float64), 32, axis=1) / 508.0
    return (step @ dscq.T) * (1 + 1e-6) + f32_tolerance(w, x)


def silu(g: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):                    # exp(-g) -> inf: silu(g) -> -0
        return g / (1 + np.exp(-g))


def swiglu_tolerance(g, u, bg, bu) -> np.ndarray:
    """silu(g) u's error bound where g and u are within bg and bu: |silu'| <= 1.1 times g's
    error times |u|, plus silu(g) (<= |g|) times u's, plus the f32 rounding of silu."""
    return 1e-5 * (np.abs(g) + 1) * (np.abs(u) + 1) + 1.1 * bg * (np.abs(u) + bu) + np.abs(g) * bu


def digit_inputs(seed: int, n: int, k: int, m: int):
    rng, w, x = inputs(seed, n, k, m)
    x[0, :32] = 0.0                                     # an all-zero block: s = 0
    x[-1, 40] = 1e4                                     # one block dominated by one value
    return rng, w, x


def test_two_digits_are_each_value_within_half_a_step_of_the_second():
    _, _, x = digit_inputs(1, 1, 512, 3)
    digits, s, _ = R.quantize_digits(x)
    two = R.dequantize_digits(np.stack([digits[0], digits[1], 0 * digits[2]]), s)
    step = np.repeat(np.asarray(s, np.float64), 32, axis=1) / 508.0
    assert (np.abs(two - x) <= step * (1 + 1e-9)).all()


@pytest.mark.parametrize("m, n, k, rows, unroll", [(1, 7, 768, 1, 1), (2, 9, 1280, 2, 2), (8, 5, 512, 1, 1)])
def test_the_gemv(m, n, k, rows, unroll):
    _, w, x = digit_inputs(8000 + 10 * m + n, n, k, m)
    aq, ds = R.split_digits(*R.quantize_digits(x))
    y = {}
    for planes in (2, 3):
        mod = load(ember.compile(SRC / "q4k_digits.ember", defines={"M": m, "WARPS": 4, "ROWS": rows, "UNROLL": unroll,
                                                                    "PLANES": planes}, kernels=["q4k_digits_gemv"]))
        y[planes] = np.zeros((m, n), np.float32)
        mod.q4k_digits_gemv(w.view(np.uint32), aq, ds, y[planes], n, k, grid=grid(n, rows))
    want = R.gemv(w, x)
    assert (np.abs(y[2] - want) <= two_digit_bound(w, x)).all()
    assert (np.abs(y[3] - want) <= f32_tolerance(w, x)).all()
    assert not np.array_equal(y[2], y[3])                   # the third plane is what PLANES drops


@pytest.mark.parametrize("m, k, unroll, rows", [(1, 512, 1, 1), (3, 1280, 2, 1), (2, 768, 1, 2)])
def test_the_swiglu_pair(m, k, unroll, rows):
    rng, wg, x = digit_inputs(90 + m, 6, k, m)
    wu = R.random_q4k(rng, 6, k)
    aq, ds = R.split_digits(*R.quantize_digits(x))
    mod = load(ember.compile(SRC / "q4k_digits_swiglu.ember", defines={"M": m, "WARPS": 2, "UNROLL": unroll,
                                                                       "PLANES": 2, "ROWS": rows}))
    y = np.zeros((m, 6), np.float32)
    mod.q4k_digits_swiglu(wg.view(np.uint32), wu.view(np.uint32), aq, ds, y, 6, k, grid=(-(-6 // (2 * rows)),))
    g, u = R.gemv(wg, x), R.gemv(wu, x)
    tol = swiglu_tolerance(g, u, two_digit_bound(wg, x), two_digit_bound(wu, x))
    assert (np.abs(y - silu(g) * u) <= tol).all()


@pytest.mark.parametrize("m, n, warps, stages, rows, share", [(1, 7, 4, 2, 1, False), (8, 21, 2, 3, 2, False),
                                                              (3, 33, 4, 2, 2, False), (8, 70, 2, 4, 1, True)])
def test_the_tensor_core_kernels(m, n, warps, stages, rows, share):
    k = 1280
    rng, w, x = digit_inputs(300 + m, n, k, m)
    wu = R.random_q4k(rng, n, k)
    aq, ds = R.split_digits(*R.quantize_digits(x))
    mod = load(ember.compile(SRC / "q4k_imma.ember", defines={"M": m, "WARPS": warps, "STAGES": stages, "ROWS": rows,
                                                              "PLANES": 2, "SHARE_X": share},
                             kernels=["q4k_digits_imma", "q4k_digits_swiglu_imma"]))
    blocks = (-(-n // (16 * rows * (warps if share else 1))),)
    y = np.zeros((m, n), np.float32)
    mod.q4k_digits_imma(w.view(np.uint32), aq, ds.view(np.uint32), y, n, k, grid=blocks)
    assert (np.abs(y - R.gemv(w, x)) <= two_digit_bound(w, x)).all()
    g, u = R.gemv(w, x), R.gemv(wu, x)
    y = np.zeros((m, n), np.float32)
    mod.q4k_digits_swiglu_imma(w.view(np.uint32), wu.view(np.uint32), aq, ds.view(np.uint32), y, n, k, grid=blocks)
    tol = swiglu_tolerance(g, u, two_digit_bound(w, x), two_digit_bound(wu, x))
    assert (np.abs(y - silu(g) * u) <= tol).all()
