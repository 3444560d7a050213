"""kernels_src/gemm_wgmma.ember (wgmma + TMA, warp-specialised, persistent) in the simulator
with every check on: the f64 reference, and the batch-invariance contract at CI sizes - a
row's output is bitwise the same for every M, every chunking of the batch and whatever
the other rows hold; K a multiple of 64 or not (TMA's zeros past K). The simulator runs
the producer and the consumer warpgroups concurrently, TMA in the tiles' swizzle order
and wgmma from the descriptors; tests/gpu/test_gemm_wgmma_gpu.py runs the same contract on
an H100 at real sizes."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference.gemm import bf16_bits, bf16_values, linear
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_wgmma.ember"


@pytest.fixture(scope="module")
def gemm():
    """A small configuration (64-column tiles, 2 stages) so that every path runs quickly."""
    return load(ember.compile(SRC, arch="sm_90a", defines={"BN": 64, "STAGES": 2}, cache=False)).gemm_wgmma


def run(gemm, a, w, blocks: int = 2):
    m, k = a.shape
    n = w.shape[0]
    c = np.full(m * n, np.nan, np.float32)
    tiles = -(-m // 128) * -(-n // 64)
    gemm(bf16_bits(a), bf16_bits(w), c, m, n, k, grid=(min(blocks, tiles),))
    return c.reshape(m, n)


@pytest.mark.parametrize("m, n, k", [(130, 72, 200), (5, 136, 64)])
def test_matches_the_f64_reference(gemm, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    ref = linear(a, w)
    got = run(gemm, a, w)
    assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(k)


@pytest.mark.parametrize("k", [128, 72])          # whole 64-wide slices, and a tail of zeros
def test_rows_do_not_depend_on_the_batch(gemm, k):
    rows, n = 140, 72
    rng = np.random.default_rng(k)
    a, w = bf16_values(rng.standard_normal((rows, k))), bf16_values(rng.standard_normal((n, k)))
    full = run(gemm, a, w)
    for m in (1, 9, 128):                          # every M gives the same rows, bit for bit
        assert np.array_equal(run(gemm, a[:m], w), full[:m])
    parts = [run(gemm, a[s:e], w, blocks=1) for s, e in ((0, 37), (37, rows))]   # chunks, one block
    assert np.array_equal(np.concatenate(parts), full)


def test_other_rows_do_not_change_a_row(gemm):
    m, n, k = 3, 64, 64
    rng = np.random.default_rng(3)
    a, w = bf16_values(rng.standard_normal((m, k))), bf16_values(rng.standard_normal((n, k)))
    ref = run(gemm, a, w)
    crowd = np.vstack([a, np.full((60, k), np.inf), bf16_values(rng.standard_normal((65, k)))])
    assert np.array_equal(run(gemm, crowd, w)[:m], ref)
