"""TMA on the GPU (sm_90): tensor maps encoded by the driver from numpy arrays (copied in
with their padded rows, and back) and torch tensors, boxes loaded into plain and swizzled
tiles (zeros outside the tensor), stored back (clipped), and fed to wgmma - the same
numbers as the simulator and the reference, bit for bit."""

import numpy as np
import pytest

import ember
from ember.abi import LaunchError
from tests.sim import tma_programs as P

pytestmark = pytest.mark.gpu

LOADS = [("bf16", 16, 64, 128, -3, 8), ("f32", 8, 8, 32, 2, -4), ("f32", 24, 16, 64, -20, 60),
         ("u8", 8, 16, 0, 1, 16), ("f16", 32, 32, 64, 5, 40), ("u8", 8, 32, 32, -1, -16)]


def _hopper():
    from ember.runtime import cuda
    if cuda.context().arch not in ("sm_90", "sm_90a"):
        pytest.skip("TMA needs an sm_90 GPU (Hopper)")


def _padded(t: str, seed: int):
    """A 40 x 70 tensor whose rows are padded to 80 elements (a strided view)."""
    import ml_dtypes
    dt = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "u8": np.uint8}[t]
    base = np.random.default_rng(seed).integers(0, 120, (40, 80))
    return base.astype(dt)[:, :70]


@pytest.mark.parametrize("t,rows,cols,swizzle,row0,col0", LOADS)
def test_tma_load_matches_simulator_and_reference(t, rows, cols, swizzle, row0, col0):
    _hopper()
    x = _padded(t, rows + cols)
    prog = ember.compile(P.load_source(t, rows, cols, swizzle, row0, col0), arch="sm_90", cache=False)
    outs = {}
    for device in ("cuda", "sim"):
        out = np.zeros(3 * rows * cols, x.dtype)
        ember.runtime.load(prog, device=device).k(x, out, grid=3)
        outs[device] = out.reshape(-1, cols)
    assert np.array_equal(outs["cuda"].view(np.uint8), outs["sim"].view(np.uint8))
    assert np.array_equal(outs["cuda"].astype(np.float64),
                          P.load_reference(x, 3, rows, cols, row0, col0).astype(np.float64))


def test_tma_load_from_torch_tensors():
    _hopper()
    torch = pytest.importorskip("torch")
    x = torch.arange(40 * 64, dtype=torch.float32, device="cuda").reshape(40, 64)
    out = torch.zeros(3 * 8 * 8, dtype=torch.float32, device="cuda")
    prog = ember.compile(P.load_source("f32", 8, 8, 32, 2, -4), arch="sm_90", cache=False)
    ember.runtime.load(prog).k(x, out, grid=3)
    torch.cuda.synchronize()
    want = P.load_reference(x.cpu().numpy(), 3, 8, 8, 2, -4)
    assert np.array_equal(out.cpu().numpy().reshape(-1, 8), want)


def test_tma_store_clips_to_the_tensor():
    _hopper()
    x = np.random.default_rng(1).standard_normal((40, 64)).astype(np.float32)
    prog = ember.compile(P.store_source(16, 32, 128), arch="sm_90", cache=False)
    ys = {}
    for device in ("cuda", "sim"):
        y = np.full((36, 68), -7, np.float32)
        ember.runtime.load(prog, device=device).k(x, y, grid=3)
        ys[device] = y
    assert np.array_equal(ys["cuda"], ys["sim"])
    assert np.array_equal(ys["cuda"], P.store_reference(x, np.full((36, 68), -7, np.float32), 3, 16, 32))


@pytest.mark.parametrize("n", [64, 128, 256])
def test_tma_fed_wgmma(n):
    _hopper()
    import ml_dtypes
    rng = np.random.default_rng(n)
    a = rng.integers(-4, 5, (128, 192)).astype(ml_dtypes.bfloat16)
    b = rng.integers(-4, 5, (2 * n, 192)).astype(ml_dtypes.bfloat16)
    prog = ember.compile(P.gemm_source(n), arch="sm_90a", cache=False)
    cs = {}
    for device in ("cuda", "sim"):
        c = np.zeros((128, 2 * n), np.float32)
        ember.runtime.load(prog, device=device).g(a, b, c, 2 * n, 3, grid=(2, 2))
        cs[device] = c
    assert np.array_equal(cs["cuda"], cs["sim"])
    assert np.array_equal(cs["cuda"], a.astype(np.float64) @ b.astype(np.float64).T)


def test_a_tensor_tma_cannot_address_is_refused_before_launch():
    _hopper()
    prog = ember.compile(P.load_source("bf16", 16, 64, 128, 0, 0), arch="sm_90", cache=False)
    x = _padded("bf16", 0).copy()          # 70 bf16 rows: 140 bytes apart
    with pytest.raises(LaunchError, match=r"`x` .*the stride of dimension 0 is 140 bytes"):
        ember.runtime.load(prog).k(x, np.zeros(16 * 64, x.dtype), grid=1)


def test_multicast_fills_every_block_of_the_cluster():
    _hopper()
    from tests.sim.test_tma import _multicast
    x, gpu = _multicast(P.MULTICAST, device="cuda")
    _, sim = _multicast(P.MULTICAST, device="sim")
    assert np.array_equal(gpu.view(np.uint16), sim.view(np.uint16))
    for b in range(4):
        assert np.array_equal(gpu[b].astype(np.float32), x[16 * (b // 2):16 * (b // 2) + 16].astype(np.float32))


def test_a_ring_a_cluster_fills_by_multicast_matches_the_simulator():
    """Remote arrives (mapa + mbarrier.arrive.release.cluster.shared::cluster) and cluster-scope
    waits (try_wait.acquire.cluster): the 2-block ring of std/pipeline's cluster functions, 12
    uses of 2 stages, gives what the simulator gives - x in both blocks."""
    _hopper()
    from tests.sim.test_tma import _multicast_ring
    x, gpu = _multicast_ring(P.MULTICAST_RING, uses=12, device="cuda")
    _, sim = _multicast_ring(P.MULTICAST_RING, uses=12, device="sim")
    assert np.array_equal(gpu.view(np.uint16), sim.view(np.uint16))
    for b in range(2):
        assert np.array_equal(gpu[b].astype(np.float32), x.astype(np.float32))
