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


def _kernel(defines):
    import torch
    from ember.runtime import cuda
    mod = cuda.load(ember.compile(SRC, arch=cuda.context().arch, defines=defines, cache=False))

    def run(a, w, shape=None):
        """c = a w^T for the forward defaults; other products give (m, n, k)."""
        m, n, k = shape or (a.shape[0], w.shape[0], a.shape[1])
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16 if defines.get("O") == "bf16" else torch.float32)
        mod.gemm_bf16(a, w, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
        return c
    return run


@pytest.fixture(scope="module")
def gemm():
    return _kernel({})


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


def check_battery(run, n: int, k: int, name: str) -> tuple:
    """The battery on `run` for a 4096-row a and w [n, k], cuBLAS's beside it (printed);
    returns (a, w)."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(n + k)
    a = torch.randn(4096, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    ours = _battery(run, a, w)
    cublas = _battery(lambda x, y: torch.mm(x, y.t()).float(), a, w)
    print(f"\nN={n} K={k}: {name} {ours}; cuBLAS {cublas}")
    assert all(ours.values()), ours
    return a, w


@pytest.mark.parametrize("n, k", [(4096, 4096), (1024, 4104)])
def test_batch_invariance_at_real_sizes(gemm, n, k):
    a, w = check_battery(gemm, n, k, "ember")
    ref = a[:64].double() @ w.double().t()
    err = float((gemm(a[:64].contiguous(), w).double() - ref).abs().max() / ref.abs().max())
    assert err < 1e-5


def test_backward_at_real_sizes():
    """dx = dy w (rows batch invariant) and dw = dy^T x (run to run, zero rows), against f64."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(3)
    m, n, k = 4096, 4096, 4096
    x = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    dy = torch.randn(m, n, device="cuda", generator=g).to(torch.bfloat16)
    dx_k, dw_k = _kernel({"B_T": True}), _kernel({"A_T": True, "B_T": True})
    dx = dx_k(dy, w, (m, k, n))                     # a = dy [M, N]; b = w, stored [N, K]
    ref = dy[:64].double() @ w.double()
    assert float((dx[:64].double() - ref).abs().max() / ref.abs().max()) < 1e-5
    assert all(torch.equal(dx_k(dy[:r].contiguous(), w, (r, k, n)), dx[:r]) for r in (1, 100, 4095))
    dw = dw_k(dy, x, (n, k, m))                     # a = dy stored [M, N]; b = x stored [M, K]
    ref = dy.double().t()[:64] @ x.double()
    assert float((dw[:64].double() - ref).abs().max() / ref.abs().max()) < 1e-5
    assert torch.equal(dw_k(dy, x, (n, k, m)), dw)

    def pad(t):
        return torch.cat([t, torch.zeros(200, t.shape[1], device="cuda", dtype=t.dtype)])
    assert torch.equal(dw_k(pad(dy), pad(x), (n, k, m + 200)), dw)


def test_bf16_output_is_the_f32_result_rounded_once(gemm):
    import torch
    g = torch.Generator(device="cuda").manual_seed(9)
    a = torch.randn(1000, 1032, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(520, 1032, device="cuda", generator=g).to(torch.bfloat16)
    c = _kernel({"O": "bf16"})(a, w)
    assert c.dtype == torch.bfloat16
    assert torch.equal(c, gemm(a, w).to(torch.bfloat16))       # torch rounds to nearest even



@pytest.mark.parametrize("extra", [{}, {"B_T": True}, {"A_T": True, "B_T": True}])
def test_swizzled_tiles_give_the_padded_tiles_bits(extra):
    """The default XOR-swizzled shared tiles (three stages: 96 KB of dynamic shared memory)
    and padded ones (SWIZZLE = false, two stages) compute the same mma sequence: the same bits."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(13)
    m, n, k = 1000, 520, 1032
    dims = {(): ((m, k), (n, k)), ("B_T",): ((m, k), (k, n)), ("A_T", "B_T"): ((k, m), (k, n))}[tuple(sorted(extra))]
    a = torch.randn(*dims[0], device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(*dims[1], device="cuda", generator=g).to(torch.bfloat16)
    plain = _kernel(dict(extra, SWIZZLE=False, STAGES=2))(a, b, (m, n, k))
    swizzled = _kernel(dict(extra))(a, b, (m, n, k))
    assert torch.equal(plain, swizzled)

def test_simt_f32_gemm_against_f64_and_the_simulator():
    import torch
    from ember.runtime import cuda
    from ember.runtime import load as load_on
    src = SRC.parent / "gemm_f32.ember"
    prog = ember.compile(src, arch=cuda.context().arch, cache=False)
    g = torch.Generator(device="cuda").manual_seed(11)
    m, n, k = 1000, 1030, 516
    a = torch.randn(m, k, device="cuda", generator=g)
    w = torch.randn(n, k, device="cuda", generator=g)
    c = torch.empty(m, n, device="cuda")
    load_on(prog).gemm_f32(a, w, c, m, n, k, grid=((n + 127) // 128, (m + 127) // 128))
    ref = a.double() @ w.double().t()
    assert float((c.double() - ref).abs().max() / ref.abs().max()) < 1e-5
    # bit for bit with the simulator on a slice (fma chains in the same order)
    small = np.zeros(3 * 20, np.float32)
    load_on(prog, device="sim").gemm_f32(a[:3].cpu().numpy().reshape(-1), w[:20].cpu().numpy().reshape(-1), small,
                                         3, 20, k, grid=(1, 1))
    gpu_small = torch.empty(3, 20, device="cuda")
    load_on(prog).gemm_f32(a[:3].contiguous(), w[:20].contiguous(), gpu_small, 3, 20, k, grid=(1, 1))
    assert np.array_equal(gpu_small.cpu().numpy().reshape(-1), small)


@pytest.mark.parametrize("extra", [{}, {"B_T": True}, {"A_T": True, "B_T": True}])
def test_cache_flags_change_no_bits(extra):
    """A_L1 and B_L1 choose only where the copied tiles are cached (cp.async.ca or cg): the
    same bits, so a caller may pick them by M and keep batch invariance."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(17)
    m, n, k = 1000, 520, 1032
    dims = {(): ((m, k), (n, k)), ("B_T",): ((m, k), (k, n)), ("A_T", "B_T"): ((k, m), (k, n))}[tuple(sorted(extra))]
    a = torch.randn(*dims[0], device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(*dims[1], device="cuda", generator=g).to(torch.bfloat16)
    want = _kernel(dict(extra))(a, b, (m, n, k))
    for flags in ({"A_L1": True}, {"B_L1": True}, {"A_L1": True, "B_L1": True}):
        assert torch.equal(_kernel(dict(extra, **flags))(a, b, (m, n, k)), want), flags
