"""kernels_src/q4k_imma.ember in the simulator: the Q4_K GEMVs and SwiGLU pair on int8
tensor cores read the DP4A kernels' activations as those kernels do (Q8_1 from
ember.reference.q4k.split_q8_1, digits from split_digits) and give their results within
the f32 rounding bound: the Q8_1 ones against the exact Q8_1 product, the digit ones
against the f64 product with the f32 activations. N not a multiple of the 16 rows of a
block, M below 8 (the columns past M read row M - 1 and are not stored: the simulator
reports any access past y), super-blocks not a multiple of WARPS * STAGES."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R
from ember.sim import load
from ember.sim.errors import SimError
from tests.kernels.test_q4k_in_sim import f32_tolerance, inputs

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "q4k_imma.ember"


def kernels(m: int, warps: int, stages: int, rows: int, *names: str, share: bool = False):
    """The kernels `names` of the file with these const values (the others may not fit them);
    `share`: SHARE_X, the block's warps on the same super-blocks, each its own rows."""
    return load(ember.compile(SRC, defines={"M": m, "WARPS": warps, "STAGES": stages, "ROWS": rows,
                                            "SHARE_X": share}, kernels=list(names)))


def blocks(n: int, rows: int = 1, warps: int = 1) -> tuple:
    """The grid: a block per 16 ROWS output rows, or 16 ROWS WARPS with SHARE_X (warps=WARPS)."""
    return (-(-n // (16 * rows * warps)),)


@pytest.mark.parametrize("m, n, k, warps, stages, rows, share", [
    (1, 7, 768, 4, 2, 1, False), (3, 21, 1280, 4, 3, 2, False), (8, 16, 512, 2, 2, 1, False),
    (5, 33, 256, 4, 3, 3, False), (2, 18, 1792, 2, 4, 1, False), (1, 40, 3072, 2, 2, 2, False),
    (8, 72, 1280, 2, 3, 1, True), (3, 40, 768, 2, 4, 2, True), (2, 9, 256, 4, 2, 1, True),
    (8, 90, 1280, 2, 2, 4, False)])
def test_q8_1_activations(m, n, k, warps, stages, rows, share):
    _, w, x = inputs(300 + 10 * m + n, n, k, m)
    x[0, :32] = 0.0                                   # an all-zero block: d = 0
    x[-1, 40] = 1e4                                   # one block dominated by one value
    q8 = R.quantize_q8_1(x)
    aq, ads = R.split_q8_1(q8)
    y = np.zeros((m, n), np.float32)
    mod = kernels(m, warps, stages, rows, "q4k_q8_imma", share=share)
    mod.q4k_q8_imma(w.view(np.uint32), aq, ads, y, n, k, grid=blocks(n, rows, warps if share else 1))
    # the integer dots are exact; what is left is the f32 combination of the sub-blocks' parts
    err = np.abs(y - R.gemv_q8_1(w, q8))
    assert (err <= f32_tolerance(w, R.dequantize_q8_1(q8))).all(), err.max()


@pytest.mark.parametrize("m, n, k, warps, stages, rows, share", [
    (1, 9, 768, 4, 2, 1, False), (8, 20, 1280, 4, 3, 2, False), (2, 16, 512, 2, 4, 1, False),
    (8, 50, 1024, 2, 2, 1, True), (5, 20, 1280, 4, 3, 1, True), (3, 70, 768, 2, 3, 4, False)])
def test_digit_activations(m, n, k, warps, stages, rows, share):
    _, w, x = inputs(400 + 10 * m + n, n, k, m)
    x[0, :32] = 0.0
    x[-1, 40] = 1e4
    x[-1, 41] = 3e-7
    aq, ds = R.split_digits(*R.quantize_digits(x))
    y = np.zeros((m, n), np.float32)
    mod = kernels(m, warps, stages, rows, "q4k_digits_imma", share=share)
    mod.q4k_digits_imma(w.view(np.uint32), aq, ds.view(np.uint32), y, n, k, grid=blocks(n, rows, warps if share else 1))
    err = np.abs(y - R.gemv(w, x))
    assert (err <= f32_tolerance(w, x)).all(), (err / f32_tolerance(w, x)).max()


@pytest.mark.parametrize("planes", [3, 2])
def test_extreme_digits_stay_exact(planes):
    """Each plane's mma starts from the bias 1.5 * 2^23 (q4k_imma.ember's mma_bias), which
    reads its dot back exactly while |dot| < 2^22; then 254 dot2 + dot3 (three planes) or 254
    dot1 + dot2 (two) must be exact in f32, below 2^24. With every nibble 15 and every digit
    -128 (beyond what quantize_digits writes) a dot is 32 15 128 = 61440 and those sums 61440
    255 < 2^24: the extremes of both bounds. y must be the f64 product with the activations
    the digits stand for."""
    m, n, k = 2, 16, 512
    rng = np.random.default_rng(78)
    w = R.random_q4k(rng, n, k)
    wb = w.reshape(n, -1, 144)
    wb[..., 16:] = 0xFF
    wb[0, :, 4:16] = 0xFF
    digits = np.full((3, m, k), -128, np.int64)
    digits[:, :, 480::3] = 127
    if planes == 2:
        digits[2] = 0                                 # what the kernel reads of them
    s = rng.uniform(0.5, 2.0, (m, k // 32)).astype(np.float32)
    xhat = R.dequantize_digits(digits, s)
    sums = xhat.reshape(m, -1, 32).sum(-1).astype(np.float32)
    aq, ds = R.split_digits(digits, s, sums)
    y = np.zeros((m, n), np.float32)
    mod = load(ember.compile(SRC, defines={"M": m, "WARPS": 2, "STAGES": 2, "ROWS": 1, "PLANES": planes},
                             kernels=["q4k_digits_imma"]))
    mod.q4k_digits_imma(w.view(np.uint32), aq, ds.view(np.uint32), y, n, k, grid=blocks(n))
    want = R.gemv(w, xhat)
    assert (np.abs(y - want) <= f32_tolerance(w, xhat) + 1e-6 * np.abs(want)).all()


def _swiglu_tol(g, u, wg, wu, x):
    return (1e-5 * (np.abs(g) + 1) * (np.abs(u) + 1) + f32_tolerance(wg, x) * np.abs(u)
            + f32_tolerance(wu, x) * np.abs(g))


@pytest.mark.parametrize("m, n, rows, share", [(1, 18, 1, False), (6, 16, 1, False), (3, 40, 2, False),
                                               (8, 70, 1, True), (2, 40, 2, True)])
def test_swiglu_pair(m, n, rows, share):
    k = 1280 if share else 512                        # SHARE_X: more super-blocks than its 3 stages
    rng, wg, x = inputs(500 + m, n, k, m)
    wu = R.random_q4k(rng, n, k)
    mod = kernels(m, 2, 3, rows, "q4k_q8_swiglu_imma", "q4k_digits_swiglu_imma", share=share)
    grid = blocks(n, rows, 2 if share else 1)
    q8 = R.quantize_q8_1(x)
    y = np.zeros((m, n), np.float32)
    mod.q4k_q8_swiglu_imma(wg.view(np.uint32), wu.view(np.uint32), *R.split_q8_1(q8), y, n, k, grid=grid)
    g, u = R.gemv_q8_1(wg, q8), R.gemv_q8_1(wu, q8)
    assert (np.abs(y - g / (1 + np.exp(-g)) * u) <= _swiglu_tol(g, u, wg, wu, R.dequantize_q8_1(q8))).all()
    aq, ds = R.split_digits(*R.quantize_digits(x))
    y = np.zeros((m, n), np.float32)
    mod.q4k_digits_swiglu_imma(wg.view(np.uint32), wu.view(np.uint32), aq, ds.view(np.uint32), y, n, k,
                               grid=grid)
    g, u = R.gemv(wg, x), R.gemv(wu, x)
    assert (np.abs(y - g / (1 + np.exp(-g)) * u) <= _swiglu_tol(g, u, wg, wu, x)).all()


@pytest.mark.parametrize("barrier, code, share", [
    ("        // the stage the copy stages - 1 ahead goes to was read last step, by every lane\n"
     "        warp_barrier();\n", "S0004", False),    # a stage refilled while other lanes may still read it
    ("        warp_barrier();                       // ... and for every lane of the warp\n", "S0004", False),
    ("        barrier();                            // ... for every thread; every warp is past the step before\n",
     "S0004", True),
    # a lane reads coefficients another lane of its warp has not written yet
    ("    warp_barrier();                           // every lane's coefficients are in\n", "S0004", False),
    # a lane's partial sums overwrite coefficients another lane still reads
    ("    warp_barrier();                           // every lane of the warp is done with them\n", "S0004", False),
])
def test_the_rings_barriers_are_needed(barrier, code, share, tmp_path):
    """Each warp's ring is ordered by two warp_barriers a step: without the first a lane's
    copy refills a stage other lanes read last step; without the second a lane reads what
    another lane's copy delivered. A third orders the warp's coefficient area (written once a
    warp, q4k_imma_coefs) before its reads, and a fourth its last reads before the partial
    sums that reuse it. With SHARE_X the block's warps share each stage, whose
    activations the block's threads copy between them, ordered by one barrier() a step:
    without it a warp reads what another warp's copy has not delivered, or refills a stage
    another warp still reads. The simulator reports each (a ring that turns: more
    super-blocks than stages)."""
    src = SRC.read_text()
    assert barrier in src
    broken = tmp_path / "q4k_imma.ember"
    broken.write_text(src.replace(barrier, ""))
    _, w, x = inputs(800, 40, 3072, 1)
    aq, ads = R.split_q8_1(R.quantize_q8_1(x))
    rows = 1 if share else 2
    mod = load(ember.compile(broken, defines={"M": 1, "WARPS": 2, "STAGES": 2, "ROWS": rows, "SHARE_X": share},
                             kernels=["q4k_q8_imma"]))
    with pytest.raises(SimError) as e:
        mod.q4k_q8_imma(w.view(np.uint32), aq, ads, np.zeros((1, 40), np.float32), 40, 3072,
                        grid=blocks(40, rows, 2 if share else 1))
    assert e.value.code == code
