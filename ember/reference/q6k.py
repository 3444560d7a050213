"""ggml's Q6_K weights in numpy, byte for byte as ggml's `block_q6_K` lays them out, with
an f64 reference: the tensors a Q4_K_M model file keeps in 6 bits (the output projection,
half of the attention value and FFN down projections).

Q6_K: a super-block of 256 weights in 210 bytes: 128 bytes `ql` (the low 4 bits of each
quant), 64 bytes `qh` (the high 2 bits), 16 signed 8-bit scales (one per 16 weights), then
f16 d. Each half of 128 weights uses ql[64h .. 64h + 64], qh[32h .. 32h + 32] and scales
[8h .. 8h + 8]; for l < 32 its weights l, l + 32, l + 64 and l + 96 take the low nibble of
ql[l], the low nibble of ql[l + 32], the high nibble of ql[l] and the high nibble of
ql[l + 32], with bits 0-1, 2-3, 4-5 and 6-7 of qh[l] above them, minus 32; weight i of
the half is scaled by scales[8h + i / 16]. w = d * scale * q.
"""

from __future__ import annotations

import numpy as np

QK_K = 256
Q6K_BYTES = 210


def _fields(blocks: np.ndarray):
    """blocks: uint8 [rows, nb * 210] -> d [rows, nb] (f64), scales [rows, nb, 16],
    quants [rows, nb, 256] (weight order, -32..31)."""
    rows = blocks.shape[0]
    b = blocks.reshape(rows, -1, Q6K_BYTES)
    nb = b.shape[1]
    ql = b[..., 0:128].reshape(rows, nb, 2, 64).astype(np.int64)
    qh = b[..., 128:192].reshape(rows, nb, 2, 32).astype(np.int64)
    scales = b[..., 192:208].copy().view(np.int8).astype(np.int64)
    d = b[..., 208:210].copy().view(np.float16)[..., 0].astype(np.float64)
    lo, hi = ql[..., :32], ql[..., 32:]
    quarters = [(lo & 0xF) | ((qh & 3) << 4),
                (hi & 0xF) | (((qh >> 2) & 3) << 4),
                (lo >> 4) | (((qh >> 4) & 3) << 4),
                (hi >> 4) | (((qh >> 6) & 3) << 4)]
    quants = np.stack(quarters, axis=-2).reshape(rows, nb, QK_K) - 32
    return d, scales, quants


def dequantize_q6k(blocks: np.ndarray) -> np.ndarray:
    """uint8 [rows, K / 256 * 210] -> f64 [rows, K]."""
    d, scales, q = _fields(blocks)
    scale = np.repeat(d[..., None] * scales, 16, axis=-1)
    return (scale * q).reshape(blocks.shape[0], -1)


def random_q6k(rng: np.random.Generator, rows: int, k: int) -> np.ndarray:
    """Random Q6_K blocks: every quant bit and scale byte random, d a random positive f16
    of the size a real model has."""
    assert k % QK_K == 0
    nb = k // QK_K
    blocks = rng.integers(0, 256, (rows, nb, Q6K_BYTES), dtype=np.uint8)
    d = rng.uniform(1e-5, 2e-4, (rows, nb)).astype(np.float16)
    blocks[..., 208:210] = d[..., None].view(np.uint8).reshape(rows, nb, 2)
    return blocks.reshape(rows, nb * Q6K_BYTES)


def model_like_q6k(rng: np.random.Generator, rows: int, k: int, std: float) -> np.ndarray:
    """Random Q6_K blocks whose weights look like a trained model's: zero mean (the quants
    are centred on 32) and about `std` (scales random in 1..31, d random around
    std / 296)."""
    assert k % QK_K == 0
    nb = k // QK_K
    blocks = rng.integers(0, 256, (rows, nb, Q6K_BYTES), dtype=np.uint8)
    blocks[..., 192:208] = rng.integers(1, 32, (rows, nb, 16), dtype=np.uint8)
    d = (rng.uniform(0.5, 1.5, (rows, nb)) * std / 296).astype(np.float16)
    blocks[..., 208:210] = d[..., None].view(np.uint8).reshape(rows, nb, 2)
    return blocks.reshape(rows, nb * Q6K_BYTES)


def gemv_q8_1(blocks: np.ndarray, q8: np.ndarray) -> np.ndarray:
    """y [M, N] in f64 of Q6_K weights against Q8_1 activations (ember.reference.q4k's
    quantize_q8_1 blocks): the product with the values the quants stand for, d8 q. The DP4A
    kernel (kernels_src/q6k_dp4a.ember q6k_q8_gemv) computes each 8-weight dot exactly in
    the integer and meets the scales in f32: within f32 rounding of this."""
    from .q4k import dequantize_q8_1
    return dequantize_q8_1(q8) @ dequantize_q6k(blocks).T


def gemv_digits(blocks: np.ndarray, x: np.ndarray, planes: int = 3) -> np.ndarray:
    """y [M, N] in f64 of Q6_K weights against f32 activations x as the first `planes`
    digits of ember.reference.q4k.quantize_digits stand for them (q6k_digits_gemv's PLANES):
    with three planes within 2^-22 of a block's largest of x @ W^T itself."""
    from .q4k import dequantize_digits, quantize_digits
    digits, s, _ = quantize_digits(x)
    kept = np.where(np.arange(3)[:, None, None] < planes, digits, 0)
    return dequantize_digits(kept, s) @ dequantize_q6k(blocks).T
