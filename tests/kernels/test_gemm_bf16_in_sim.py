"""kernels_src/gemm_bf16.ember in the simulator (every check on): against the f64 reference,
and the batch-invariance contract of seed 004 at CI sizes - a row's output is bitwise the
same for every M (multiples of the 64-row tile or not), every chunking of the batch and
whatever the rows past M hold; K a power of two or not. tests/gpu/test_gemm_gpu.py runs
the same battery at real sizes on the GPU."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.gemm import bf16_bits, bf16_values, linear
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_bf16.ember"


@pytest.fixture(scope="module")
def gemm():
    return load(ember.compile(SRC, cache=False)).gemm_bf16


def run(gemm, a_bits, w_bits, m, n, k):
    c = np.zeros(m * n, np.float32)
    gemm(a_bits, w_bits, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
    return c.reshape(m, n)


@pytest.mark.parametrize("m, n, k", [(1, 8, 16), (40, 72, 96), (64, 64, 64), (70, 20, 40)])
def test_matches_the_f64_reference(gemm, m, n, k):
    rng = np.random.default_rng(m * 1000 + n + k)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    c = run(gemm, bf16_bits(a), bf16_bits(w), m, n, k)
    ref = linear(a, w)
    assert np.abs(c - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(k)


@pytest.mark.parametrize("k", [64, 72])          # a power of two, and not
def test_rows_do_not_depend_on_the_batch(gemm, k):
    n, rows = 24, 140
    rng = np.random.default_rng(k)
    a, w = bf16_values(rng.standard_normal((rows, k))), bf16_values(rng.standard_normal((n, k)))
    full = run(gemm, bf16_bits(a), bf16_bits(w), rows, n, k)
    for m in (1, 3, 17, 64, 65, 128):            # every M gives the same rows, bit for bit
        assert np.array_equal(run(gemm, bf16_bits(a[:m]), bf16_bits(w), m, n, k), full[:m])
    for cut in (1, 30, 129):                    # any split of the batch into chunks
        parts = [run(gemm, bf16_bits(a[s:e]), bf16_bits(w), e - s, n, k)
                 for s, e in ((0, cut), (cut, rows))]
        assert np.array_equal(np.concatenate(parts), full)


@pytest.mark.parametrize("fill", [0.0, np.nan, np.inf, "random"])
def test_rows_past_m_are_never_read(gemm, fill):
    m, n, k = 5, 16, 48
    rng = np.random.default_rng(1)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    padded = np.full((64, k), 0.0)
    padded[:m] = a
    padded[m:] = rng.standard_normal((64 - m, k)) if fill == "random" else fill
    ref = run(gemm, bf16_bits(a), bf16_bits(w), m, n, k)
    assert np.array_equal(run(gemm, bf16_bits(bf16_values(padded)), bf16_bits(w), m, n, k), ref)
