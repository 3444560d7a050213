"""The hand-written PTX baselines compute what they claim: each runs on the GPU with the
arguments and grid of the Ember kernel whose signature it copies, on fresh random inputs,
against the f64 reference (the DP4A one against the Q8_1 emulation), within f32 rounding;
and Ember's kernel agrees with the same reference in the same run."""

import numpy as np
import pytest

from bench.hand_ptx import HAND, load_pair
from ember.reference import q4k as R
from ember.reference.rmsnorm import rmsnorm
from tests.kernels.test_q4k_in_sim import f32_tolerance

pytestmark = pytest.mark.gpu


def pair(fname):
    from ember.runtime import cuda
    return load_pair(fname, cuda.context().arch)


def test_every_baseline_is_run_here():
    assert set(HAND) == {"rmsnorm_f32_4096.ptx", "q4k_gemv_m1.ptx", "q4k_q8_gemv_m1.ptx", "rmsnorm_q4k_4096.ptx",
                         "gemm_f32.ptx", "gemm_bf16.ptx", "gemm_wgmma.ptx"}


def test_rmsnorm_hand():
    rng = np.random.default_rng(81)
    rows = 5
    x = (rng.standard_normal((rows, 4096)) * rng.uniform(0.1, 10, (rows, 1))).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 4096).astype(np.float32)
    ref = rmsnorm(x, gamma, 1e-6)
    for kernel in pair("rmsnorm_f32_4096.ptx"):
        y = np.zeros_like(x)
        kernel(x, gamma, y, 1e-6, grid=rows)
        np.testing.assert_allclose(y, ref, rtol=4e-6, atol=1e-6)


@pytest.mark.parametrize("n, k", [(37, 1280), (64, 4096)])
def test_q4k_gemv_hand(n, k):
    rng = np.random.default_rng(n + k)
    w = R.random_q4k(rng, n, k)
    x = (rng.standard_normal((1, k)) * 3).astype(np.float32)
    for kernel in pair("q4k_gemv_m1.ptx"):
        y = np.zeros((1, n), np.float32)
        kernel(w.view(np.uint32), x, y, n, k, grid=(n + 3) // 4)
        assert (np.abs(y - R.gemv(w, x)) <= f32_tolerance(w, x)).all()


@pytest.mark.parametrize("n, k", [(37, 1280), (64, 4096)])
def test_q4k_q8_gemv_hand(n, k):
    rng = np.random.default_rng(2 * n + k)
    w = R.random_q4k(rng, n, k)
    x = (rng.standard_normal((1, k)) * rng.uniform(0.1, 10)).astype(np.float32)
    q8 = R.quantize_q8_1(x)
    aq, ads = R.split_q8_1(q8)
    ref = R.gemv_q8_1(w, q8)
    for kernel in pair("q4k_q8_gemv_m1.ptx"):
        y = np.zeros((1, n), np.float32)
        kernel(w.view(np.uint32), aq, ads, y, n, k, grid=(n + 3) // 4)
        assert (np.abs(y - ref) <= f32_tolerance(w, R.dequantize_q8_1(q8))).all()


@pytest.mark.parametrize("n", [29, 64])
def test_rmsnorm_q4k_hand(n):
    rng = np.random.default_rng(n)
    w = R.random_q4k(rng, n, 4096)
    x = (rng.standard_normal(4096) * 4).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 4096).astype(np.float32)
    normed = rmsnorm(x[None], gamma, 1e-6)
    ref = R.gemv(w, normed)[0]
    for kernel in pair("rmsnorm_q4k_4096.ptx"):
        y = np.zeros(n, np.float32)
        kernel(x, gamma, w.view(np.uint32), y, n, 1e-6, grid=(n + 7) // 8)
        assert (np.abs(y - ref) <= 4 * f32_tolerance(w, normed)[0]).all()


@pytest.mark.parametrize("m, n, k", [(1000, 1030, 516), (130, 260, 4), (70, 9, 12)])
def test_gemm_f32_hand(m, n, k):
    """The SIMT f32 GEMM by hand: partial tiles in M and N, K a multiple of 4 but not of the
    8-column step; bit for bit Ember's kernel (the same fma chains in
    the same order), and within f32 rounding of f64."""
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    ref = a.astype(np.float64) @ w.astype(np.float64).T
    outs = []
    for kernel in pair("gemm_f32.ptx"):
        c = np.full((m, n), np.nan, np.float32)
        kernel(a, w, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
        outs.append(c)
        assert np.abs(c - ref).max() <= 1e-6 * np.abs(ref).max() * np.sqrt(k)
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("m, n, k", [(1000, 1030, 520), (130, 260, 8), (4096, 4096, 4096)])
def test_gemm_bf16_hand(m, n, k):
    """The tensor-core bf16 GEMM by hand: partial tiles in M, N and K (a multiple of 8, not of
    the 64-deep tile); bit for bit Ember's kernel (the same mma sequence per piece in the same
    K order), within f32 rounding of f64 (bf16 products are exact in f32), and nothing
    written past c's rows and columns."""
    _gemm_pair("gemm_bf16.ptx", m, n, k, ((n + 127) // 128, (m + 127) // 128))


def _gemm_pair(fname: str, m: int, n: int, k: int, grid) -> None:
    """The hand GEMM and Ember's on the same bf16 inputs: each within f32 rounding of f64,
    nothing written past c's rows, and the two bit for bit the same."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    ref = a.double() @ w.double().t()
    outs = []
    for kernel in pair(fname):
        c = torch.full((m + 1, n), float("nan"), device="cuda")
        kernel(a, w, c, m, n, k, grid=grid)
        assert torch.isnan(c[m]).all()                      # the row past M is untouched
        c = c[:m]
        outs.append(c)
        assert float((c.double() - ref).abs().max() / ref.abs().max()) < 1e-5
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize("m, n, k", [(4096, 4096, 4096), (300, 1000, 4104), (1, 256, 64)])
def test_gemm_wgmma_hand(m, n, k):
    """The Hopper GEMM by hand (wgmma + TMA, warp-specialised, persistent): partial tiles in M,
    N and K; bit for bit Ember's kernel (the same wgmma chain per output in the same K
    order), within f32 rounding of f64, and nothing written past c's rows."""
    import torch
    from ember.runtime import cuda
    if cuda.context().arch != "sm_90":
        pytest.skip("wgmma needs an sm_90 GPU (Hopper)")
    sms = torch.cuda.get_device_properties(cuda.context().ordinal).multi_processor_count
    _gemm_pair("gemm_wgmma.ptx", m, n, k, (min(sms, -(-m // 128) * -(-n // 256)),))
