"""Every kernel in kernels_src/ runs in the simulator (with all its checks: bounds, races,
barriers, shuffles) against its f64 reference, at sizes small enough for CI."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.ir import semantics as S
from ember.ir.types import SCALARS
from ember.reference.rmsnorm import rmsnorm as rmsnorm_ref
from ember.reference.rope import parity, rope as rope_ref
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src"


def test_every_kernel_file_is_covered():
    # gemm_bf16.ember, gemm_f32.ember, gemm_wgmma.ember: tests/kernels/test_gemm_*_in_sim.py
    # the Q4_K files: tests/kernels/test_q4k_in_sim.py (q4k_mma.ember: test_q4k_mma_in_sim.py,
    # q4k_imma.ember: test_q4k_imma_in_sim.py);
    # q6k_gemv.ember: test_q6k_in_sim.py (q6k_dp4a.ember: test_q6k_dp4a_in_sim.py, q6k_imma.ember:
    # test_q6k_imma_in_sim.py); decode_attention.ember, decode_attention_mma.ember: test_decode_attention.py
    assert sorted(p.name for p in SRC.glob("*.ember")) == ["decode_attention.ember", "decode_attention_mma.ember",
                                                          "gemm_bf16.ember", "gemm_f32.ember", "gemm_wgmma.ember",
                                                          "q4k_digits.ember", "q4k_digits_swiglu.ember",
                                                          "q4k_dp4a.ember", "q4k_dp4a_smem.ember", "q4k_gemv.ember",
                                                          "q4k_gemv_smem.ember", "q4k_imma.ember", "q4k_mma.ember",
                                                          "q6k_dp4a.ember", "q6k_gemv.ember", "q6k_imma.ember",
                                                          "rmsnorm.ember", "rmsnorm_q4k.ember", "rmsnorm_q8.ember",
                                                          "rope.ember", "rope_append.ember"]


@pytest.mark.parametrize("neox", [False, True])
@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("fast, pairs", [(False, 1), (True, 1), (False, 2), (False, 4)])
def test_rope_in_sim(neox, backward, fast, pairs):
    """Every form, with one pair or several (PAIRS: 2 and 4 neighbouring pairs a thread)."""
    rng = np.random.default_rng(5 + neox + 2 * backward + 4 * fast + 8 * pairs)
    tokens, heads, head_dim, hpt = 3, 6, 64, 4
    x = rng.standard_normal((tokens, heads, head_dim)).astype(np.float32)
    pos = np.array([0, 17, 32767], dtype=np.int32)
    ref = rope_ref(x, pos, 1e6, neox=neox, backward=backward)
    mod = load(ember.compile(SRC / "rope.ember", defines={"HEAD_DIM": head_dim, "NEOX": neox, "PAIRS": pairs,
                                                          "BACKWARD": backward, "FAST": fast}))
    grid = ((heads + hpt - 1) // hpt, tokens)
    y = np.zeros_like(x)
    mod.rope_out(x, y, pos, heads, 1e6, grid=grid)
    inplace = x.copy()
    mod.rope(inplace, pos, heads, 1e6, grid=grid)
    np.testing.assert_array_equal(inplace, y)
    p = parity(y, ref)
    # FAST computes the angle in f32: ~1e-3 rad off at position 32767 (documented)
    assert p["max_abs_diff"] <= (5e-2 if fast else 1e-5) and p["cosine"] > 0.99999, p


def _io(t: str, a: np.ndarray) -> np.ndarray:
    """f64 values -> the kernel's buffer type (bf16 as raw uint16 bits)."""
    if t == "bf16":
        return S.to_bits(S.round_bf16(a.astype(np.float32)), SCALARS["bf16"]).astype(np.uint16)
    return a.astype({"f32": np.float32, "f16": np.float16}[t])


def _values(t: str, a: np.ndarray) -> np.ndarray:
    if t == "bf16":
        return S.from_bits(a.astype(np.uint64), SCALARS["bf16"]).astype(np.float64)
    return a.astype(np.float64)


@pytest.mark.parametrize("t, tol", [("f32", 2e-6), ("f16", 2 ** -10), ("bf16", 2 ** -7)])
@pytest.mark.parametrize("cols", [96, 1000])
def test_rmsnorm_in_sim(t, tol, cols):
    rng = np.random.default_rng(cols)
    rows, eps = 5, 1e-6
    x = _io(t, rng.standard_normal((rows, cols)) * rng.uniform(0.01, 30, (rows, 1)))
    gamma = _io(t, rng.uniform(0.5, 1.5, cols))
    y = np.zeros_like(x)
    load(ember.compile(SRC / "rmsnorm.ember", defines={"BLOCK": 128, "T": t})).rmsnorm(
        x, gamma, y, cols, eps, grid=rows)
    ref = rmsnorm_ref(_values(t, x), _values(t, gamma), eps)
    err = np.abs(_values(t, y) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() <= tol, err.max()


@pytest.mark.parametrize("t, tol", [("f16", 2 ** -10), ("bf16", 2 ** -7)])
@pytest.mark.parametrize("neox", [False, True])
@pytest.mark.parametrize("pairs", [1, 4])
def test_rope_half_precision_io_in_sim(t, tol, neox, pairs):
    """f16/bf16 data, f32/f64 math, one rounding to T at the end."""
    rng = np.random.default_rng(11 + neox + 2 * pairs)
    tokens, heads, head_dim = 3, 4, 64
    x = _io(t, rng.standard_normal((tokens, heads, head_dim)))
    pos = np.array([0, 999, 32767], dtype=np.int32)
    ref = rope_ref(_values(t, x), pos, 1e6, neox=neox)
    prog = ember.compile(SRC / "rope.ember", defines={"HEAD_DIM": head_dim, "NEOX": neox, "T": t, "PAIRS": pairs})
    y = np.zeros_like(x)
    load(prog).rope_out(x, y, pos, heads, 1e6, grid=(1, tokens))
    err = np.abs(_values(t, y) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() <= tol, err.max()


@pytest.mark.parametrize("t, tol, vec", [("f32", 2e-6, 4), ("f16", 2 ** -10, 4), ("bf16", 2 ** -7, 4),
                                         ("bf16", 2 ** -7, 8), ("f16", 2 ** -10, 8)])
@pytest.mark.parametrize("cols, block", [(1000, 64), (256, 32)])
def test_rmsnorm_rows_in_sim(t, tol, vec, cols, block):
    """The row-in-registers form; 1000 columns leave the last chunk round partly empty."""
    rng = np.random.default_rng(cols + block)
    rows, eps = 3, 1e-5
    x = _io(t, rng.standard_normal((rows, cols)) * rng.uniform(0.01, 30, (rows, 1)))
    r = _io(t, rng.standard_normal((rows, cols)))
    gamma = _io(t, rng.uniform(0.5, 1.5, cols))
    mod = load(ember.compile(SRC / "rmsnorm.ember", defines={"BLOCK": block, "T": t, "COLS": cols, "VEC": vec},
                             kernels=["rmsnorm_rows", "add_rmsnorm_rows"]))
    y = np.zeros_like(x)
    mod.rmsnorm_rows(x, gamma, y, eps, grid=rows)
    ref = rmsnorm_ref(_values(t, x), _values(t, gamma), eps)
    err = np.abs(_values(t, y) - ref) / np.maximum(np.abs(ref), 1.0)
    assert err.max() <= tol, err.max()
    h = r.copy()
    y2 = np.zeros_like(x)
    mod.add_rmsnorm_rows(x, h, gamma, y2, eps, grid=rows)
    h_ref = _values(t, _io(t, _values(t, x) + _values(t, r)))      # the sum, rounded to T once
    np.testing.assert_array_equal(_values(t, h), h_ref)
    ref2 = rmsnorm_ref(h_ref, _values(t, gamma), eps)
    err = np.abs(_values(t, y2) - ref2) / np.maximum(np.abs(ref2), 1.0)
    assert err.max() <= tol, err.max()


@pytest.mark.parametrize("cols, block", [(512, 128), (1024, 256)])
def test_add_rmsnorm_q8_in_sim(cols, block):
    """The residual add written back exactly (h = x + r in f32), and the normalised row as
    Q8_1 activations: each block's d = amax / 127 of the f64 reference's row (to f16), the
    quants within half a step of y / d (plus the f32 rounding), their sums exact."""
    from ember.reference import q4k as R
    rng = np.random.default_rng(cols)
    rows, eps = 3, 1e-5
    x, r = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    x[1] *= 50.0                                              # rows of different scales
    gamma = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    h_want = x + r
    mod = load(ember.compile(SRC / "rmsnorm_q8.ember", defines={"COLS": cols, "BLOCK": block}))
    aq, ads = np.zeros(rows * cols // 4, np.uint32), np.zeros(rows * cols // 32, np.uint32)
    mod.add_rmsnorm_q8(x, r, gamma, aq, ads, eps, grid=rows)
    np.testing.assert_array_equal(r, h_want)
    y = rmsnorm_ref(h_want.astype(np.float64), gamma.astype(np.float64), eps)
    q, d, sums = R.unsplit_q8_1(aq, ads, rows, cols)
    np.testing.assert_array_equal(sums, q.reshape(rows, -1, 32).sum(axis=-1))
    amax = np.abs(y.reshape(rows, -1, 32)).max(axis=-1)
    assert np.abs(d / (amax / 127) - 1).max() <= 2 ** -10
    err = np.abs(q * np.repeat(d, 32, axis=1) - y)
    # half a step, and the quants' 127 steps of d rounded to f16 (d / 2^11 each)
    assert (err <= np.repeat(d, 32, axis=1) * (0.5 + 127 * 2 ** -11) + 1e-6 * np.abs(y)).all()
    # the same row shared among blocks (add_rmsnorm_q8_parts, the sum into another buffer):
    # the same sum and the same Q8_1 words, where each block reads the row in the same order
    r2 = (r - x).astype(np.float32)                            # r was overwritten by h above
    h_out = np.zeros_like(x)
    mod2 = load(ember.compile(SRC / "rmsnorm_q8.ember", defines={"COLS": cols, "PART": 128},
                              kernels=["add_rmsnorm_q8_parts"]))
    aq2, ads2 = np.zeros_like(aq), np.zeros_like(ads)
    mod2.add_rmsnorm_q8_parts(x, r2, h_out, gamma, aq2, ads2, eps, rows, grid=(cols // 128, rows))
    np.testing.assert_array_equal(h_out, x + r2)
    q2, d2, _ = R.unsplit_q8_1(aq2, ads2, rows, cols)
    assert np.abs(d2 / (amax / 127) - 1).max() <= 2 ** -10
    err2 = np.abs(q2 * np.repeat(d2, 32, axis=1) - rmsnorm_ref((x + r2).astype(np.float64), gamma, eps))
    assert (err2 <= np.repeat(d2, 32, axis=1) * (0.5 + 127 * 2 ** -11) + 1e-6 * np.abs(y)).all()


def test_add_rmsnorm_q8_parts_as_digits():
    """DIGITS: the normalised row as quantize_digits's three digit planes and (s, sum)
    pairs - each value within 2^-22 of its block's largest (plus the f32 arithmetic of the
    norm), the sums those of the values."""
    from ember.reference import q4k as R
    rng = np.random.default_rng(3)
    rows, cols, eps = 2, 512, 1e-5
    x, r = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    gamma = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    h = np.zeros_like(x)
    aq, ds = np.zeros(3 * rows * cols // 4, np.uint32), np.zeros(2 * rows * cols // 32, np.uint32)
    mod = load(ember.compile(SRC / "rmsnorm_q8.ember", defines={"COLS": cols, "PART": 128, "DIGITS": True},
                             kernels=["add_rmsnorm_q8_parts"]))
    mod.add_rmsnorm_q8_parts(x, r, h, gamma, aq, ds, eps, rows, grid=(cols // 128, rows))
    np.testing.assert_array_equal(h, x + r)
    y = rmsnorm_ref((x + r).astype(np.float64), gamma, eps)
    plane = rows * cols // 4
    digits = np.stack([R.unsplit_words(aq[p * plane:(p + 1) * plane], rows, cols) for p in range(3)])
    sd = ds.view(np.float32).reshape(rows, cols // 32, 2)
    xhat = R.dequantize_digits(digits, sd[..., 0])
    blockmax = np.repeat(np.abs(y.reshape(rows, -1, 32)).max(axis=-1), 32, axis=1)
    assert (np.abs(xhat - y) <= 2 ** -22 * blockmax + 2e-6 * np.abs(y)).all()
    assert np.abs(sd[..., 1] - y.reshape(rows, -1, 32).sum(axis=-1)).max() <= 1e-5 * np.abs(y).max()


@pytest.mark.parametrize("t, tol", [("f32", 1e-5), ("bf16", 2 ** -7)])
@pytest.mark.parametrize("neox", [False, True])
def test_rope_append_in_sim(t, tol, neox):
    """q rotated in place, k rotated into the cache and v copied there at each token's
    position; the rest of the caches untouched, a position past the cache not written."""
    from ember.reference.rope import rope_append
    rng = np.random.default_rng(21 + neox)
    batch, m, hq, hkv, d, cache_len = 2, 2, 4, 2, 32, 9
    q = _io(t, rng.standard_normal((batch * m, hq, d)))
    k = _io(t, rng.standard_normal((batch * m, hkv, d)))
    v = _io(t, rng.standard_normal((batch * m, hkv, d)))
    kc = _io(t, rng.standard_normal((batch, cache_len, hkv, d)))
    vc = _io(t, rng.standard_normal((batch, cache_len, hkv, d)))
    pos = np.array([3, 4, 8, 9], np.int32)                    # the last is past the cache
    want = rope_append(_values(t, q), _values(t, k), _values(t, v), _values(t, kc), _values(t, vc), pos, m, 1e4,
                       neox)
    prog = ember.compile(SRC / "rope_append.ember", defines={"HEAD_DIM": d, "NEOX": neox, "T": t})
    load(prog).rope_append(q, k, v, q, kc, vc, pos, hq, hkv, m, cache_len, hq * d, hkv * d, hkv * d, 1e4,
                           grid=(hq + hkv, batch * m))
    for got, ref in zip((q, kc, vc), want):
        assert np.abs(_values(t, got) - ref).max() <= tol * max(1.0, np.abs(ref).max())
    assert np.array_equal(_values(t, vc), want[2])            # v copied bit for bit, the rest untouched


def test_rope_append_from_a_fused_qkv_projection_into_a_bf16_cache():
    """A decoder layer's case: q, k and v read in place from one f32 projection [tokens,
    (HQ + 2 HKV) * D] (token strides, not dense rows), the rotated q written to its own f32
    buffer, k and v rounded into bf16 caches."""
    from ember.reference.rope import rope_append
    rng = np.random.default_rng(23)
    batch, m, hq, hkv, d, cache_len = 2, 1, 4, 2, 32, 5
    qkv = rng.standard_normal((batch * m, (hq + 2 * hkv) * d)).astype(np.float32)
    q, k, v = (qkv[:, a * d:b * d].reshape(batch * m, -1, d) for a, b in ((0, hq), (hq, hq + hkv),
                                                                         (hq + hkv, hq + 2 * hkv)))
    kc = _io("bf16", rng.standard_normal((batch, cache_len, hkv, d)))
    vc = _io("bf16", rng.standard_normal((batch, cache_len, hkv, d)))
    q_out = np.zeros((batch * m, hq, d), np.float32)
    pos = np.array([0, 4], np.int32)
    want = rope_append(q, k, v, _values("bf16", kc), _values("bf16", vc), pos, m, 5e5)
    before = qkv.copy()
    prog = ember.compile(SRC / "rope_append.ember", defines={"HEAD_DIM": d, "T": "bf16", "TI": "f32"})
    flat = qkv.reshape(-1)                                    # k and v: the same rows from their offsets
    load(prog).rope_append(qkv, flat[hq * d:], flat[(hq + hkv) * d:], q_out, kc, vc, pos, hq, hkv, m,
                           cache_len, qkv.shape[1], qkv.shape[1], qkv.shape[1], 5e5, grid=(hq + hkv, batch * m))
    assert np.array_equal(qkv, before)                        # the projection is only read
    assert np.abs(q_out - want[0]).max() <= 1e-5 * np.abs(want[0]).max()
    for got, ref in zip((kc, vc), want[1:]):
        assert np.abs(_values("bf16", got) - ref).max() <= 2 ** -8 * np.abs(ref).max()
