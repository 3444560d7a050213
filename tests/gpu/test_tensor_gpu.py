"""Tensor-core ops on the GPU against the simulator: ldmatrix bit for bit (every count,
with and without .trans); mma.m16n8k16 (bf16 and f16) within the documented bound of the
simulator's exactly-summed result, for one product and for a 64-step accumulation (K =
1024), with random operands of mixed magnitudes. The measured differences are printed
(pytest -s) for docs/simulator.md."""

import numpy as np
import pytest

import ember
from ember.ir import semantics as S
from ember.ir.types import BF16, F16
from ember.runtime import load
from tests.sim.test_tensor_ops import LDMATRIX, TILES, ldmatrix_model

pytestmark = pytest.mark.gpu

CHAIN = """
kernel chain(a: *global T, b: *global T, c: *mut global f32, steps: u32) block(32) {
    let lane = thread_idx.x;
    let g = lane / 4;
    let t = lane % 4;
    var fa: [T; 8];
    var fb: [T; 4];
    var acc: [f32; 4];
    for i in 0..4u32 { acc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2]; }
    for s in 0..steps {
        for i in 0..8u32 { fa[i] = a[s * 256 + (g + 8 * ((i / 2) % 2)) * 16 + 2 * t + i % 2 + 8 * (i / 4)]; }
        for i in 0..4u32 { fb[i] = b[s * 128 + (2 * t + i % 2 + 8 * (i / 2)) * 8 + g]; }
        mma_m16n8k16(acc, 0u32, fa, 0u32, fb, 0u32);
    }
    for i in 0..4u32 { c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = acc[i]; }
}
"""


def _ulps(x: np.ndarray, y: np.ndarray, scale: np.ndarray) -> float:
    """|x - y| in units of the f32 ulp of `scale` (the magnitude of the terms summed)."""
    ulp = np.spacing(np.maximum(np.abs(scale), np.float32(1e-30)).astype(np.float32))
    return float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)) / ulp))


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches_bit_for_bit(n, trans):
    from ember.runtime import cuda
    m = np.random.default_rng(n).integers(0, 65535, 256).astype(np.uint16)
    prog = ember.compile(LDMATRIX, arch=cuda.context().arch, defines={"N": n, "TRANS": trans}, cache=False)
    out = np.zeros(256, np.uint16)
    load(prog).show(m, out, grid=1)
    np.testing.assert_array_equal(out, ldmatrix_model(m, n, trans))


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("steps", [1, 64])
def test_mma_within_the_documented_bound(t, steps):
    from ember.runtime import cuda
    ty = BF16 if t == "bf16" else F16
    rng = np.random.default_rng(steps)
    # mixed magnitudes: cancellation and alignment shifts, as a GEMM meets them
    a = S.round_to(rng.standard_normal(256 * steps) * np.exp2(rng.integers(-6, 7, 256 * steps)), ty)
    b = S.round_to(rng.standard_normal(128 * steps), ty)
    c = rng.standard_normal(128).astype(np.float32)
    buf = (lambda v: S.to_bits(v.astype(np.float32), ty).astype(np.uint16)) if t == "bf16" else \
        (lambda v: v.astype(np.float16))
    prog = ember.compile(CHAIN.replace("T", t), arch=cuda.context().arch, cache=False)
    gpu, sim = c.copy(), c.copy()
    load(prog).chain(buf(a), buf(b), gpu, steps, grid=1)
    load(prog, device="sim").chain(buf(a), buf(b), sim, steps, grid=1)
    # the scale of what was summed into each output: sum of |products| and |c|
    terms = np.abs(a.astype(np.float64).reshape(steps, 16, 16)) @ np.abs(b.astype(np.float64).reshape(steps, 16, 8))
    scale = terms.sum(axis=0).reshape(-1) + np.abs(c)
    ulps = _ulps(gpu, sim, scale)
    print(f"\nmma {t}, {steps} step(s): max |gpu - sim| = {ulps:.2f} ulp of sum |terms|")
    assert ulps <= steps           # documented: at most 1 ulp of the summed magnitude per mma


def test_tiles_match_the_simulator():
    from ember.runtime import cuda
    from tests.sim.test_tensor_ops import operands
    prog = ember.compile(TILES, arch=cuda.context().arch, cache=False)
    for kernel in ("by_hand", "by_ldmatrix"):
        a, b, c, want = operands("bf16", 3)
        load(prog).by_ldmatrix(a, b, c, grid=1) if kernel == "by_ldmatrix" else load(prog).by_hand(a, b, c, grid=1)
        assert np.abs(c - want.astype(np.float32)).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("k", [32, 16])
@pytest.mark.parametrize("ta, tb", [("u32", "i32"), ("i32", "i32"), ("u32", "u32"), ("i32", "u32")])
def test_mma_i8_matches_bit_for_bit(ta, tb, k):
    from ember.runtime import cuda
    from tests.sim.test_mma_i8 import BY_HAND, BY_HAND_K16, WORD, operands
    a, b, c = operands(ta, tb, 11, k=k)
    words = {"u32": np.uint32, "i32": np.int32}
    wa = np.ascontiguousarray(a.astype(WORD[ta])).view(words[ta])
    wb = np.ascontiguousarray(b.T.astype(WORD[tb])).view(words[tb])
    source = BY_HAND if k == 32 else BY_HAND_K16
    prog = ember.compile(source.replace("AT", ta).replace("BT", tb), arch=cuda.context().arch, cache=False)
    gpu, sim = c.reshape(-1).copy(), c.reshape(-1).copy()
    load(prog).by_hand(wa, wb, gpu, grid=1)
    load(prog, device="sim").by_hand(wa, wb, sim, grid=1)
    np.testing.assert_array_equal(gpu, sim)
    np.testing.assert_array_equal(gpu.reshape(16, 8), (a @ b + c).astype(np.int32))


def test_mma_i8_wraps_as_the_simulator():
    from ember.runtime import cuda
    from tests.sim.test_mma_i8 import BY_HAND
    wa = np.full(128, 0xFFFFFFFF, np.uint32)
    wb = np.full(64, 0xFFFFFFFF, np.uint32)
    prog = ember.compile(BY_HAND.replace("AT", "u32").replace("BT", "u32"), arch=cuda.context().arch, cache=False)
    gpu = np.full(128, 2 ** 31 - 1000, np.int32)
    sim = gpu.copy()
    load(prog).by_hand(wa, wb, gpu, grid=1)
    load(prog, device="sim").by_hand(wa, wb, sim, grid=1)
    np.testing.assert_array_equal(gpu, sim)
