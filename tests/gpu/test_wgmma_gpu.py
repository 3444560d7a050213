"""wgmma on the GPU (sm_90a) computes what the simulator computes, bit for bit, and the f64
reference (small integers: exact): every swizzle (32, 64, 128 bytes), bf16 and f16, N from
8 to 256, one and two warpgroups, A from shared tiles and from registers. The tiles are
filled by ordinary stores in the language's XOR order and read by the tensor cores through
the descriptor the compiler builds: agreeing here shows the three agree."""

import numpy as np
import pytest

import ember
from tests.sim import wgmma_programs as W

pytestmark = pytest.mark.gpu

CASES = [(128, "bf16", 64, 1, False, False), (128, "bf16", 256, 2, False, True), (64, "bf16", 128, 1, False, False),
         (32, "f16", 16, 1, False, True), (64, "f16", 8, 2, False, False), (128, "bf16", 40, 1, True, False),
         (32, "bf16", 200, 2, True, True), (128, "f16", 96, 1, True, False)]


def _hopper():
    from ember.runtime import cuda
    if cuda.context().arch not in ("sm_90", "sm_90a"):
        pytest.skip("wgmma needs an sm_90 GPU (Hopper)")


@pytest.mark.parametrize("swizzle,t,n,groups,registers,copies", CASES)
def test_wgmma_matches_simulator_and_reference(swizzle, t, n, groups, registers, copies):
    _hopper()
    prog = ember.compile(W.source(swizzle, t, n, groups, registers, copies=copies), arch="sm_90a", cache=False)
    a, b = W.inputs(t, n, groups, seed=n + groups)
    gpu = W.run(prog, a, b, n, device="cuda")
    sim = W.run(prog, a, b, n, device="sim")
    assert np.array_equal(gpu.view(np.uint32), sim.view(np.uint32))
    assert np.array_equal(gpu, W.reference(a, b))


TRANSPOSED = [(128, "bf16", 64, 1, False, True), (128, "bf16", 256, 2, True, True), (64, "f16", 96, 1, False, True),
              (32, "bf16", 40, 2, True, True), (128, "bf16", 200, 2, False, True), (64, "bf16", 128, 1, True, False),
              (0, "bf16", 64, 1, False, False), (0, "f16", 256, 2, True, True), (0, "bf16", 40, 1, False, True),
              (0, "bf16", 96, 2, True, False)]     # swizzle 0: no swizzle, the ISA's interleaved core matrices


@pytest.mark.parametrize("swizzle,t,n,groups,a_mn,b_mn", TRANSPOSED)
def test_transposed_operands_match_simulator_and_reference(swizzle, t, n, groups, a_mn, b_mn):
    """mn_major operands (tiles of blocks of M or N columns by K rows): the descriptors'
    LBO between blocks and the transpose flags as the hardware reads them."""
    _hopper()
    prog = ember.compile(W.source(swizzle, t, n, groups, a_mn=a_mn, b_mn=b_mn), arch="sm_90a", cache=False)
    a, b = W.inputs(t, n, groups, seed=n + 3 * groups)
    gpu = W.run(prog, a, b, n, device="cuda")
    assert np.array_equal(gpu.view(np.uint32), W.run(prog, a, b, n, device="sim").view(np.uint32))
    assert np.array_equal(gpu, W.reference(a, b))


@pytest.mark.parametrize("b_mn", [False, True])
def test_registers_with_an_unswizzled_b(b_mn):
    _hopper()
    prog = ember.compile(W.source(0, "bf16", 72, 1, True, b_mn=b_mn), arch="sm_90a", cache=False)
    a, b = W.inputs("bf16", 72, 1, seed=10 + b_mn)
    gpu = W.run(prog, a, b, 72, device="cuda")
    assert np.array_equal(gpu.view(np.uint32), W.run(prog, a, b, 72, device="sim").view(np.uint32))
    assert np.array_equal(gpu, W.reference(a, b))


def test_registers_with_a_transposed_b():
    _hopper()
    prog = ember.compile(W.source(128, "bf16", 136, 2, True, b_mn=True), arch="sm_90a", cache=False)
    a, b = W.inputs("bf16", 136, 2, seed=9)
    gpu = W.run(prog, a, b, 136, device="cuda")
    assert np.array_equal(gpu.view(np.uint32), W.run(prog, a, b, 136, device="sim").view(np.uint32))
    assert np.array_equal(gpu, W.reference(a, b))


def test_copies_and_ldmatrix_on_swizzled_tiles():
    _hopper()
    prog = ember.compile(W.COPIES, arch="sm_90", cache=False)
    x = np.random.default_rng(3).integers(0, 65536, 512).astype(np.uint16)
    outs = {}
    for device in ("cuda", "sim"):
        out = np.zeros(1024 + 512, np.uint16)
        ember.runtime.load(prog, device=device).k(x, out, grid=1)
        outs[device] = out
    assert np.array_equal(outs["cuda"], outs["sim"])
    assert np.array_equal(outs["cuda"][:512], x) and np.array_equal(outs["cuda"][512:1024], x)
