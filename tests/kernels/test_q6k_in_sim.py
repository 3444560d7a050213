"""The Q6_K GEMV in the simulator against the f64 reference of ggml's format
(ember.reference.q6k, itself checked element by element against the definition here):
random quant bits and signed scales, N not a multiple of the rows per block, M = 1..8."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q6k as R
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src"
WARPS = 4


def dequantize_by_the_letter(block: bytes) -> list:
    """One super-block as ggml's dequantize_row_q6_K writes it, loop for loop."""
    ql, qh, sc = block[0:128], block[128:192], np.frombuffer(block[192:208], np.int8)
    d = float(np.frombuffer(block[208:210], np.float16)[0])
    out = [0.0] * 256
    for half in range(2):
        for l in range(32):
            a, b, c = ql[64 * half + l], ql[64 * half + l + 32], qh[32 * half + l]
            is_ = l // 16
            qs = [((a & 0xF) | (((c >> 0) & 3) << 4)) - 32, ((b & 0xF) | (((c >> 2) & 3) << 4)) - 32,
                  ((a >> 4) | (((c >> 4) & 3) << 4)) - 32, ((b >> 4) | (((c >> 6) & 3) << 4)) - 32]
            for quarter in range(4):
                out[128 * half + 32 * quarter + l] = d * int(sc[8 * half + is_ + 2 * quarter]) * qs[quarter]
    return out


def test_reference_dequantiser_matches_the_definition():
    blocks = R.random_q6k(np.random.default_rng(0), 3, 512)
    got = R.dequantize_q6k(blocks)
    for r in range(3):
        for b in range(2):
            raw = bytes(blocks[r, 210 * b:210 * (b + 1)])
            np.testing.assert_array_equal(got[r, 256 * b:256 * (b + 1)], dequantize_by_the_letter(raw))


def gemv_inputs(seed: int, n: int, k: int, m: int):
    rng = np.random.default_rng(seed)
    w = R.random_q6k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    return w, x


def check(y, w, x):
    ref = np.asarray(x, np.float64) @ R.dequantize_q6k(w).T
    mag = np.abs(np.asarray(x, np.float64)) @ np.abs(R.dequantize_q6k(w)).T
    err = np.abs(y - ref)
    assert (err <= x.shape[1] * 2.0 ** -23 * mag + 1e-30).all(), err.max()


@pytest.mark.parametrize("m, n, k, rows", [(1, 7, 768, 1), (3, 9, 256, 2), (8, 5, 512, 1), (1, 11, 512, 4)])
def test_q6k_gemv_f32(m, n, k, rows):
    w, x = gemv_inputs(m * 100 + n, n, k, m)
    mod = load(ember.compile(SRC / "q6k_gemv.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows}))
    y = np.zeros((m, n), np.float32)
    mod.q6k_gemv(w.view(np.uint16), x, y, n, k, grid=(n + WARPS * rows - 1) // (WARPS * rows))
    check(y, w, x)

