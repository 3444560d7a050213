"""A Llama decoder layer's decode step in float64 (ember.model.layer's Decoder, exactly as
defined there): for each sequence b, its new token at position positions[b] with the
residual stream h[b]:

    x = rmsnorm(h) * attn_norm
    q, k, v = x Wq^T, x Wk^T, x Wv^T         (the weights dequantised: the same values)
    q, k = rope(q, k) at the position; k_cache[b, p], v_cache[b, p] = k, v
    o = attention of q over the cache's keys 0 .. p (grouped-query)
    h = h + o Wo^T
    x = rmsnorm(h) * ffn_norm
    h = h + (silu(x Wgate^T) * (x Wup^T)) Wdown^T

with every product exact in f64: the kernels' approximations (Q8_1 activations, bf16
caches, f32 sums) are what a comparison against it measures. With `q8`, the projections
named there read their input as the kernels do - quantised to Q8_1 (ggml's blocks of 32,
ember.reference.q4k.quantize_q8_1) and back - and with `kv_bf16` the new k and v rows are
rounded to bf16 as a bf16 cache stores them, so that what is left is the kernels' own f32
rounding."""

from __future__ import annotations

import numpy as np

from .attention import decode_attention
from .rmsnorm import rmsnorm
from .rope import rope


def layer_step(w: dict, h, k_cache, v_cache, positions, heads: int, kv_heads: int, eps: float, base: float,
               neox: bool = False, q8: tuple = (), kv_bf16: bool = False) -> tuple:
    """w: the layer's weights in f64 (attn_norm, ffn_norm [hidden]; wq, wk, wv, wo, w_gate,
    w_up, w_down [rows, cols] dequantised); h [B, hidden]; caches [B, S, HKV, D] (not
    changed); positions [B]; q8: the weights whose input is read as Q8_1. Returns (h after
    the layer, k_cache, v_cache) in f64."""
    from .q4k import dequantize_q8_1, quantize_q8_1

    def proj(x, name):
        if name in q8:
            x = dequantize_q8_1(quantize_q8_1(np.asarray(x, np.float32))).reshape(x.shape)
        return x @ w[name].T
    h = np.asarray(h, np.float64)
    batch, hidden = h.shape
    d = hidden // heads
    kc, vc = np.array(k_cache, np.float64), np.array(v_cache, np.float64)
    x = rmsnorm(h, w["attn_norm"], eps)
    q = proj(x, "wq").reshape(batch, heads, d)
    k = proj(x, "wk").reshape(batch, kv_heads, d)
    v = proj(x, "wv").reshape(batch, kv_heads, d)
    positions = np.asarray(positions)
    q, k = rope(q, positions, base, neox), rope(k, positions, base, neox)
    if kv_bf16:
        from .gemm import bf16_values
        k, v = bf16_values(k), bf16_values(v)
    for b, p in enumerate(positions):
        kc[b, p], vc[b, p] = k[b], v[b]
    o = decode_attention(q[:, None], kc, vc, positions + 1).reshape(batch, hidden)
    h = h + proj(o, "wo")
    x = rmsnorm(h, w["ffn_norm"], eps)
    gate, up = proj(x, "w_gate"), proj(x, "w_up")
    h = h + proj(gate / (1.0 + np.exp(-gate)) * up, "w_down")
    return h, kc, vc


def cosine(got, ref) -> float:
    g = np.asarray(got, np.float64).ravel()
    r = np.asarray(ref, np.float64).ravel()
    return float(g @ r / (np.linalg.norm(g) * np.linalg.norm(r)))
