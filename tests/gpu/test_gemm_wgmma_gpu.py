"""kernels_src/gemm_wgmma.ember on an H100 at real sizes: parity with f64, and the
batch-invariance battery of the mma.sync GEMM's test (tests/gpu/test_gemm_gpu.py) - rows
bitwise equal for every M from 1 to 4096 (every M at one shape, a list at the largest),
for chunked batches and whatever the rows past M hold, K a multiple of 64 or not, run to
run; the same battery run on cuBLAS is reported beside it, not asserted."""

from pathlib import Path

import pytest

import ember
from tests.gpu.test_gemm_gpu import check_battery

pytestmark = pytest.mark.gpu
SRC = Path(__file__).resolve().parents[2] / "kernels_src" / "gemm_wgmma.ember"


def _kernel(defines: dict):
    import torch
    from ember.runtime import cuda
    if cuda.context().arch != "sm_90":
        pytest.skip("gemm_wgmma needs an sm_90 GPU (Hopper)")
    mod = cuda.load(ember.compile(SRC, arch="sm_90a", defines=defines, cache=False))
    sms = torch.cuda.get_device_properties(cuda.context().ordinal).multi_processor_count

    def run(a, w, shape=None):
        """c = a w^T for the forward; the backward products give (m, n, k)."""
        m, n, k = shape or (a.shape[0], w.shape[0], a.shape[1])
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        mod.gemm_wgmma(a, w, c, m, n, k, grid=(min(sms, -(-m // 128) * -(-n // 256)),))
        return c
    return run


@pytest.fixture(scope="module")
def gemm():
    return _kernel({})


@pytest.mark.parametrize("m, n, k", [(4096, 4096, 4096), (300, 1000, 4104), (1, 256, 64)])
def test_matches_the_f64_reference(gemm, m, n, k):
    import torch
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    ref = a.double() @ w.double().t()
    got = gemm(a, w).double()
    assert float((got - ref).abs().max()) <= 1e-6 * float(ref.abs().max()) * k ** 0.5


@pytest.mark.parametrize("n, k", [(4096, 4096), (1024, 4104)])
def test_batch_invariance_at_real_sizes(gemm, n, k):
    check_battery(gemm, n, k, "ember wgmma")


def test_every_m_from_1_to_4096(gemm):
    import torch
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(4096, 200, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(256, 200, device="cuda", generator=g).to(torch.bfloat16)
    full = gemm(a, w)
    differ = [m for m in range(1, 4097) if not torch.equal(gemm(a[:m], w), full[:m])]
    assert differ == []


@pytest.mark.parametrize("m, n, k", [(4096, 4096, 4096), (300, 1000, 4104)])
def test_backward_products(m, n, k):
    """dx = dy w (w transposed for it) and dw = dy^T x (both transposed) against f64; dx's
    rows do not depend on the batch; dw is the same run to run and with zero rows added."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(m + k)
    x = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    dy = torch.randn(m, n, device="cuda", generator=g).to(torch.bfloat16)
    dx_k, dw_k = _kernel({"B_MN": True}), _kernel({"A_MN": True, "B_MN": True})
    dx, dw = dx_k(dy, w, (m, k, n)), dw_k(dy, x, (n, k, m))
    for got, ref, depth in ((dx, dy.double() @ w.double(), n), (dw, dy.double().t() @ x.double(), m)):
        assert float((got.double() - ref).abs().max()) <= 1e-6 * float(ref.abs().max()) * depth ** 0.5
    for rows in (1, 7, 129):
        assert torch.equal(dx_k(dy[:rows], w, (rows, k, n)), dx[:rows])
    assert torch.equal(dw_k(dy, x, (n, k, m)), dw)
    zeros = torch.zeros(40, n, device="cuda", dtype=torch.bfloat16), torch.zeros(40, k, device="cuda",
                                                                               dtype=torch.bfloat16)
    assert torch.equal(dw_k(torch.cat([dy, zeros[0]]), torch.cat([x, zeros[1]]), (n, k, m + 40)), dw)


@pytest.mark.parametrize("n", [1030, 1032])      # stores from registers; staged rows (BULK_STORE)
def test_bf16_output_is_the_f32_sum_rounded_once(gemm, n):
    import torch
    m, k = 1000, 520
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    from ember.runtime import cuda
    mod = cuda.load(ember.compile(SRC, arch="sm_90a", defines={"O": "bf16"}, cache=False))
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    sms = torch.cuda.get_device_properties(cuda.context().ordinal).multi_processor_count
    mod.gemm_wgmma(a, w, c, m, n, k, grid=(min(sms, -(-m // 128) * -(-n // 256)),))
    assert torch.equal(c, gemm(a, w).to(torch.bfloat16))


@pytest.mark.parametrize("m, n, k", [(16, 4096, 4096), (300, 1000, 4104)])
def test_tile_configurations_give_the_same_bits(gemm, m, n, k):
    """Every tile and ring (the decode configurations of bench/gemm_wgmma_decode.py too) sums
    each output in the same K order with the same instructions: the hardware's bits do not
    depend on the tile, as the simulator's model says."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(m + n)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    want = gemm(a, w)
    for d in ({"CONSUMERS": 1, "BN": 32, "STAGES": 8}, {"CONSUMERS": 1, "BN": 64, "STAGES": 12},
              {"CONSUMERS": 1, "BN": 8, "STAGES": 4}, {"BN": 128, "STAGES": 3}, {"BULK_STORE": True},
              {"PINGPONG": True, "BN": 128, "STAGES": 6}, {"PINGPONG": True, "BN": 128, "STAGES": 6, "BULK_STORE": True}):
        assert torch.equal(_kernel(d)(a, w), want), d


def test_ping_pong_backward_products_give_the_default_bits():
    """dx and dw with the ping-pong consumers (and the staged epilogue): the defaults' bits."""
    import torch
    m, n, k = 1000, 1024, 776
    g = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    dy = torch.randn(m, n, device="cuda", generator=g).to(torch.bfloat16)
    pp = {"PINGPONG": True, "BN": 128, "STAGES": 6, "BULK_STORE": True}
    for layout, a, b, shape in (({"B_MN": True}, dy, w, (m, k, n)), ({"A_MN": True, "B_MN": True}, dy, x, (n, k, m))):
        assert torch.equal(_kernel({**layout, **pp})(a, b, shape), _kernel(layout)(a, b, shape)), layout


@pytest.mark.parametrize("m, n, k", [(1, 4096, 4096), (13, 14336, 4096), (16, 4096, 14336), (40, 1000, 4104)])
def test_the_swapped_decode_call_gives_the_default_bits(gemm, m, n, k):
    """y^T = w x^T with C_T (the decode configuration of the kernel's header) stores y with
    the defaults' bits; so does SWAP from the forward's arguments."""
    import torch
    from ember.runtime import cuda
    g = torch.Generator(device="cuda").manual_seed(m * n)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    mod = cuda.load(ember.compile(SRC, arch="sm_90a", defines={"C_T": True, "CONSUMERS": 1, "BN": 16, "STAGES": 16},
                                  cache=False))
    y = torch.full((m, n), float("nan"), device="cuda")
    sms = torch.cuda.get_device_properties(cuda.context().ordinal).multi_processor_count
    mod.gemm_wgmma(w, a, y, n, m, k, grid=(min(sms, -(-n // 64) * -(-m // 16)),))
    want = gemm(a, w)
    assert torch.equal(y, want)
    # the same swap inside the kernel (SWAP), from the forward's own arguments
    mod = cuda.load(ember.compile(SRC, arch="sm_90a", defines={"SWAP": True, "CONSUMERS": 1, "BN": 16, "STAGES": 16},
                                  cache=False))
    y.fill_(float("nan"))
    mod.gemm_wgmma(a, w, y, m, n, k, grid=(min(sms, -(-n // 64) * -(-m // 16)),))
    assert torch.equal(y, want)
