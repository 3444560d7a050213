"""The Q4_K kernels in the simulator against f64 references built from the format
definitions: random scale bytes (every sub-block index 0-7, both nibbles), N not a multiple
of the rows per block, super-block counts that leave lanes idle; the DP4A path exactly
against a Q8_1 emulation."""

from pathlib import Path

import numpy as np
import pytest

import ember
from ember.reference import q4k as R
from ember.reference.rmsnorm import rmsnorm as rmsnorm_ref
from ember.sim import load

SRC = Path(__file__).resolve().parents[2] / "kernels_src"
WARPS = 4


def grid(rows: int, rows_per_warp: int = 1) -> int:
    return (rows + WARPS * rows_per_warp - 1) // (WARPS * rows_per_warp)


def dequantize_by_the_letter(block: bytes) -> list:
    """One super-block, element by element, straight from DESIGN.md section 6: an
    independent check of ember.reference.q4k."""
    d = float(np.frombuffer(block[0:2], np.float16)[0])
    dmin = float(np.frombuffer(block[2:4], np.float16)[0])
    q, qs = block[4:16], block[16:]
    out = [0.0] * 256
    for j in range(8):
        if j < 4:
            sc, m = q[j] & 63, q[j + 4] & 63
        else:
            sc, m = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)
        g, high = divmod(j, 2)
        for l in range(32):
            byte = qs[32 * g + l]
            nib = byte >> 4 if high else byte & 0xF
            out[64 * g + 32 * high + l] = d * sc * nib - dmin * m
    return out


def test_reference_dequantiser_matches_the_definition():
    rng = np.random.default_rng(0)
    blocks = R.random_q4k(rng, 3, 512)
    got = R.dequantize_q4k(blocks)
    for r in range(3):
        for b in range(2):
            raw = bytes(blocks[r, 144 * b:144 * (b + 1)])
            np.testing.assert_array_equal(got[r, 256 * b:256 * (b + 1)], dequantize_by_the_letter(raw))
    sc, m = R.scale_min(blocks.reshape(3, 2, 144)[..., 4:16])
    assert (sc[..., 4:] >= 16).any() and (m[..., 4:] >= 16).any()   # the high bits of j >= 4 in use


def f32_tolerance(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """f32 rounding of a K-term dot product: K * eps * sum |w x|."""
    mag = np.abs(np.asarray(x, np.float64)) @ np.abs(R.dequantize_q4k(w)).T
    return w.shape[1] // 144 * 256 * 2.0 ** -23 * mag + 1e-30


def inputs(seed: int, n: int, k: int, m: int):
    rng = np.random.default_rng(seed)
    w = R.random_q4k(rng, n, k)
    x = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10.0, (m, 1))).astype(np.float32)
    return rng, w, x


@pytest.mark.parametrize("m, n, k, rows, unroll", [(1, 7, 768, 1, 1), (3, 9, 256, 2, 2), (8, 5, 1280, 1, 4),
                                                   (1, 11, 512, 4, 1), (2, 6, 2560, 2, 4)])
def test_q4k_gemv_f32(m, n, k, rows, unroll):
    """N not a multiple of the WARPS * ROWS rows of a block: the last warp's extra rows
    are computed from row N - 1 and not stored (the simulator reports any access past y).
    UNROLL steps of loads at once: a lane's last steps past the super-blocks load the last
    one again and use nothing of it (5 and 10 super-blocks over 4 lanes' groups)."""
    _, w, x = inputs(m * 100 + n, n, k, m)
    mod = load(ember.compile(SRC / "q4k_gemv.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows,
                                                              "UNROLL": unroll}))
    y = np.zeros((m, n), np.float32)
    mod.q4k_gemv(w.view(np.uint32), x, y, n, k, grid=grid(n, rows))
    err = np.abs(y - R.gemv(w, x))
    assert (err <= f32_tolerance(w, x)).all(), err.max()


@pytest.mark.parametrize("m, n, k", [(1, 7, 768), (2, 9, 1280)])
def test_q4k_gemv_f32_staged_in_shared_memory(m, n, k):
    _, w, x = inputs(m * 1000 + n, n, k, m)
    mod = load(ember.compile(SRC / "q4k_gemv_smem.ember", defines={"M": m, "WARPS": WARPS, "K": k}))
    y = np.zeros((m, n), np.float32)
    mod.q4k_gemv_smem(w.view(np.uint32), x, y, n, grid=grid(n))
    err = np.abs(y - R.gemv(w, x))
    assert (err <= f32_tolerance(w, x)).all(), err.max()


@pytest.mark.parametrize("m, n, k, rows", [(1, 7, 768, 1), (4, 6, 512, 1), (8, 3, 256, 1), (2, 11, 512, 2),
                                           (1, 9, 768, 4)])
def test_q4k_dp4a_path_against_the_q8_1_emulation(m, n, k, rows):
    rng, w, x = inputs(m * 10 + n, n, k, m)
    x[0, :32] = 0.0                                   # an all-zero block: d = 0
    x[-1, 40] = 1e4                                   # one block dominated by one value
    mod = load(ember.compile(SRC / "q4k_dp4a.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows}))
    blocks = m * k // 32
    aq, ads = np.zeros(blocks * 8, np.uint32), np.zeros(blocks, np.uint32)
    mod.quantize_q8_1(x, aq, ads, blocks, grid=grid(blocks))
    want = R.quantize_q8_1(x)
    want_q, want_ds = R.split_q8_1(want)
    np.testing.assert_array_equal(aq, want_q)                                   # bit-exact
    np.testing.assert_array_equal(ads, want_ds)
    y = np.zeros((m, n), np.float32)
    mod.q4k_q8_gemv(w.view(np.uint32), aq, ads, y, n, k, grid=grid(n, rows))
    ref = R.gemv_q8_1(w, want)
    # integer parts are exact; what is left is the f32 combination of k / 32 partial sums
    assert (np.abs(y - ref) <= f32_tolerance(w, R.dequantize_q8_1(want))).all()
    # and Q8_1 is a close approximation of the f32 activations
    exact = R.gemv(w, x)
    assert np.abs(ref - exact).max() <= 0.02 * np.abs(exact).max()


@pytest.mark.parametrize("m, k, unroll, rows, n", [(1, 512, 1, 1, 6), (3, 512, 1, 1, 6), (2, 1280, 2, 1, 6),
                                                   (1, 2560, 4, 1, 6), (2, 1280, 2, 2, 7), (1, 512, 1, 2, 5)])
def test_q4k_swiglu(m, k, unroll, rows, n):
    """UNROLL steps of loads at once: 5 and 10 super-blocks leave a lane's last steps past
    the end (they load the last one again and use nothing of it); ROWS 2 over an odd n
    leaves the last warp a row past the end (loaded as row n - 1, not stored)."""
    rng, wg, x = inputs(77 + m, n, k, m)
    wu = R.random_q4k(rng, n, k)
    mod = load(ember.compile(SRC / "q4k_dp4a.ember", defines={"M": m, "WARPS": WARPS, "UNROLL": unroll, "ROWS": rows},
                             kernels=["q4k_q8_swiglu"]))
    q8 = R.quantize_q8_1(x)
    y = np.zeros((m, n), np.float32)                        # (the simulator reports a store past its end)
    mod.q4k_q8_swiglu(wg.view(np.uint32), wu.view(np.uint32), *R.split_q8_1(q8), y, n, k, grid=grid(n, rows))
    g, u = R.gemv_q8_1(wg, q8), R.gemv_q8_1(wu, q8)
    ref = g / (1.0 + np.exp(-g)) * u
    tol = 1e-5 * (np.abs(g) + 1) * (np.abs(u) + 1) + f32_tolerance(wg, R.dequantize_q8_1(q8)) * np.abs(u)
    assert (np.abs(y - ref) <= tol).all()


@pytest.mark.parametrize("n, k", [(7, 768), (9, 512)])
def test_rmsnorm_q4k_gemv(n, k):
    rng, w, x = inputs(n + k, n, k, 1)
    gamma = rng.uniform(0.5, 1.5, k).astype(np.float32)
    eps = 1e-6
    mod = load(ember.compile(SRC / "rmsnorm_q4k.ember", defines={"K": k, "WARPS": WARPS}))
    y = np.zeros(n, np.float32)
    mod.rmsnorm_q4k_gemv(x[0], gamma, w.view(np.uint32), y, n, eps, grid=grid(n))
    normed = rmsnorm_ref(x, gamma, eps)
    err = np.abs(y - R.gemv(w, normed)[0])
    assert (err <= 4 * f32_tolerance(w, normed)[0]).all(), err.max()


@pytest.mark.parametrize("m, n, k, rows", [(1, 7, 768, 1), (8, 5, 512, 2), (3, 11, 1280, 2)])
def test_q4k_dp4a_with_activations_in_shared_memory(m, n, k, rows):
    """q4k_dp4a_smem.ember: against the Q8_1 emulation, and bit for bit q4k_q8_gemv's result
    (the same sums in the same order; only where the activations are read from differs).
    N not a multiple of a block's rows; 5 super-blocks leave lane groups idle."""
    _, w, x = inputs(3000 + 10 * m + n, n, k, m)
    q8 = R.quantize_q8_1(x)
    aq, ads = R.split_q8_1(q8)
    staged = load(ember.compile(SRC / "q4k_dp4a_smem.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows, "K": k}))
    y = np.zeros((m, n), np.float32)
    staged.q4k_q8_gemv_smem(w.view(np.uint32), aq, ads, y, n, grid=grid(n, rows))
    assert (np.abs(y - R.gemv_q8_1(w, q8)) <= f32_tolerance(w, R.dequantize_q8_1(q8))).all()
    direct = load(ember.compile(SRC / "q4k_dp4a.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows, "UNROLL": 1}))
    y_direct = np.zeros((m, n), np.float32)
    direct.q4k_q8_gemv(w.view(np.uint32), aq, ads, y_direct, n, k, grid=grid(n, rows))
    np.testing.assert_array_equal(y, y_direct)


@pytest.mark.parametrize("unroll", [1, 4])
def test_q4k_dp4a_unroll_guards(unroll):
    """9 super-blocks: with 4 lane groups x UNROLL per step, some steps are partly empty."""
    m, n, k = 2, 5, 2304
    _, w, x = inputs(500 + unroll, n, k, m)
    mod = load(ember.compile(SRC / "q4k_dp4a.ember", defines={"M": m, "WARPS": WARPS, "UNROLL": unroll}))
    q8 = R.quantize_q8_1(x)
    y = np.zeros((m, n), np.float32)
    mod.q4k_q8_gemv(w.view(np.uint32), *R.split_q8_1(q8), y, n, k, grid=grid(n))
    assert (np.abs(y - R.gemv_q8_1(w, q8)) <= f32_tolerance(w, R.dequantize_q8_1(q8))).all()


@pytest.mark.parametrize("m, n, k, rows, unroll", [(1, 7, 768, 1, 1), (2, 9, 1280, 2, 2), (8, 5, 512, 1, 1),
                                                   (1, 11, 512, 4, 1), (1, 13, 256, 3, 1), (1, 10, 2560, 3, 2)])
def test_q4k_f32_activations_as_three_digits(m, n, k, rows, unroll):
    """q4k_digits.ember: the digits bit for bit the reference's (ember.reference.q4k.
    quantize_digits), each x within 2^-23 max|x| of its block, and y within the f32
    rounding bound of the f64 product with the f32 activations themselves."""
    _, w, x = inputs(6000 + 10 * m + n, n, k, m)
    x[0, :32] = 0.0                                   # an all-zero block: s = 0
    x[-1, 40] = 1e4                                   # one block dominated by one value
    x[-1, 41] = 3e-7
    mod = load(ember.compile(SRC / "q4k_digits.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows,
                                                                "UNROLL": unroll}))
    blocks = m * k // 32
    aq, ds = np.zeros(3 * blocks * 8, np.uint32), np.zeros(2 * blocks, np.float32)
    mod.quantize_digits(x, aq, ds, blocks, grid=grid(blocks))
    digits, s, sums = R.quantize_digits(x)
    assert np.abs(digits).max() <= 127
    want_q, want_ds = R.split_digits(digits, s, sums)
    np.testing.assert_array_equal(aq, want_q)
    np.testing.assert_array_equal(ds, want_ds)
    xhat = R.dequantize_digits(digits, s)
    assert (np.abs(xhat - x) <= 2.0 ** -23 * np.repeat(np.abs(x).reshape(m, -1, 32).max(-1), 32, 1)).all()
    y = np.zeros((m, n), np.float32)
    mod.q4k_digits_gemv(w.view(np.uint32), aq, ds, y, n, k, grid=grid(n, rows))
    err = np.abs(y - R.gemv(w, x))
    assert (err <= f32_tolerance(w, x)).all(), (err / f32_tolerance(w, x)).max()


def test_q4k_digits_gemv_extreme_digits_do_not_overflow():
    """q4k_digits_gemv combines the three digit dots in an i32, t = (dot1 254 + dot2) 254 +
    dot3: with every nibble 15 and every digit -128 (beyond what quantize_digits writes)
    |t| = 30720 (254^2 + 254 + 1), just below 2^31. y must still be the f64 product of the
    weights with the activations the digits stand for."""
    m, n, k = 1, 5, 512
    rng = np.random.default_rng(77)
    w = R.random_q4k(rng, n, k)
    wb = w.reshape(n, -1, 144)
    wb[..., 16:] = 0xFF                                  # every quant 15
    wb[0, :, 4:16] = 0xFF                                # row 0: the largest scales and mins
    digits = np.full((3, m, k), -128, np.int64)
    digits[:, :, 480::3] = 127                           # the last block mixes in the other sign
    s = rng.uniform(0.5, 2.0, (m, k // 32)).astype(np.float32)
    xhat = R.dequantize_digits(digits, s)
    sums = xhat.reshape(m, -1, 32).sum(-1).astype(np.float32)
    aq, ds = R.split_digits(digits, s, sums)
    mod = load(ember.compile(SRC / "q4k_digits.ember", defines={"M": m, "WARPS": WARPS, "ROWS": 1}))
    y = np.zeros((m, n), np.float32)
    mod.q4k_digits_gemv(w.view(np.uint32), aq, ds, y, n, k, grid=grid(n))
    want = R.gemv(w, xhat)
    assert (np.abs(y - want) <= f32_tolerance(w, xhat) + 1e-6 * np.abs(want)).all()


@pytest.mark.parametrize("m, k, unroll, rows, n", [(1, 512, 1, 1, 6), (3, 512, 1, 1, 6), (1, 1280, 2, 1, 6),
                                                   (2, 2560, 4, 1, 6), (2, 1280, 2, 2, 7), (1, 512, 1, 2, 5)])
def test_the_swiglu_gemv_on_digit_activations(m, k, unroll, rows, n):
    """q4k_digits_swiglu.ember: silu(W_gate x) * (W_up x) from quantize_digits's buffers,
    within the f32 rounding bound of the exact f64 products (where Q8_1 would be off by
    its quantisation); UNROLL steps of loads at once, 5 and 10 super-blocks leaving a lane's
    last steps past the end; ROWS 2 over an odd n, a warp's second row past the end."""
    rng, wg, x = inputs(40 + m, n, k, m)
    wu = R.random_q4k(rng, n, k)
    aq, ds = R.split_digits(*R.quantize_digits(x))
    y = np.zeros((m, n), np.float32)
    mod = load(ember.compile(SRC / "q4k_digits_swiglu.ember", defines={"M": m, "WARPS": 2, "UNROLL": unroll,
                                                                       "ROWS": rows}))
    mod.q4k_digits_swiglu(wg.view(np.uint32), wu.view(np.uint32), aq, ds, y, n, k, grid=(-(-n // (2 * rows)),))
    g, u = R.gemv(wg, x), R.gemv(wu, x)
    want = g / (1 + np.exp(-g)) * u
    tol = 1e-5 * (np.abs(g) + 1) * (np.abs(u) + 1) + f32_tolerance(wg, x) * np.abs(u) + f32_tolerance(wu, x) * np.abs(g)
    assert (np.abs(y - want) <= tol).all()


@pytest.mark.parametrize("batch, per_seq, rows, t, fast, planes", [(2, 1, 2, "bf16", False, 3),
                                                                   (1, 2, 4, "bf16", False, 3),
                                                                   (3, 1, 4, "f32", True, 3),
                                                                   (2, 1, 2, "bf16", False, 2)])
def test_qkv_projection_with_rope_and_the_kv_append_is_the_two_launches_bit_for_bit(batch, per_seq, rows, t, fast,
                                                                                    planes):
    """q4k_digits_qkv: q rotated into q_out, k rotated and v copied into the caches at each
    token's position, bit for bit what q4k_digits_gemv and rope_append write (with three
    digit planes or two); the rest of the caches untouched and a position past the cache
    written nowhere (3 q heads and 1 KV head of 8: 40 rows, the last block's warps partly
    past them)."""
    hq, hkv, d, k, cache_len = 3, 1, 8, 512, 5
    m, n = batch * per_seq, (hq + 2 * hkv) * d
    rng, w, x = inputs(7100 + 10 * m + rows, n, k, m)
    pos = rng.permutation(cache_len)[:m].astype(np.int32)
    pos[-1] = cache_len                                  # past the cache: no k or v written
    prog = ember.compile(SRC / "q4k_digits.ember", defines={"M": m, "WARPS": WARPS, "ROWS": rows, "HEAD_DIM": d,
                                                            "T": t, "FAST": fast, "PLANES": planes})
    mod = load(prog)
    blocks = m * k // 32
    aq, ds = np.zeros(3 * blocks * 8, np.uint32), np.zeros(2 * blocks, np.float32)
    mod.quantize_digits(x, aq, ds, blocks, grid=grid(blocks))
    cache = rng.standard_normal((2, batch, cache_len, hkv, d)).astype(np.float32)
    if t == "bf16":
        cache = (cache.view(np.uint32) >> 16).astype(np.uint16)       # bf16 bits
    kc, vc = cache[0].copy(), cache[1].copy()
    q_out = np.full((m, hq, d), np.nan, np.float32)
    mod.q4k_digits_qkv(w.view(np.uint32), w.view(np.uint16), aq, ds, q_out, kc, vc, pos, hq, hkv, per_seq, cache_len,
                       5e5, k, grid=grid(n, rows))
    # the same as two launches
    y = np.zeros((m, n), np.float32)
    mod.q4k_digits_gemv(w.view(np.uint32), aq, ds, y, n, k, grid=grid(n, 2))
    ra = load(ember.compile(SRC / "rope_append.ember", defines={"HEAD_DIM": d, "T": t, "TI": "f32",
                                                                 "FAST": fast}))
    want_q, want_k, want_v = np.zeros_like(q_out), cache[0].copy(), cache[1].copy()
    flat = y.reshape(-1)
    ra.rope_append(y, flat[hq * d:], flat[(hq + hkv) * d:], want_q, want_k, want_v, pos, hq, hkv, per_seq,
                   cache_len, n, n, n, 5e5, grid=(hq + hkv, m))
    assert np.array_equal(q_out.view(np.uint32), want_q.view(np.uint32))
    assert np.array_equal(kc, want_k) and np.array_equal(vc, want_v)
    assert not np.array_equal(kc, cache[0]) and not np.array_equal(vc, cache[1])   # something was written


@pytest.mark.parametrize("m, k, planes, rows, consts", [
    (3, 1024, 3, 1, {"V_STAGED": True}),
    (1, 2048, 3, 2, {"V_QUARTERS": True, "V_STAGED": True, "V_STAGES": 3, "V_BIAS": False}),
    (2, 512, 2, 4, {"V_QUARTERS": True}),
    (1, 768, 3, 2, {"V_STAGED": True})], ids=str)
def test_qkv_projection_with_q6k_v_is_the_three_launches_bit_for_bit(m, k, planes, rows, consts):
    """q4k_digits_qkv with V6: q's and k's Q4_K rows and v's Q6_K rows (a Q4_K_M layer) in one
    launch give bit for bit what q4k_digits_gemv, q6k_digits_gemv (in the same configuration:
    QUARTERS, STAGED, STAGES, BIAS, the fused kernel's rows a warp: ROWS rounded up to whole
    pairs) and rope_append write; a staged v with k not a multiple of 1024 is NaN, as
    q6k_digits_gemv's rows are there (3 q heads and 1 KV head of 8: 32 Q4_K rows, 8 Q6_K)."""
    paired = rows + rows % 2
    from ember.reference import q6k as R6
    hq, hkv, d, cache_len = 3, 1, 8, 5
    nqk, nv = (hq + hkv) * d, hkv * d
    rng, w, x = inputs(7300 + 10 * m + k // 256, nqk, k, m)
    wv = R6.random_q6k(rng, nv, k)
    pos = rng.permutation(cache_len)[:m].astype(np.int32)
    common = {"M": m, "WARPS": WARPS, "PLANES": planes}
    prog = ember.compile(SRC / "q4k_digits.ember", defines={**common, "ROWS": rows, "HEAD_DIM": d, "T": "f32",
                                                            "V6": True, **consts})
    mod = load(prog)
    blocks = m * k // 32
    aq, ds = np.zeros(3 * blocks * 8, np.uint32), np.zeros(2 * blocks, np.float32)
    mod.quantize_digits(x, aq, ds, blocks, grid=grid(blocks))
    cache = rng.standard_normal((2, m, cache_len, hkv, d)).astype(np.float32)
    kc, vc = cache[0].copy(), cache[1].copy()
    q_out = np.full((m, hq, d), np.nan, np.float32)
    mod.q4k_digits_qkv(w.view(np.uint32), wv.view(np.uint16), aq, ds, q_out, kc, vc, pos, hq, hkv, 1, cache_len,
                       5e5, k, grid=grid(nqk + nv, paired))
    # the three launches
    y, yv = np.zeros((m, nqk), np.float32), np.zeros((m, nv), np.float32)
    mod.q4k_digits_gemv(w.view(np.uint32), aq, ds, y, nqk, k, grid=grid(nqk, rows))
    six = {c[2:]: v for c, v in consts.items()}
    q6 = load(ember.compile(SRC / "q6k_dp4a.ember", defines={**common, "ROWS": min(paired, 2), "QUARTERS": False,
                                                             **six}))
    q6.q6k_digits_gemv(wv.view(np.uint16), aq, ds, yv, nv, k, grid=grid(nv, min(paired, 2)))
    assert np.isnan(yv).all() == (k % 1024 != 0 and bool(consts.get("V_STAGED")))
    ra = load(ember.compile(SRC / "rope_append.ember", defines={"HEAD_DIM": d, "T": "f32", "TI": "f32"}))
    want_q, want_k, want_v = np.zeros_like(q_out), cache[0].copy(), cache[1].copy()
    ra.rope_append(y, y.reshape(-1)[hq * d:], yv, want_q, want_k, want_v, pos, hq, hkv, 1, cache_len, nqk, nqk, nv,
                   5e5, grid=(hq + hkv, m))
    assert np.array_equal(q_out.view(np.uint32), want_q.view(np.uint32))
    assert np.array_equal(kc.view(np.uint32), want_k.view(np.uint32))
    assert np.array_equal(vc.view(np.uint32), want_v.view(np.uint32))
    assert not np.array_equal(vc, cache[1])                                        # v was written
