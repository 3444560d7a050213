"""The Q6_K GEMVs on int8 tensor cores (kernels_src/q6k_imma.ember) in the simulator: Q6_K
weights with random quant bits and signed scales against Q8_1 or digit activations in the
split layout the quantisers store (ember.reference.q4k), against the f64 products of
ember.reference.q6k, within the f32 rounding bound of a K-term dot product (as
test_q6k_dp4a_in_sim.py): N not a multiple of a tile's 16 rows, M = 1..8, ROWS 1 and 2, WARPS
2 and 4, STAGES 2 to 4, more pairs of super-blocks than warps and stages, the activations
read from global memory and staged (STAGE_X)."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R4
from ember.reference import q6k as R6
from ember.sim import load
from tests.kernels.test_q6k_dp4a_in_sim import (assert_digits_product, digit_inputs, extreme_digits,
                                                 f32_bound, inputs)

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "q6k_imma.ember"


def grid(n: int, rows: int) -> int:
    return -(-n // (16 * rows))


# (m, n, k, consts): pairs of super-blocks 1, 3, 4 and 5 (a stage each super-block) over 2 or 4
# warps, the activations read from global memory or staged (STAGE_X)
SHAPES = [(1, 21, 512, {"WARPS": 2, "STAGE_X": False}), (8, 16, 2560, {"WARPS": 2, "STAGES": 3, "STAGE_X": False}),
          (3, 40, 1024, {"WARPS": 2, "ROWS": 2, "STAGE_X": False}),
          (5, 9, 1536, {"WARPS": 4, "STAGES": 2, "STAGE_X": False}),
          (2, 21, 512, {"WARPS": 2, "STAGE_X": True}), (8, 16, 2560, {"WARPS": 2, "STAGES": 3, "STAGE_X": True}),
          (3, 40, 1024, {"WARPS": 2, "ROWS": 2, "STAGE_X": True}),
          (6, 9, 1536, {"WARPS": 2, "STAGES": 4, "STAGE_X": True})]


@pytest.mark.parametrize("m, n, k, consts", SHAPES, ids=str)
def test_q6k_q8_imma(m, n, k, consts):
    w, x = inputs(300 * m + n, n, k, m)
    q8 = R4.quantize_q8_1(x)
    aq, ads = R4.split_q8_1(q8)
    mod = load(ember.compile(SRC, defines={"M": m, **consts}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_q8_imma(w.view(np.uint16), aq, ads, y, n, k, grid=grid(n, consts.get("ROWS", 1)))
    xq = R4.dequantize_q8_1(q8)
    err = np.abs(y - R6.gemv_q8_1(w, q8))
    assert (err <= f32_bound(w, xq)).all(), (err / f32_bound(w, xq)).max()


@pytest.mark.parametrize("m, n, k, consts, planes", [(*s, 3) for s in SHAPES] + [(*SHAPES[i], 2) for i in (0, 6)],
                         ids=str)
def test_q6k_digits_imma(m, n, k, consts, planes):
    """Three digits: within the f32 rounding bound of the product with x itself; two: of the
    product with the values two digits stand for."""
    w, x, aq, ds = digit_inputs(7000 + 10 * m + n, n, k, m)
    mod = load(ember.compile(SRC, defines={"M": m, "PLANES": planes, **consts}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_digits_imma(w.view(np.uint16), aq, ds.view(np.uint32), y, n, k, grid=grid(n, consts.get("ROWS", 1)))
    assert_digits_product(y, w, x, planes)


def test_extreme_digits_do_not_overflow():
    """Every quant 0 (q - 32 = -32) and every digit -127 make each group's dot 65024 in
    magnitude and t = dot1 254 + dot2 65024 * 255, just below 2^24: y is still the f64 product
    with the values the digits stand for."""
    m, n, k = 2, 16, 1024
    w, aq, ds, want, bound = extreme_digits(m, n, k, 78)
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": 2}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_digits_imma(w.view(np.uint16), aq, ds.view(np.uint32), y, n, k, grid=1)
    assert np.abs(y - want).max() <= bound
    assert np.abs(want).min() > 0


@pytest.mark.parametrize("kernel", ["q6k_q8_imma", "q6k_digits_imma"])
def test_outside_its_contract_gives_nan_rows(kernel):
    """K a multiple of 512 (whole 4-byte pieces of two super-blocks): at K = 768 every row is
    NaN and no weight is read (the simulator reports stray or misaligned reads)."""
    m, n, k = 2, 21, 768
    w, x = inputs(32, n, k, m)
    if kernel == "q6k_q8_imma":
        aq, act = R4.split_q8_1(R4.quantize_q8_1(x))
    else:
        aq, act = R4.split_digits(*R4.quantize_digits(x))
        act = act.view(np.uint32)
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": 2}))
    y = np.zeros((m, n), np.float32)
    getattr(mod, kernel)(w.view(np.uint16), aq, act, y, n, k, grid=grid(n, 1))
    assert np.isnan(y).all()
