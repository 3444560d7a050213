"""kernels_src/gemm_bf16.ember on the GPU at real sizes: parity with f64, and seed 004's
batch-invariance battery - rows bitwise equal for every M from 1 to 4096 (tile multiples
and not), for chunked batches, and whatever the rows past M hold; K a power of two or not.
The same battery run on cuBLAS (torch.mm) is reported beside it, not asserted."""

from pathlib import Path

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.gpu
SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_bf16.ember"
MS = [1, 2, 7, 16, 63, 64, 65, 100, 128, 1000, 2048, 4095]


@pytest.fixture(scope="module")
def gemm():
    import torch
    from ember.runtime import cuda
    mod = cuda.load(ember.compile(SRC, arch=cuda.context().arch, cache=False))

    def run(a, w):
        m, k = a.shape
        n = w.shape[0]
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        mod.gemm_bf16(a, w, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
        return c
    return run


def _battery(run, a, w) -> dict:
    """Which invariance properties hold for `run` (a function of a, w)."""
    import torch
    full = run(a, w)
    out = {"every_m": all(torch.equal(run(a[:m].contiguous(), w), full[:m]) for m in MS)}
    cuts = [(0, 1000), (1000, 1001), (1001, 4096)]
    out["chunks"] = torch.equal(torch.cat([run(a[s:e].contiguous(), w) for s, e in cuts]), full)
    pad = a.clone()
    pad[5:64] = float("nan")
    out["padding"] = torch.equal(run(pad[:5].contiguous(), w), full[:5])
    out["run_to_run"] = torch.equal(run(a, w), full)
    return out


@pytest.mark.parametrize("n, k", [(4096, 4096), (1024, 4104)])
def test_batch_invariance_at_real_sizes(gemm, n, k):
    import torch
    g = torch.Generator(device="cuda").manual_seed(n + k)
    a = torch.randn(4096, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    ours = _battery(gemm, a, w)
    cublas = _battery(lambda x, y: torch.mm(x, y.t()).float(), a, w)
    print(f"\nN={n} K={k}: ember {ours}; cuBLAS {cublas}")
    assert all(ours.values()), ours
    ref = a[:64].double() @ w.double().t()
    err = float((gemm(a[:64].contiguous(), w).double() - ref).abs().max() / ref.abs().max())
    assert err < 1e-5
