"""RoPE in float64, exactly as defined in kernels_src/rope.ember:

    theta_i = base^(-2i / head_dim), a = p * theta_i
    forward:  y0 = x0 cos a - x1 sin a,  y1 = x0 sin a + x1 cos a
    backward: rotation by -a
    pairs: adjacent (2i, 2i+1), or halves (i, i + head_dim/2) with neox
"""

from __future__ import annotations

import numpy as np


def rope(x, positions, base: float, neox: bool = False, backward: bool = False) -> np.ndarray:
    """x: [tokens, heads, head_dim]; positions: [tokens]. Returns float64."""
    x = np.asarray(x, dtype=np.float64)
    tokens, heads, head_dim = x.shape
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    half = head_dim // 2
    i = np.arange(half, dtype=np.float64)
    inv_freq = np.power(np.float64(base), -(2.0 * i) / head_dim)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    s, c = np.sin(angle)[:, None, :], np.cos(angle)[:, None, :]
    if backward:
        s = -s
    if neox:
        x0, x1 = x[..., :half], x[..., half:]
    else:
        x0, x1 = x[..., 0::2], x[..., 1::2]
    y0 = x0 * c - x1 * s
    y1 = x0 * s + x1 * c
    out = np.empty_like(x)
    if neox:
        out[..., :half], out[..., half:] = y0, y1
    else:
        out[..., 0::2], out[..., 1::2] = y0, y1
    return out


def parity(got, ref) -> dict:
    """Cosine similarity and max |difference| of a result against the reference."""
    g = np.asarray(got, dtype=np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    cos = float(g @ r / (np.linalg.norm(g) * np.linalg.norm(r)))
    return {"cosine": cos, "max_abs_diff": float(np.max(np.abs(g - r)))}


def rope_append(q, k, v, k_cache, v_cache, positions, tokens_per_seq: int, base: float, neox: bool = False):
    """kernels_src/rope.ember rope_append in float64: (q rotated, k_cache, v_cache) after
    token t = b * M + m's k rotated into k_cache[b, positions[t]] and v copied into
    v_cache[b, positions[t]]; a position outside the cache writes nothing."""
    qr = rope(q, positions, base, neox)
    kr = rope(k, positions, base, neox)
    kc, vc = np.array(k_cache, np.float64), np.array(v_cache, np.float64)
    for t, p in enumerate(np.asarray(positions)):
        if 0 <= p < kc.shape[1]:
            kc[t // tokens_per_seq, p] = kr[t]
            vc[t // tokens_per_seq, p] = np.asarray(v, np.float64)[t]
    return qr, kc, vc
