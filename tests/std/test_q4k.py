"""ember/std/q4k.ember's unpacking helpers in the simulator, each against the format
definition (ember/reference/q4k.py): exact where the helper claims exactness."""

import numpy as np
import pytest

import ember
from ember.reference import q4k as R
from ember.sim import load

SRC = """
import "std/q4k.ember";
kernel nibbles(w: *global u32, out: *mut global f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    let v = w[i];
    let ones = exponent_ones();
    let t = v >> 12u32;
    out[8u32 * i] = nibble_f32(v, ones, 0u32);
    out[8u32 * i + 1u32] = nibble_f32(v, ones, 4u32);
    out[8u32 * i + 2u32] = nibble_f32(v, ones, 8u32);
    out[8u32 * i + 3u32] = nibble_f32(v, ones, 12u32);
    out[8u32 * i + 4u32] = nibble_f32(v, ones, 16u32);
    out[8u32 * i + 5u32] = nibble_f32(t, ones, 8u32);
    out[8u32 * i + 6u32] = nibble_f32(t, ones, 12u32);
    out[8u32 * i + 7u32] = nibble_f32(t, ones, 16u32);
}
kernel bytes(v: *global u32, c: *global f32, out: *mut global f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    out[i] = byte_times(v[i], exponent_ones(), c[i]);
}
kernel coeffs(h: *global u32, out: *mut global f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;     // super-block i / 4, group i % 4
    let b = u64(i / 4u32) * 4u64;
    let (a_lo, b_lo, a_hi, b_hi) = q4k_coeffs_of(h[b], h[b + 1u64], h[b + 2u64], h[b + 3u64], i % 4u32);
    out[4u32 * i] = a_lo;
    out[4u32 * i + 1u32] = b_lo;
    out[4u32 * i + 2u32] = a_hi;
    out[4u32 * i + 3u32] = b_hi;
}
kernel coeffs_times(h: *global u32, out: *mut global f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;     // as coeffs, d times 1 / 254^2 and 1 / (16 254^2)
    let b = u64(i / 4u32) * 4u64;
    let f = 1.0 / 64516.0;
    let (a_lo, b_lo, a_hi, b_hi) = q4k_coeffs_times(h[b], h[b + 1u64], h[b + 2u64], h[b + 3u64], i % 4u32, f,
                                                    f * 0.0625);
    out[4u32 * i] = a_lo;
    out[4u32 * i + 1u32] = b_lo;
    out[4u32 * i + 2u32] = a_hi;
    out[4u32 * i + 3u32] = b_hi;
}
kernel scale_min(h: *global u32, out: *mut global u32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;     // super-block i / 8, sub-block i % 8
    let b = u64(i / 8u32) * 4u64;
    let (sc, m) = q4k_scale_min(h[b + 1u64], h[b + 2u64], h[b + 3u64], i % 8u32);
    out[2u32 * i] = sc;
    out[2u32 * i + 1u32] = m;
}
kernel small(v: *global u32, out: *mut global f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    out[i] = small_u32_to_f32(v[i]);
}
kernel dot(q: *global u32, co: *global f32, x: *global f32, out: *mut global f32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    var xv: [f32; 32];
    unroll for j in 0..32u32 {
        xv[j] = x[32u32 * i + j];
    }
    let c = 4u32 * i;
    out[i] = q4k_dot_lane(q[c], q[c + 1u32], q[c + 2u32], q[c + 3u32], co[c], co[c + 1u32], co[c + 2u32],
                          co[c + 3u32], xv, sum16(xv, 0u32), sum16(xv, 16u32));
}
kernel quantize(x: *global f32, d: *mut global f32, q: *mut global i32, s: *mut global i32) block(32) {
    let i = block_idx.x * 32u32 + thread_idx.x;
    let (dd, qq, ss) = q8_1_quantize_warp(x[i]);
    q[i] = qq;
    if lane_id == 0u32 {
        d[block_idx.x] = dd;
        s[block_idx.x] = ss;
    }
}
kernel store_split(q: *global i32, aq: *mut global u32) block(32) {
    q8_store_split(aq, 0u64, block_idx.x, q[block_idx.x * 32u32 + thread_idx.x]);
}
"""


def module():
    return load(ember.compile(SRC))


def test_nibble_f32_is_exact_at_every_position():
    rng = np.random.default_rng(11)
    w = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    w[:16] = np.arange(16, dtype=np.uint32) * 0x11111111      # every nibble value everywhere
    out = np.zeros(8 * w.size, np.float32)
    module().nibbles(w, out, grid=w.size // 32)
    shifts = [0, 4, 8, 12, 16, 20, 24, 28]
    want = np.stack([(w >> s) & 15 for s in shifts], axis=1).astype(np.float32).ravel()
    np.testing.assert_array_equal(out, want)


def test_byte_times_rounds_once_like_a_product():
    rng = np.random.default_rng(12)
    v = np.tile(np.arange(64, dtype=np.uint32), 4)
    v |= rng.integers(0, 256, v.size, dtype=np.uint32) << 8        # higher bytes ignored
    c = rng.standard_normal(v.size).astype(np.float32) * np.float32(1e-3)
    out = np.zeros(v.size, np.float32)
    module().bytes(v, c, out, grid=v.size // 32)
    np.testing.assert_array_equal(out, (v & 63).astype(np.float32) * c)


@pytest.mark.parametrize("kernel, f_lo, f_hi", [
    ("coeffs", 1.0, 1.0),                                        # q4k_coeffs_of
    ("coeffs_times", 1.0 / 64516.0, 1.0 / 64516.0 * 0.0625),     # q4k_coeffs_times, as q4k_imma's digits
])
def test_coefficients_of_every_group_match_the_definition(kernel, f_lo, f_hi):
    """(d f_lo sc, dmin m, d f_hi sc, dmin m) of each group, d f rounded to f32 first and
    each product rounded once, bit for bit."""
    rng = np.random.default_rng(13)
    blocks = R.random_q4k(rng, 1, 256 * 64)            # 64 super-blocks, random scale bytes
    sb = blocks.reshape(-1, R.Q4K_BYTES)
    head = np.ascontiguousarray(sb[:, :16]).view(np.uint32).ravel()
    out = np.zeros(4 * 4 * sb.shape[0], np.float32)
    getattr(module(), kernel)(head, out, grid=4 * sb.shape[0] // 32)
    d = sb[:, 0:2].copy().view(np.float16)[:, 0].astype(np.float32)
    dmin = sb[:, 2:4].copy().view(np.float16)[:, 0].astype(np.float32)
    d_lo, d_hi = d * np.float32(f_lo), d * np.float32(f_hi)
    sc, m = R.scale_min(sb[:, 4:16])
    want = np.empty((sb.shape[0], 4, 4), np.float32)
    for g in range(4):
        want[:, g, 0] = d_lo * sc[:, 2 * g].astype(np.float32)
        want[:, g, 1] = dmin * m[:, 2 * g].astype(np.float32)
        want[:, g, 2] = d_hi * sc[:, 2 * g + 1].astype(np.float32)
        want[:, g, 3] = dmin * m[:, 2 * g + 1].astype(np.float32)
    np.testing.assert_array_equal(out.reshape(-1, 4, 4), want)


def test_scale_min_of_every_sub_block_matches_the_definition():
    rng = np.random.default_rng(15)
    sb = R.random_q4k(rng, 1, 256 * 32).reshape(-1, R.Q4K_BYTES)
    head = np.ascontiguousarray(sb[:, :16]).view(np.uint32).ravel()
    out = np.zeros(2 * 8 * sb.shape[0], np.uint32)
    module().scale_min(head, out, grid=8 * sb.shape[0] // 32)
    sc, m = R.scale_min(sb[:, 4:16])
    np.testing.assert_array_equal(out.reshape(-1, 8, 2), np.stack([sc, m], axis=-1))


def test_small_u32_to_f32_is_exact_below_2_to_the_23():
    v = np.concatenate([np.arange(32, dtype=np.uint32), np.array([2**23 - 1 - i for i in range(32)], np.uint32)])
    out = np.zeros(v.size, np.float32)
    module().small(v, out, grid=v.size // 32)
    np.testing.assert_array_equal(out, v.astype(np.float32))


def test_dot_lane_against_f64():
    rng = np.random.default_rng(14)
    lanes = 64
    q = rng.integers(0, 2**32, 4 * lanes, dtype=np.uint64).astype(np.uint32)
    co = rng.uniform(1e-4, 1e-1, 4 * lanes).astype(np.float32)
    x = rng.standard_normal(32 * lanes).astype(np.float32)
    out = np.zeros(lanes, np.float32)
    module().dot(q, co, x, out, grid=lanes // 32)
    qb = q.view(np.uint8).reshape(lanes, 16).astype(np.float64)
    xs = x.reshape(lanes, 32).astype(np.float64)
    c = co.reshape(lanes, 4).astype(np.float64)
    w_lo = c[:, :1] * (qb % 16) - c[:, 1:2]       # weight i: low nibble of byte i ...
    w_hi = c[:, 2:3] * (qb // 16) - c[:, 3:4]     # ... and weight 16 + i: its high nibble
    want = (w_lo * xs[:, :16]).sum(1) + (w_hi * xs[:, 16:]).sum(1)
    scale = (np.abs(w_lo * xs[:, :16]).sum(1) + np.abs(w_hi * xs[:, 16:]).sum(1))
    assert (np.abs(out - want) <= 64 * 2.0**-24 * scale).all()


def test_q8_1_quantize_warp_is_ggml_quantisation():
    rng = np.random.default_rng(16)
    x = (rng.standard_normal((1, 32 * 8)) * rng.uniform(0.01, 100, (1, 1))).astype(np.float32)
    x[0, :32] = 0.0                                         # amax 0: d 0, every q 0
    x[0, 32:64] = np.linspace(-2.5, 2.5, 32)                # ties of round(x / d)
    d, s = np.zeros(8, np.float32), np.zeros(8, np.int32)
    q = np.zeros(x.size, np.int32)
    module().quantize(x, d, q, s, grid=8)
    want_q, want_d = R.q8_1_fields(R.quantize_q8_1(x))
    np.testing.assert_array_equal(q, want_q[0])
    np.testing.assert_array_equal(d.astype(np.float16).astype(np.float64), want_d[0])    # stored as f16
    np.testing.assert_array_equal(s, want_q[0].reshape(8, 32).sum(1))


def test_q8_store_split_is_the_split_layout():
    rng = np.random.default_rng(17)
    q = rng.integers(-128, 128, 32 * 16).astype(np.int32)   # 16 blocks: two super-blocks
    aq = np.zeros(q.size // 4, np.uint32)
    module().store_split(q, aq, grid=16)
    want = q.astype(np.int8).view(np.uint8).reshape(2, 256)[:, R.lane_order()]
    np.testing.assert_array_equal(aq, np.ascontiguousarray(want).reshape(-1).view(np.uint32))


def test_q8_1_blocks_are_ggmls_bytes_header_first():
    """ggml's block_q8_1 is {f16 d; f16 s; int8 qs[32]}: a block built field by field as ggml
    lays it out reads back as its values, and split_q8_1 of it gives the DP4A layout."""
    rng = np.random.default_rng(5)
    qs = rng.integers(-127, 128, (2, 8, 32)).astype(np.int8)
    d = rng.uniform(0.01, 0.1, (2, 8)).astype(np.float16)
    s = (d.astype(np.float32) * qs.sum(-1)).astype(np.float16)
    raw = np.concatenate([d[..., None].view(np.uint8).reshape(2, 8, 2), s[..., None].view(np.uint8).reshape(2, 8, 2),
                          qs.view(np.uint8)], axis=-1).reshape(2, -1)
    assert raw.shape == (2, 8 * 36)
    q, dd = R.q8_1_fields(raw)
    assert (q.reshape(2, 8, 32) == qs).all() and (dd == d.astype(np.float64)).all()
    aq, ads = R.split_q8_1(raw)
    assert ((ads & 0xFFFF).astype(np.uint16).view(np.float16) == d.reshape(-1)).all()
    assert ((ads >> 16).astype(np.uint16).view(np.int16) == qs.sum(-1).reshape(-1)).all()
    x = rng.standard_normal((2, 256)).astype(np.float32)
    blocks = R.quantize_q8_1(x).reshape(2, 8, 36)
    assert np.isfinite(blocks[..., 0:2].copy().view(np.float16)).all()       # d comes first
