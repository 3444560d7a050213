"""kernels_src/gemm_f32.ember (SIMT f32 GEMM) in the simulator against f64, with M, N not
multiples of the 128 tile (rows past them are read as the last row, every check on) and K
not a multiple of the 8-column step (the half step); rows do not depend on M (each output
is one thread's fma chain in ascending k)."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.gemm import linear
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_f32.ember"


@pytest.fixture(scope="module")
def gemm():
    return load(ember.compile(SRC, cache=False)).gemm_f32


def run(gemm, a, w):
    m, k = a.shape
    n = w.shape[0]
    c = np.zeros(m * n, np.float32)
    gemm(a.astype(np.float32).reshape(-1), w.astype(np.float32).reshape(-1), c, m, n, k,
         grid=((n + 127) // 128, (m + 127) // 128))
    return c.reshape(m, n)


@pytest.mark.parametrize("m, n, k", [(1, 4, 4), (3, 5, 12), (37, 140, 20), (130, 9, 64)])  # K % 8 == 4: a half step
def test_matches_the_f64_reference(gemm, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    ref = linear(a, w)
    assert np.abs(run(gemm, a, w) - ref).max() <= 2e-6 * np.abs(ref).max() * np.sqrt(k)


def test_rows_do_not_depend_on_m(gemm):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((140, 28)).astype(np.float32)
    w = rng.standard_normal((20, 28)).astype(np.float32)
    full = run(gemm, a, w)
    for m in (1, 50, 129):
        assert np.array_equal(run(gemm, a[:m], w), full[:m])


def test_k_zero_gives_zeros_and_reads_nothing(gemm):
    """No step at all: every output is the empty sum, and no load runs (the simulator reports
    any read past the end of an empty buffer)."""
    c = np.full(3 * 5, np.nan, np.float32)
    gemm(np.zeros(0, np.float32), np.zeros(0, np.float32), c, 3, 5, 0, grid=(1, 1))
    assert np.array_equal(c, np.zeros(15, np.float32))
