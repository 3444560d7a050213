"""ggml's Q4_K weights and Q8_1 activations, in numpy, byte for byte as ggml's
`block_q4_K` and `block_q8_1` lay them out, and f64 references for the kernels that use
them.

Q4_K: a super-block of 256 weights in 144 bytes: f16 d, f16 dmin, 12 bytes of packed
6-bit (scale, min) for the 8 sub-blocks of 32, then 128 bytes of 4-bit quants. For
j < 4: sc = q[j] & 63, m = q[j+4] & 63; for j >= 4: sc = (q[j+4] & 0xF) | ((q[j-4] >> 6) << 4),
m = (q[j+4] >> 4) | ((q[j] >> 6) << 4). Group g (64 weights) is quant bytes 32g..32g+32:
low nibbles are weights 64g + l (sub-block 2g), high nibbles 64g + 32 + l (sub-block
2g + 1). w = d * sc * q - dmin * m.

Q8_1: blocks of 32 activations: d = amax / 127 (f32), q = round(x / d) (ties away from
zero, f32 division), stored as ggml's `block_q8_1 { ggml_half d; ggml_half s; int8_t
qs[32]; }` (36 bytes, the header first): f16 d, f16 s = d * sum(q) (ggml's CPU
quantiser; its CUDA one stores sum(x)), then the 32 quants. Ember's DP4A kernels read
their own staging layout instead (split_q8_1), which quantize_q8_1 in
kernels_src/q4k_dp4a.ember writes directly.
"""

from __future__ import annotations

import numpy as np

from .gemm import bf16_bits, bf16_values

QK_K = 256
Q4K_BYTES = 144
QK8_1 = 32
Q8_1_BYTES = 36


def scale_min(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scales: uint8 [..., 12] -> (sc, m), each int [..., 8]."""
    q = scales.astype(np.int64)
    sc = np.empty(q.shape[:-1] + (8,), np.int64)
    m = np.empty_like(sc)
    for j in range(8):
        if j < 4:
            sc[..., j] = q[..., j] & 63
            m[..., j] = q[..., j + 4] & 63
        else:
            sc[..., j] = (q[..., j + 4] & 0xF) | ((q[..., j - 4] >> 6) << 4)
            m[..., j] = (q[..., j + 4] >> 4) | ((q[..., j] >> 6) << 4)
    return sc, m


def _fields(blocks: np.ndarray):
    """blocks: uint8 [rows, nb * 144] -> d, dmin [rows, nb] (f64), sc, m [rows, nb, 8],
    quants [rows, nb, 256] (weight order)."""
    rows = blocks.shape[0]
    b = blocks.reshape(rows, -1, Q4K_BYTES)
    d = b[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float64)
    dmin = b[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float64)
    sc, m = scale_min(b[..., 4:16])
    qs = b[..., 16:].reshape(rows, b.shape[1], 4, 32).astype(np.int64)
    quants = np.concatenate([qs & 0xF, qs >> 4], axis=-1).reshape(rows, b.shape[1], QK_K)
    return d, dmin, sc, m, quants


def dequantize_q4k(blocks: np.ndarray) -> np.ndarray:
    """uint8 [rows, K / 256 * 144] -> f64 [rows, K]."""
    d, dmin, sc, m, q = _fields(blocks)
    scale = np.repeat(d[..., None] * sc, 32, axis=-1)
    offset = np.repeat(dmin[..., None] * m, 32, axis=-1)
    return (scale * q - offset).reshape(blocks.shape[0], -1)


def random_q4k(rng: np.random.Generator, rows: int, k: int) -> np.ndarray:
    """Random Q4_K blocks: every scale byte and quant random (so all 8 sub-block
    (scale, min) encodings and both nibbles are exercised), d and dmin random positive
    f16 of the size a real model has."""
    assert k % QK_K == 0
    nb = k // QK_K
    blocks = rng.integers(0, 256, (rows, nb, Q4K_BYTES), dtype=np.uint8)
    d = rng.uniform(1e-4, 2e-3, (rows, nb)).astype(np.float16)
    dmin = rng.uniform(1e-4, 2e-3, (rows, nb)).astype(np.float16)
    blocks[..., 0:2] = d[..., None].view(np.uint8).reshape(rows, nb, 2)
    blocks[..., 2:4] = dmin[..., None].view(np.uint8).reshape(rows, nb, 2)
    return blocks.reshape(rows, nb * Q4K_BYTES)


def pack_scale_min(sc: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(sc, m), each 6-bit [..., 8] -> the 12 packed bytes scale_min reads."""
    sc, m = np.asarray(sc, np.int64), np.asarray(m, np.int64)
    q = np.empty(sc.shape[:-1] + (12,), np.int64)
    q[..., 0:4] = sc[..., 0:4] | ((sc[..., 4:8] >> 4) << 6)
    q[..., 4:8] = m[..., 0:4] | ((m[..., 4:8] >> 4) << 6)
    q[..., 8:12] = (sc[..., 4:8] & 0xF) | ((m[..., 4:8] & 0xF) << 4)
    return q.astype(np.uint8)


def model_like_q4k(rng: np.random.Generator, rows: int, k: int, std: float) -> np.ndarray:
    """Random Q4_K blocks whose weights look like a trained model's: zero mean and about
    `std` (dmin = d and each sub-block's min m = round(7.5 sc) centre the quants 0..15; sc
    random in 1..8, d random around std / 20.7), so that a layer's activations keep their
    size from layer to layer. Quants random."""
    assert k % QK_K == 0
    nb = k // QK_K
    blocks = rng.integers(0, 256, (rows, nb, Q4K_BYTES), dtype=np.uint8)
    d = (rng.uniform(0.5, 1.5, (rows, nb)) * std / 20.7).astype(np.float16)
    sc = rng.integers(1, 9, (rows, nb, 8))
    blocks[..., 0:2] = d[..., None].view(np.uint8).reshape(rows, nb, 2)
    blocks[..., 2:4] = blocks[..., 0:2]
    blocks[..., 4:16] = pack_scale_min(sc, np.rint(7.5 * sc).astype(np.int64))
    return blocks.reshape(rows, nb * Q4K_BYTES)


def gemv(blocks: np.ndarray, x: np.ndarray) -> np.ndarray:
    """y[m, n] = sum_k W[n, k] x[m, k] in f64. x: [M, K]."""
    return np.asarray(x, np.float64) @ dequantize_q4k(blocks).T


def swiglu_gemv(gate: np.ndarray, up: np.ndarray, x: np.ndarray) -> np.ndarray:
    """silu(W_gate x) * (W_up x) in f64."""
    g = gemv(gate, x)
    return g / (1.0 + np.exp(-g)) * gemv(up, x)


# ----------------------------------------------------------------------------- Q8_1
def quantize_q8_1(x: np.ndarray) -> np.ndarray:
    """f32 [M, K] (K a multiple of 32) -> ggml's Q8_1 blocks, uint8 [M, K / 32 * 36], with
    the values the kernel computes: f32 arithmetic, round half away from zero."""
    x = np.asarray(x, np.float32)
    rows, k = x.shape
    blk = x.reshape(rows, k // QK8_1, QK8_1)
    amax = np.abs(blk).max(axis=-1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(d[..., None] > 0, blk / d[..., None], np.float32(0)).astype(np.float32)
    q = _round_half_away(r.astype(np.float64)).astype(np.int64)   # exact
    q = np.clip(q, -127, 127)
    s = (d * q.sum(axis=-1).astype(np.float32)).astype(np.float32)
    out = np.empty((rows, k // QK8_1, Q8_1_BYTES), np.uint8)
    out[..., 0:2] = d.astype(np.float16)[..., None].view(np.uint8).reshape(rows, -1, 2)
    out[..., 2:4] = s.astype(np.float16)[..., None].view(np.uint8).reshape(rows, -1, 2)
    out[..., 4:] = q.astype(np.int8).view(np.uint8)
    return out.reshape(rows, -1)


def q8_1_fields(q8: np.ndarray):
    """ggml's Q8_1 blocks, uint8 [M, K / 32 * 36] -> int8 quants [M, K] (as int64), d
    [M, K / 32] (f64)."""
    rows = q8.shape[0]
    b = q8.reshape(rows, -1, Q8_1_BYTES)
    q = b[..., 4:].copy().view(np.int8).astype(np.int64).reshape(rows, -1)
    d = b[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float64)
    return q, d


def lane_order() -> np.ndarray:
    """The order of the 256 activation quants of a super-block in the split layout: the
    16 at 64g + 32q + 16h + i come at 128q + 16 (2g + h) + i (the DP4A GEMV's lane
    c = 2g + h reads bytes 16c.. for the low nibbles and 128 + 16c.. for the high)."""
    order = np.empty(256, np.int64)
    for q in range(2):
        for g in range(4):
            for h in range(2):
                for i in range(16):
                    order[128 * q + 16 * (2 * g + h) + i] = 64 * g + 32 * q + 16 * h + i
    return order


def split_q8_1(q8: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ggml's 36-byte Q8_1 blocks -> the split layout the DP4A kernels read: the quants
    (uint32 [M * K / 4], four per word) in lane order (lane_order) within each run of 256,
    and per block one uint32 with f16 d in the low half and the exact integer sum of the
    block's quants as an i16 in the high half (ggml keeps s = d * sum as an f16 there)
    (uint32 [M * K / 32]). K must be a multiple of 256."""
    rows = q8.shape[0]
    b = np.ascontiguousarray(q8).reshape(rows, -1, Q8_1_BYTES)
    d_bits = np.ascontiguousarray(b[..., 0:2]).view(np.uint16)[..., 0].astype(np.uint32)
    quants = np.ascontiguousarray(b[..., 4:])
    sums = quants.view(np.int8).astype(np.int32).sum(axis=-1)
    ds = (d_bits | ((sums.astype(np.uint32) & 0xFFFF) << 16)).astype(np.uint32).reshape(-1)
    return split_words(quants.reshape(rows, -1)), ds


def unsplit_words(words: np.ndarray, rows: int, k: int) -> np.ndarray:
    """split_words undone: uint32 words in the split layout -> the int8 values [rows, k]
    (as int64)."""
    split = np.ascontiguousarray(words, np.uint32).view(np.int8).reshape(rows, k // 256, 256)
    q = np.empty_like(split)
    q[..., lane_order()] = split
    return q.reshape(rows, k).astype(np.int64)


def unsplit_q8_1(aq: np.ndarray, ads: np.ndarray, rows: int, k: int) -> tuple:
    """The split Q8_1 activations a kernel wrote (split_q8_1's layout) read back: int quants
    [rows, k] (int64), d [rows, k / 32] (f64) and the integer quant sums [rows, k / 32]
    (int64) that the ads words hold."""
    words = np.ascontiguousarray(ads, np.uint32).reshape(rows, k // QK8_1)
    d = (words & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
    sums = (words >> 16).astype(np.uint16).view(np.int16).astype(np.int64)
    return unsplit_words(aq, rows, k), d, sums


def split_words(quants: np.ndarray) -> np.ndarray:
    """8-bit values [..., K] (K a multiple of 256) -> uint32 words in the split layout: each
    run of 256 in lane order (lane_order), four values per word."""
    q = np.asarray(quants).astype(np.int8).view(np.uint8)
    runs = q.reshape(*q.shape[:-1], -1, 256)[..., lane_order()]
    return np.ascontiguousarray(runs).reshape(-1).view(np.uint32)


def _round_half_away(u: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, ties away from zero (the kernels' `round`), in f64."""
    return np.sign(u) * np.floor(np.abs(u) + 0.5)


def dequantize_q8_1(q8: np.ndarray) -> np.ndarray:
    q, d = q8_1_fields(q8)
    return (q.reshape(q.shape[0], -1, QK8_1) * d[..., None]).reshape(q.shape[0], -1)


def gemv_q8_1(blocks: np.ndarray, q8: np.ndarray) -> np.ndarray:
    """The DP4A GEMV's exact integer part, emulated: for each (row, super-block,
    sub-block) the integer dot product of the 4-bit quants with the int8 activations and
    the integer sum of the activations, then y = sum d*sc*d8*dot - dmin*m*d8*sum in f64.
    A kernel computes the same integers (dp4a is exact) and combines them in f32."""
    d, dmin, sc, m, quants = _fields(blocks)                 # [N, nb], [N, nb, 8], [N, nb, 256]
    q, d8 = q8_1_fields(q8)                                  # [M, K], [M, K/32]
    rows_n, nb = d.shape
    qw = quants.reshape(rows_n, nb * 8, 32)
    qa = q.reshape(q.shape[0], nb * 8, 32)
    dots = np.einsum("nsl,msl->mns", qw, qa)                 # exact int64
    sums = qa.sum(axis=-1)                                   # [M, nb*8]
    scale = (d[..., None] * sc).reshape(rows_n, nb * 8)      # d*sc per sub-block
    offset = (dmin[..., None] * m).reshape(rows_n, nb * 8)
    return (np.einsum("ns,mns,ms->mn", scale, dots.astype(np.float64), d8)
            - np.einsum("ns,ms,ms->mn", offset, sums.astype(np.float64), d8))


# ----------------------------------------------------------------------------- mma layout
# kernels_src/q4k_mma.ember reads activations as mma B fragments: for step kb = 2s + st of
# sub-block s, part p, activation row m (0..7) and lane t, four bf16 at
# (((kb * parts + p) * 8 + m) * 4 + t) * 4 + e holding element 32s + 8t + 4st + MMA_PAIR[e].
MMA_PAIR = (0, 2, 1, 3)
MMA_ROWS = 8


def mma_b_layout(parts: np.ndarray) -> np.ndarray:
    """[P, M, K] values (M <= 8; rows past M are zeros) -> the flat B-fragment layout, as
    float64 (the caller rounds to bf16 bits)."""
    p_count, rows, k = parts.shape
    full = np.zeros((p_count, MMA_ROWS, k))
    full[:, :rows] = parts
    sub = full.reshape(p_count, MMA_ROWS, k // 32, 4, 2, 4)          # [p, m, s, t, st, 4 in order]
    sub = sub[..., list(MMA_PAIR)]
    # -> [s, st, p, m, t, e]
    return np.ascontiguousarray(sub.transpose(2, 4, 0, 1, 3, 5)).reshape(-1)


def q8_1_mma_layout(q8: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ggml Q8_1 blocks -> what quantize_q8_1_mma writes: the quants as bf16 bits in the
    B-fragment layout, and per (sub-block s, row m) f32 (d8, quant sum) at (8s + m) * 2."""
    q, d8 = q8_1_fields(q8)
    rows, k = q.shape
    xb = bf16_bits(mma_b_layout(q[None].astype(np.float64)))
    xs = np.zeros((k // 32, MMA_ROWS, 2), np.float32)
    xs[:, :rows, 0] = d8.T
    xs[:, :rows, 1] = q.reshape(rows, -1, 32).sum(-1).T
    return xb, xs.reshape(-1)


def split_bf16x3(x: np.ndarray) -> np.ndarray:
    """f32 [M, K] -> [3, M, K] bf16 values (as float64) with x = x1 + x2 + x3 exactly: each
    part the rest rounded to nearest even bf16."""
    x = np.asarray(x, np.float32).astype(np.float64)
    x1 = bf16_values(x)
    r1 = x - x1
    x2 = bf16_values(r1)
    x3 = bf16_values(r1 - x2)
    return np.stack([x1, x2, x3])


# ----------------------------------------------------------------------------- digits
DIGIT_BASE = 254


def quantize_digits(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f32 [M, K] -> (digits int64 [3, M, K], s f32 [M, K / 32], sums f32 [M, K / 32]) as
    kernels_src/q4k_digits.ember's quantize_digits computes them: per block of 32,
    s = max|x| / 127 (f32), u = x / s in f64, then three times digit = round(u) (half away
    from zero), u = (u - digit) * 254; x ~ s (a1 + a2 / 254 + a3 / 254^2). The sums are the
    f32 sums of each block in the warp's butterfly order."""
    x = np.asarray(x, np.float32)
    rows, k = x.shape
    blk = x.reshape(rows, k // 32, 32)
    amax = np.abs(blk).max(axis=-1)
    s = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(amax[..., None] > 0, blk.astype(np.float64) / s[..., None].astype(np.float64), 0.0)
    digits = []
    for _ in range(3):
        d = _round_half_away(u)
        digits.append(d.astype(np.int64).reshape(rows, k))
        u = (u - d) * DIGIT_BASE
    return np.stack(digits), s, _butterfly_sums(blk)


def _butterfly_sums(blk: np.ndarray) -> np.ndarray:
    """The f32 sum over the last axis (32) as std/reduce.ember's warp_sum adds: five
    butterfly steps, lane l adding lane l ^ 16, 8, 4, 2, 1 (lane 0's result)."""
    v = np.asarray(blk, np.float32).copy()
    for step in (16, 8, 4, 2, 1):
        v = (v + v[..., np.arange(32) ^ step]).astype(np.float32)
    return v[..., 0]


def split_digits(digits: np.ndarray, s: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """quantize_digits's result -> the kernel's buffers: aq (three planes of the split
    layout of split_q8_1, uint32) and ds (f32 pairs (s, sum) per block)."""
    ds = np.stack([s, sums], axis=-1).astype(np.float32).reshape(-1)
    return split_words(digits), ds


def dequantize_digits(digits: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The activations the digits stand for, s (a1 + a2/254 + a3/254^2), in f64 [M, K]."""
    rows, k = digits.shape[1:]
    units = (digits[0] + digits[1] / DIGIT_BASE + digits[2] / DIGIT_BASE ** 2).reshape(rows, k // 32, 32)
    return (units * np.asarray(s, np.float64)[..., None]).reshape(rows, k)


def dequantize_q4k_scaled(blocks: np.ndarray) -> np.ndarray:
    """The quants' terms d sc q of each weight (dequantize_q4k without dmin m), f64 [rows, K]."""
    no_min = np.array(blocks, np.uint8).reshape(blocks.shape[0], -1, Q4K_BYTES)
    no_min[..., 2:4] = 0                                   # dmin (f16) = 0
    return dequantize_q4k(no_min.reshape(blocks.shape))


def gemv_digits(blocks: np.ndarray, x: np.ndarray, planes: int = 3) -> np.ndarray:
    """y[m, n] in f64 as the digits kernels compute it reading the first `planes` digits of
    each value (their PLANES const): the quants' terms d sc q against x as those digits
    stand for it, the min terms dmin m against x's own block sums (quantize_digits's, which
    the kernels read whole). With three planes within 2^-22 of a block's largest of gemv."""
    digits, s, _ = quantize_digits(x)
    kept = np.where(np.arange(3)[:, None, None] < planes, digits, 0)
    scaled = dequantize_q4k_scaled(blocks)
    return dequantize_digits(kept, s) @ scaled.T - np.asarray(x, np.float64) @ (scaled - dequantize_q4k(blocks)).T
